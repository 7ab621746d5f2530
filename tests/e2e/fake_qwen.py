"""A scripted fake OpenAI chat-completions API for Qwen Code (stdlib only).

Qwen Code 0.24.4 with ``security.auth.selectedType: openai`` calls
``POST $OPENAI_BASE_URL/chat/completions`` (streamed, or not for a summary) and
reads ``chat.completion.chunk`` events (facts/qwen-code.md, the probe's fake
server). The server listens on 127.0.0.1 only; ``script(request) -> reply``
decides from the request alone, and every request is kept in ``server.log``.

A reply is ``say(text)`` or ``call(name, arguments)``; ``usage`` sets the
prompt tokens it reports (a large count makes Qwen Code compact the agent).
"""
import json
import time

from fakes import FakeServer, Logged, _new_id


class ChatRequest(Logged):
    @property
    def messages(self):
        return (self.body or {}).get("messages") or []

    def texts(self, role):
        return [message_text(m) for m in self.messages if m.get("role") == role]

    @property
    def system(self):
        return "\n".join(self.texts("system"))

    @property
    def tool_names(self):
        return [(t.get("function") or t).get("name") for t in (self.body or {}).get("tools") or []]

    def tool_results(self):
        return [message_text(m) for m in self.messages if m.get("role") == "tool"]

    @property
    def is_summary(self):
        """Qwen Code's compaction request: no tools, and a system prompt asking for a summary."""
        return not self.tool_names and "summar" in self.system.lower()


def unescaped(text):
    """A hook context as the hook printed it: Qwen Code 0.24.4 writes every ``<`` and ``>`` of an
    additionalContext as ``&lt;`` and ``&gt;`` (DefaultHookOutput.getAdditionalContext), and
    nothing else ("&" stays), so these two are all there is to undo."""
    return text.replace("&lt;", "<").replace("&gt;", ">")


def message_text(message):
    content = message.get("content")
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return content if isinstance(content, str) else ""


def say(text, usage=100):
    return {"text": text, "usage": usage}


def call(name, arguments, usage=100):
    return {"call": {"name": name, "arguments": json.dumps(arguments)}, "usage": usage}


class FakeQwen(FakeServer):
    """OpenAI chat completions, as Qwen Code's openai auth type speaks it."""

    request_class = ChatRequest

    def accepts(self, path):
        return path.rstrip("/").endswith("/chat/completions")

    def expected_other(self, entry):
        return entry.method == "GET"  # a models listing, refused: Qwen Code goes on with OPENAI_MODEL

    def content_type(self, request):
        return "text/event-stream" if (request.body or {}).get("stream") else "application/json"

    def respond(self, request):
        reply = self.script(request)
        model = (request.body or {}).get("model", "fake-model")
        usage = {"prompt_tokens": reply["usage"], "completion_tokens": 10, "total_tokens": reply["usage"] + 10}
        if "call" in reply:
            message = {"role": "assistant", "content": None, "tool_calls": [
                {"id": _new_id("call"), "type": "function", "function": reply["call"]}]}
            finish = "tool_calls"
        else:
            message = {"role": "assistant", "content": reply["text"]}
            finish = "stop"
        base = {"id": _new_id("chatcmpl"), "created": int(time.time()), "model": model}
        if not (request.body or {}).get("stream"):
            return json.dumps(dict(base, object="chat.completion", usage=usage, choices=[
                {"index": 0, "message": message, "finish_reason": finish}])).encode("utf-8")
        base["object"] = "chat.completion.chunk"
        if "call" in reply:
            first = dict(message, tool_calls=[dict(message["tool_calls"][0], index=0,
                                                   function={"name": reply["call"]["name"], "arguments": ""})])
            deltas = [first, {"tool_calls": [{"index": 0, "function": {"arguments": reply["call"]["arguments"]}}]}]
        else:
            deltas = [message]
        chunks = [dict(base, choices=[{"index": 0, "delta": d, "finish_reason": None}]) for d in deltas]
        chunks.append(dict(base, choices=[{"index": 0, "delta": {}, "finish_reason": finish}], usage=usage))
        return b"".join(b"data: " + json.dumps(c).encode("utf-8") + b"\n\n" for c in chunks) + b"data: [DONE]\n\n"

    def subagent_requests(self, name=None):
        """A subagent's requests: its task, in a user message, says ``TASK-FOR:<name>``."""
        mark = "TASK-FOR:%s" % (name or "")
        return [r for r in self.log if not r.is_summary and any(mark in t for t in r.texts("user"))]

    def main_requests(self):
        """The main agent's: neither a subagent's nor a summary, nor a compacted subagent's resumption."""
        return [r for r in self.log if not r.is_summary and r not in self.subagent_requests()
                and not any("state_snapshot" in t for t in r.texts("user"))]
