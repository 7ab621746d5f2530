"""Making a real CLI compact an agent, offline (recipes: shared/facts/compaction.md).

Each fake model server here reports the usage a script asks for: a script sets
``request.usage = N`` on the request it answers, and that reply then says the
prompt held N tokens, which makes the CLI compact that agent's thread before
its next request. Everything else is the ordinary fake of ``fakes.py``.
"""
import json
import threading

from copilot_runner import FakeCopilotModel
from fakes import FakeAnthropic, FakeOpenAI

BIG = object()  # placeholder: each fake knows which usage compacts under its CLI's recipe


class _Usage:
    """Mixed in before a fake server: its replies report the usage the script set.

    ``reported``: (what the reply says, what it says instead for a usage N, what N is offset by)."""

    default_big = None
    reported = ((b'"input_tokens": 10', b'"input_tokens": %d', 0),)

    def respond(self, request):
        out = super().respond(request)
        usage = getattr(request, "usage", None)
        usage = self.default_big if usage is BIG else usage
        if not usage:
            return out
        for old, new, offset in self.reported:
            out = out.replace(old, new % (usage + offset), 1)
        return out


class UsageAnthropic(_Usage, FakeAnthropic):
    """Claude Code: 970,000 input tokens compact the thread (1M window, effective 980,000)."""

    default_big = 970000


class UsageCopilot(_Usage, FakeCopilotModel):
    """Copilot CLI: with a 64,000-token prompt limit, 150,000 reported tokens compact (in the background)."""

    default_big = 150000


class UsageOpenAI(_Usage, FakeOpenAI):
    """Codex: with model_auto_compact_token_limit = 100000, 200,000 input tokens compact mid-turn."""

    default_big = 200000
    reported = ((b'"input_tokens": 10,', b'"input_tokens": %d,', 0), (b'"total_tokens": 15', b'"total_tokens": %d', 5))


class Counter:
    """A thread-safe count of the calls a script has answered, per key (an agent's thread)."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts = {}

    def next(self, key):
        with self._lock:
            self._counts[key] = self._counts.get(key, 0) + 1
            return self._counts[key]


def count_in(request, markers):
    """How many times each marker occurs in a request's body text."""
    text = request.all_text
    return {m: text.count(m) for m in markers}


def exactly_once(request, markers):
    counts = count_in(request, markers)
    return bool(markers) and all(n == 1 for n in counts.values())


def none_of(request, markers):
    return not any(m in request.all_text for m in markers)


def codex_compacting_config(config_text, limit=100000):
    """A Codex config.toml with ``model_auto_compact_token_limit`` at the top level."""
    return "model_auto_compact_token_limit = %d\n" % limit + config_text


def is_codex_summarizer(request):
    """Codex's local compaction request: its last input item asks for a CONTEXT CHECKPOINT."""
    return bool(request.input) and "CONTEXT CHECKPOINT COMPACTION" in json.dumps(request.input[-1])


def is_claude_summarizer(request):
    """Claude Code's summarization fork: its last user block asks for TEXT ONLY and a <summary>."""
    last = request.last_turn()
    return bool(last) and "CRITICAL: Respond with TEXT ONLY" in json.dumps(last.get("content"))
