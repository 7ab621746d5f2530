"""A scripted fake of the OpenAI chat-completions API (SSE), for OpenCode and Kilo.

Both CLIs reach it through the ``@ai-sdk/openai-compatible`` provider that
``OPENCODE_CONFIG_CONTENT`` (``KILO_CONFIG_CONTENT``) declares, at
``POST /v1/chat/completions``. Every request of a session carries
``x-session-id``; a subagent's model turns also carry ``x-parent-session-id``,
its compaction request does not (shared/facts/opencode.md).
"""
import json
import time

from fakes import FakeServer, MessagesRequest, _new_id, block_text


class ChatRequest(MessagesRequest):
    @property
    def session(self):
        return self.headers.get("x-session-id")

    @property
    def parent(self):
        return self.headers.get("x-parent-session-id")

    def texts(self, role):
        """The text of every ``role`` message, in order (a list content joined)."""
        return [block_text(m.get("content")) for m in self.messages if m.get("role") == role]

    def tool_results(self):
        return self.texts("tool")

    @property
    def system(self):
        return "\n".join(self.texts("system"))


def say(text):
    return {"text": text}


def tool_call(name, arguments, prompt_tokens=100):
    return {"tool": name, "arguments": json.dumps(arguments), "prompt_tokens": prompt_tokens}


def task(agent, prompt="Do the task and report.", description="e2e delegation"):
    return tool_call("task", {"subagent_type": agent, "description": description, "prompt": prompt})


def body_keys(value):
    """Every key of every object in a request body, at any depth."""
    keys = set()
    if isinstance(value, dict):
        for key, item in value.items():
            keys.add(key)
            keys |= body_keys(item)
    elif isinstance(value, list):
        for item in value:
            keys |= body_keys(item)
    return keys


class FakeChat(FakeServer):
    """``script(request)`` returns ``say(text)`` or ``tool_call(...)`` (or a str)."""

    request_class = ChatRequest

    def accepts(self, path):
        return path.split("?")[0] == "/v1/chat/completions"

    def respond(self, request):
        reply = self.script(request)
        if isinstance(reply, str):
            reply = say(reply)
        cid, model = _new_id("chatcmpl"), (request.body or {}).get("model", "fake-model")
        base = {"id": cid, "object": "chat.completion.chunk", "created": int(time.time()), "model": model}
        chunks = []
        if "tool" in reply:
            chunks.append({"index": 0, "delta": {"role": "assistant", "content": None, "tool_calls": [
                {"index": 0, "id": _new_id("call"), "type": "function",
                 "function": {"name": reply["tool"], "arguments": ""}}]}, "finish_reason": None})
            chunks.append({"index": 0, "delta": {"tool_calls": [
                {"index": 0, "function": {"arguments": reply["arguments"]}}]}, "finish_reason": None})
            finish, prompt_tokens = "tool_calls", reply["prompt_tokens"]
        else:
            chunks.append({"index": 0, "delta": {"role": "assistant", "content": reply["text"]},
                           "finish_reason": None})
            finish, prompt_tokens = "stop", 100
        chunks.append({"index": 0, "delta": {}, "finish_reason": finish})
        out = [dict(base, choices=[c]) for c in chunks]
        out.append(dict(base, choices=[], usage={"prompt_tokens": prompt_tokens, "completion_tokens": 10,
                                                 "total_tokens": prompt_tokens + 10}))
        return b"".join(b"data: " + json.dumps(o).encode("utf-8") + b"\n\n" for o in out) + b"data: [DONE]\n\n"

    def children(self):
        """The subagents' model turns (their summarizer requests carry no parent header)."""
        return [r for r in self.log if r.parent]
