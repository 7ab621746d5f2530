"""Scripted fake model servers for the end-to-end suite (stdlib only).

Two loopback servers, each on 127.0.0.1 with an ephemeral port and one thread
per connection:

* ``FakeAnthropic`` serves ``POST /v1/messages`` (Anthropic Messages API, SSE)
  for Claude Code;
* ``FakeOpenAI`` serves ``POST /v1/responses`` (OpenAI Responses API, SSE) for
  Codex, and doubles as the HTTP proxy that refuses every outbound CONNECT
  with 403 (Codex's curated-plugin sync tries to reach the internet).

Each server is scripted by a Python callable ``script(request) -> reply``; the
callable decides from the request alone (main agent or subagent, whether a
secret marker is in the request, whether the last turn holds a tool result).
Every request, with its headers and parsed body, is kept in ``server.log`` so
that a test can assert on exactly what each model request carried.
"""
import itertools
import json
import re
import threading
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

_ids = itertools.count(1)


def _new_id(prefix):
    return "%s_%024d" % (prefix, next(_ids))


def _slices(text, size):
    return [text[i:i + size] for i in range(0, len(text), size)] or [""]


def _sse(event, data):
    data = dict(data)
    data.setdefault("type", event)
    return ("event: %s\ndata: %s\n\n" % (event, json.dumps(data))).encode("utf-8")


class Logged:
    """One request as the fake server received it."""

    def __init__(self, method, path, headers, raw):
        self.method = method
        self.path = path
        self.headers = {k.lower(): v for k, v in headers.items()}
        self.raw = raw.decode("utf-8", "replace")
        try:
            self.body = json.loads(self.raw) if self.raw else None
        except ValueError:
            self.body = None

    def contains(self, needle):
        """True when ``needle`` occurs anywhere in the request body (decoded JSON text)."""
        return needle in self.all_text

    @property
    def all_text(self):
        if not hasattr(self, "_all_text"):
            parts = []
            _collect_strings(self.body, parts)
            self._all_text = "\n".join(parts)
        return self._all_text

    def __repr__(self):
        return "<%s %s %s>" % (type(self).__name__, self.method, self.path)


def _collect_strings(value, out):
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, dict):
        for v in value.values():
            _collect_strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _collect_strings(v, out)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True


class FakeServer:
    """Base: a threaded loopback HTTP server calling ``self.handle(request)``."""

    request_class = Logged

    def __init__(self, script):
        self.script = script
        self.log = []  # every model request, in arrival order
        self.other = []  # anything else (proxy CONNECTs, unknown paths)
        self.errors = []  # exceptions raised by the script
        self._lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _read(self):
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    return self.rfile.read(length)
                if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
                    chunks = []
                    while True:
                        size = int(self.rfile.readline().strip().split(b";")[0], 16)
                        if size == 0:
                            self.rfile.readline()
                            break
                        chunks.append(self.rfile.read(size))
                        self.rfile.readline()
                    return b"".join(chunks)
                return b""

            def _refuse(self):
                entry = Logged(self.command, self.path, self.headers, b"")
                with fake._lock:
                    fake.other.append(entry)
                self.send_response(403, "Forbidden by the e2e fake")
                self.send_header("Content-Length", "0")
                self.send_header("Connection", "close")
                self.end_headers()
                self.close_connection = True

            def do_CONNECT(self):
                self._refuse()

            def do_GET(self):
                self._refuse()

            def do_HEAD(self):
                self._refuse()

            def do_POST(self):
                raw = self._read()
                if not fake.accepts(self.path):
                    entry = Logged(self.command, self.path, self.headers, raw)
                    with fake._lock:
                        fake.other.append(entry)
                    self.send_response(404)
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                request = fake.request_class(self.command, self.path, self.headers, raw)
                with fake._lock:
                    request.index = len(fake.log)
                    fake.log.append(request)
                try:
                    payload = fake.respond(request)
                except Exception:  # a broken script must fail the test, not hang the CLI
                    with fake._lock:
                        fake.errors.append(traceback.format_exc())
                    body = json.dumps({"type": "error", "error": {
                        "type": "invalid_request_error", "message": "fake script failed"}}).encode()
                    self.send_response(400)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(body)))
                    self.end_headers()
                    self.wfile.write(body)
                    return
                self.send_response(200)
                self.send_header("Content-Type", fake.content_type(request))
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self.port = self._httpd.server_address[1]
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        self._thread.start()
        return self

    def stop(self):
        self._httpd.shutdown()
        self._httpd.server_close()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    def accepts(self, path):
        raise NotImplementedError

    def content_type(self, request):
        """The Content-Type of the reply to ``request``: a stream of server-sent events by default."""
        return "text/event-stream"

    def expected_other(self, entry):
        """Whether ``entry``, a request that was not a model request, is one this server expects."""
        return False

    def dump(self, path):
        """Write every logged request (headers and body) to ``path`` as JSON lines, for post-mortems."""
        with open(str(path), "w", encoding="utf-8") as out:
            for entry in self.log + self.other:
                out.write(json.dumps({"method": entry.method, "path": entry.path, "headers": entry.headers,
                                      "body": entry.body if entry.body is not None else entry.raw}) + "\n")

    def respond(self, request):
        raise NotImplementedError


# --------------------------------------------------------------------------
# Anthropic Messages API (Claude Code)
# --------------------------------------------------------------------------

HOOK_PREFIX = "%s hook additional context: "


class MessagesRequest(Logged):
    """A request whose body holds ``messages`` and ``tools`` (Anthropic's, and chat completions)."""

    @property
    def messages(self):
        return (self.body or {}).get("messages") or []

    @property
    def has_tools(self):
        return bool((self.body or {}).get("tools"))


class AnthropicRequest(MessagesRequest):
    @property
    def is_subagent(self):
        return "x-claude-code-agent-id" in self.headers

    @property
    def agent_id(self):
        return self.headers.get("x-claude-code-agent-id")

    def message_text(self, index):
        """All text of messages[index] (content given as a string or as blocks)."""
        if index >= len(self.messages):
            return ""
        return block_text(self.messages[index].get("content"))

    def last_turn(self):
        """The last message that is not role "system"."""
        for message in reversed(self.messages):
            if message.get("role") != "system":
                return message
        return None

    @property
    def last_tool_result(self):
        """The last non-system message's tool_result block, or None."""
        last = self.last_turn()
        if not last or last.get("role") != "user" or not isinstance(last.get("content"), list):
            return None
        for block in last["content"]:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return block
        return None

    def hook_context(self, event):
        """The text one ``<event> hook additional context: `` prefix introduces in messages[1].

        Returns everything after the prefix up to the end of that text block
        (the hook outputs joined by "\\n", then "\\n\\n" and the environment
        block); use ``briefing_parts`` to cut it into the hook's parts.
        """
        prefix = HOOK_PREFIX % event
        for message in self.messages[:3]:
            if message.get("role") != "system":
                continue
            content = message.get("content")
            blocks = [content] if isinstance(content, str) else [
                b.get("text", "") for b in content or [] if isinstance(b, dict)]
            for text in blocks:
                at = text.find(prefix)
                if at >= 0:
                    return text[at + len(prefix):]
        return None


def block_text(content):
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    out = []
    for block in content:
        if isinstance(block, dict):
            if block.get("type") == "text":
                out.append(block.get("text", ""))
            elif block.get("type") == "tool_result":
                out.append(block_text(block.get("content")))
        elif isinstance(block, str):
            out.append(block)
    return "\n".join(out)


_OPEN_LINE = re.compile(r'^<briefing [^\n]*?seal="(?P<seal>[0-9a-f]+)"[^\n]*>$', re.M)
_ABORT_LINE = re.compile(r'^<briefing [^\n]*status="abort"', re.M)


def briefing_parts(text):
    """Cut a joined hook-context text back into the briefing's parts.

    Claude Code joins several handlers' outputs with "\\n" in the order they
    finish; each part starts with a ``<briefing `` line and ends with its
    ``</briefing seal="…">`` line. Text outside the parts (other hooks, the
    environment block that follows) is dropped.
    """
    if not text:
        return []
    starts = [m.start() for m in re.finditer(r"^<briefing ", text, re.M)]
    parts = []
    for n, start in enumerate(starts):
        end = starts[n + 1] if n + 1 < len(starts) else len(text)
        piece = text[start:end]
        head = _OPEN_LINE.match(piece)
        if head:
            close = '</briefing seal="%s">' % head.group("seal")
            stop = piece.find(close)
            if stop >= 0:
                piece = piece[:stop + len(close)]
        elif _ABORT_LINE.match(piece):
            stop = piece.find("</briefing")
            if stop >= 0:
                piece = piece[:piece.find(">", stop) + 1]
        else:
            piece = piece.split("\n\n", 1)[0]
        parts.append(piece)
    return parts


def text(value):
    return {"type": "text", "text": value}


def tool_use(name, input, id=None):
    return {"type": "tool_use", "id": id or _new_id("toolu"), "name": name, "input": input}


def spawn(subagent_type, prompt="Do the task and report.", description="e2e subagent"):
    """An ``Agent`` tool_use block that spawns ``subagent_type`` synchronously."""
    return tool_use("Agent", {"subagent_type": subagent_type, "description": description,
                              "prompt": prompt, "run_in_background": False})


def bash(command, description="run a command"):
    """A ``Bash`` tool_use block (a plain ``cd`` needs no approval in the default permission mode)."""
    return tool_use("Bash", {"command": command, "description": description})


class FakeAnthropic(FakeServer):
    """``script(request)`` returns a list of blocks (``text()``/``tool_use()``) or a str."""

    request_class = AnthropicRequest

    def accepts(self, path):
        return path.split("?")[0] == "/v1/messages"

    def respond(self, request):
        blocks = self.script(request)
        if isinstance(blocks, str):
            blocks = [text(blocks)]
        model = (request.body or {}).get("model") or "claude-fake"
        out = [_sse("message_start", {"message": {
            "id": _new_id("msg"), "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1, "cache_creation_input_tokens": 0,
                      "cache_read_input_tokens": 0}}}),
            _sse("ping", {})]
        stop = "end_turn"
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                out.append(_sse("content_block_start", {"index": i, "content_block": {"type": "text", "text": ""}}))
                for piece in _slices(block["text"], 2000):
                    out.append(_sse("content_block_delta", {"index": i, "delta": {"type": "text_delta", "text": piece}}))
            else:
                stop = "tool_use"
                out.append(_sse("content_block_start", {"index": i, "content_block": {
                    "type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}}))
                for piece in _slices(json.dumps(block["input"]), 64):
                    out.append(_sse("content_block_delta", {"index": i, "delta": {
                        "type": "input_json_delta", "partial_json": piece}}))
            out.append(_sse("content_block_stop", {"index": i}))
        out.append(_sse("message_delta", {"delta": {"stop_reason": stop, "stop_sequence": None},
                                          "usage": {"output_tokens": 5}}))
        out.append(_sse("message_stop", {}))
        return b"".join(out)

    def main_requests(self):
        return [r for r in self.log if not r.is_subagent]

    def subagent_requests(self):
        return [r for r in self.log if r.is_subagent]


# --------------------------------------------------------------------------
# OpenAI Responses API (Codex)
# --------------------------------------------------------------------------


class OpenAIRequest(Logged):
    @property
    def is_subagent(self):
        return self.headers.get("x-openai-subagent") == "collab_spawn"

    @property
    def thread_id(self):
        return self.headers.get("thread-id")

    @property
    def input(self):
        return (self.body or {}).get("input") or []

    def messages(self, role):
        """Texts of every ``role`` message in input, in order."""
        out = []
        for item in self.input:
            if item.get("type", "message") == "message" and item.get("role") == role:
                out.append(item_text(item))
        return out

    def outputs(self):
        """function_call_output items: {call_id: output string}."""
        return {item.get("call_id"): item.get("output") for item in self.input
                if item.get("type") == "function_call_output"}

    def calls(self):
        """function_call items in input, in order."""
        return [item for item in self.input if item.get("type") == "function_call"]

    def briefing_parts(self):
        """Hook contexts that are briefing parts: each arrives as its own developer message."""
        return [t for t in self.messages("developer") if t.startswith("<briefing ")]


def item_text(item):
    content = item.get("content")
    if isinstance(content, str):
        return content
    return "".join(part.get("text", "") for part in content or [] if isinstance(part, dict))


def say(value):
    return {"type": "message", "role": "assistant", "id": _new_id("msg"), "status": "completed",
            "content": [{"type": "output_text", "text": value, "annotations": []}]}


def call(name, arguments, namespace="multi_agent_v1", call_id=None):
    item = {"type": "function_call", "id": _new_id("fc"), "status": "completed",
            "call_id": call_id or _new_id("call"), "name": name, "arguments": json.dumps(arguments)}
    if namespace:
        item["namespace"] = namespace
    return item


def spawn_agent(agent_type, message="Do the task and report.", call_id=None):
    return call("spawn_agent", {"agent_type": agent_type, "message": message}, call_id=call_id)


def wait_agent(agent_ids, timeout_ms=30000):
    return call("wait_agent", {"targets": list(agent_ids), "timeout_ms": timeout_ms})


class FakeOpenAI(FakeServer):
    """``script(request)`` returns a list of items (``say()``/``call()``) or a str.

    Also an HTTP proxy: every CONNECT (and any proxied GET) is logged in
    ``other`` and refused with 403.
    """

    request_class = OpenAIRequest

    def accepts(self, path):
        return path.split("?")[0] == "/v1/responses"

    def expected_other(self, entry):
        # Anything else is an outbound attempt through the proxy (Codex's curated-plugin
        # sync), refused with 403.
        return entry.method == "CONNECT"

    def respond(self, request):
        items = self.script(request)
        if isinstance(items, str):
            items = [say(items)]
        rid = _new_id("resp")
        out = [_sse("response.created", {"response": {"id": rid, "status": "in_progress"}})]
        for k, item in enumerate(items):
            out.append(_sse("response.output_item.added", {"output_index": k, "item": item}))
            if item["type"] == "message":
                out.append(_sse("response.output_text.delta", {
                    "output_index": k, "item_id": item["id"], "content_index": 0,
                    "delta": item["content"][0]["text"]}))
            elif item["type"] == "function_call":
                out.append(_sse("response.function_call_arguments.delta", {
                    "output_index": k, "item_id": item["id"], "delta": item["arguments"]}))
            out.append(_sse("response.output_item.done", {"output_index": k, "item": item}))
        out.append(_sse("response.completed", {"response": {
            "id": rid, "status": "completed", "output": items,
            "usage": {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                      "output_tokens": 5, "output_tokens_details": {"reasoning_tokens": 0},
                      "total_tokens": 15}}}))
        return b"".join(out)

    def main_requests(self):
        return [r for r in self.log if not r.is_subagent]

    def subagent_requests(self):
        return [r for r in self.log if r.is_subagent]
