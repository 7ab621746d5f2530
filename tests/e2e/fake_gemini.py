"""A scripted fake Gemini API for the end-to-end suite (stdlib only).

Gemini CLI 0.61.0 calls ``POST /v1beta/models/{model}:streamGenerateContent?alt=sse``
with a ``generateContent`` request (``contents``, ``systemInstruction``,
``tools[].functionDeclarations``) and reads SSE chunks of
``GenerateContentResponse`` (facts/gemini-cli.md §21). The server listens on
127.0.0.1 only; ``script(request) -> reply`` decides from the request alone,
and every request is kept in ``server.log``.

A subagent's requests are told apart by their tools: a subagent must end by
calling ``complete_task`` (§24), and only it is offered that tool; the main
agent is offered ``invoke_agent``.
"""
import json

from fakes import FakeServer, Logged


class GeminiRequest(Logged):
    @property
    def contents(self):
        return (self.body or {}).get("contents") or []

    @property
    def tool_names(self):
        names = []
        for tool in (self.body or {}).get("tools") or []:
            for declaration in tool.get("functionDeclarations") or []:
                names.append(declaration.get("name"))
        return names

    @property
    def is_subagent(self):
        return "complete_task" in self.tool_names

    def first_text(self):
        """The text of the first user message: a subagent's is the spawn's prompt (§13)."""
        for content in self.contents:
            if content.get("role") == "user":
                return "".join(p.get("text", "") for p in content.get("parts") or [] if isinstance(p, dict))
        return ""

    def calls(self):
        """functionCall parts the model made earlier in this conversation, in order."""
        return [p["functionCall"] for c in self.contents for p in c.get("parts") or []
                if isinstance(p, dict) and "functionCall" in p]

    def responses(self):
        """functionResponse parts in this conversation, in order: {name, response}."""
        return [p["functionResponse"] for c in self.contents for p in c.get("parts") or []
                if isinstance(p, dict) and "functionResponse" in p]


def say(text):
    return {"text": text}


def call(name, args):
    return {"functionCall": {"name": name, "args": args}}


def invoke_agent(agent_name, prompt):
    return call("invoke_agent", {"agent_name": agent_name, "prompt": prompt})


def complete_task(result):
    return call("complete_task", {"result": result})


class FakeGemini(FakeServer):
    """``script(request)`` returns a list of parts (``say()``/``call()``) or a str."""

    request_class = GeminiRequest

    def accepts(self, path):
        path = path.split("?")[0]
        return path.startswith("/v1beta/models/") and path.endswith(
            (":streamGenerateContent", ":generateContent", ":countTokens"))

    def respond(self, request):
        if request.path.split("?")[0].endswith(":countTokens"):
            return json.dumps({"totalTokens": 15}).encode("utf-8")
        parts = self.script(request)
        if isinstance(parts, str):
            parts = [say(parts)]
        chunk = {"candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP",
                                 "index": 0}],
                 "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
                 "modelVersion": "gemini-2.5-flash"}
        if request.path.split("?")[0].endswith(":generateContent"):
            return json.dumps(chunk).encode("utf-8")
        return ("data: %s\r\n\r\n" % json.dumps(chunk)).encode("utf-8")

    def main_requests(self):
        return [r for r in self.log if not r.is_subagent]

    def subagent_requests(self):
        return [r for r in self.log if r.is_subagent]
