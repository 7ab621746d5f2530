"""Scenario building blocks shared by the Claude Code and Codex tests.

Secret markers live only inside skill bodies. The fake model's subagent
answers ``BRIEFED`` when every expected marker is in its own request,
``UNBRIEFED`` when none is, ``PARTIAL`` otherwise: it never looks at the prompt.
"""
import json
import uuid
from pathlib import Path

from fakes import block_text, spawn, spawn_agent, wait_agent
from framing import rebuild

BRIEFED, UNBRIEFED, PARTIAL = "VERDICT-BRIEFED", "VERDICT-UNBRIEFED", "VERDICT-PARTIAL"


def marker(label):
    """A secret marker: unique per call, never in any prompt, only inside skill bodies."""
    return "SECRET-%s-%s" % (label.upper(), uuid.uuid4().hex[:16].upper())


class Skill:
    """A skill whose body carries a start and an end marker."""

    def __init__(self, name, size=0, description=None):
        self.name = name
        self.start = marker(name + "-start")
        self.end = marker(name + "-end")
        filler = ""
        if size:
            line = "Rule %s: keep the %s checklist exact; never paraphrase it.\n"
            chunks, n = [], 0
            while sum(len(c) for c in chunks) < size:
                n += 1
                chunks.append(line % (n, name))
            filler = "".join(chunks)
        self.body = "# %s\n\nFirst line: %s\n\n%s\nLast line: %s\n" % (name, self.start, filler, self.end)
        self.description = description or "Use when the %s skill is needed." % name

    @property
    def markers(self):
        return (self.start, self.end)

    def md(self):
        return "---\nname: %s\ndescription: %s\n---\n%s" % (self.name, self.description, self.body)

    @property
    def frontmatter_line(self):
        return "description: %s" % self.description


def private_skill(label):
    """A skill for a private folder (issue 29) whose name and description are as unique as its
    markers, so that a request holding any of them shows where it leaked."""
    return Skill("%s-%s" % (label, uuid.uuid4().hex[:8]), description="Use for %s." % marker(label + "-desc"))


def leaks(requests, skills):
    """What of ``skills`` (name, description, body markers) any of ``requests`` contains."""
    return sorted({t for r in requests for s in skills for t in (s.name, s.description) + s.markers
                   if t in r.all_text})


def assert_private(skills, declaring, control, main, every, shown=()):
    """Issue 29's "never leaked", checked the same way in every CLI.

    The ``declaring`` agent's requests hold every name and body line of the private
    ``skills``; the ``control`` agent's and the ``main`` agent's requests nothing of them
    (but the names in ``shown``: what a harness's own view of the project files shows);
    and no request of ``every`` holds a description, which only the frontmatter has.
    """
    assert leaks(declaring, skills) == sorted(t for s in skills for t in (s.name,) + s.markers)
    assert leaks(control, skills) == sorted(shown)
    assert leaks(main, skills) == sorted(shown)
    assert not [r for r in every for s in skills if s.description in r.all_text]


def grouped(requests, key):
    """{key(request): [requests]}, in order: one agent's or thread's requests together."""
    out = {}
    for request in requests:
        out.setdefault(key(request), []).append(request)
    return out


def verdict(request_text, markers):
    seen = [m for m in markers if m in request_text]
    if markers and len(seen) == len(markers):
        return BRIEFED
    return PARTIAL if seen else UNBRIEFED


def fm_free(skills):
    """Strings that only occur in the skills' frontmatter (must never be in a briefing)."""
    return ["name: %s\ndescription:" % s.name for s in skills]


# --------------------------------------------------------------------------
# Claude Code: spawn each type in turn, synchronously, then finish.
# --------------------------------------------------------------------------

def claude_spawner(types, markers):
    def script(r):
        if not r.has_tools:
            return "ok"
        if r.is_subagent:
            return "Report: " + verdict(r.all_text, markers)
        done = sum(1 for m in r.messages if m.get("role") == "user" and isinstance(m.get("content"), list)
                   for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
        if done < len(types):
            return [spawn(types[done], prompt="Do the e2e task #%d and report." % (done + 1))]
        return "All done."
    return script


def claude_sequence(calls, markers):
    """The main agent makes ``calls`` (tool_use blocks: a Bash cd, spawns...) one per turn, then
    finishes; every subagent reports whether it sees ``markers``."""
    def script(r):
        if not r.has_tools:
            return "ok"
        if r.is_subagent:
            return "Report: " + verdict(r.all_text, markers)
        done = len(tool_results(r))
        if done < len(calls):
            return [calls[done]]
        return "All done."
    return script


def claude_main_only(markers):
    """For ``--agent`` sessions: the main agent itself reports whether it sees the markers."""
    def script(r):
        return "Report: " + verdict(r.all_text, markers)
    return script


def tool_results(request):
    """Every tool_result block of a Claude request, in order."""
    out = []
    for m in request.messages:
        if m.get("role") == "user" and isinstance(m.get("content"), list):
            out.extend(b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result")
    return out


# --------------------------------------------------------------------------
# Codex: spawn_agent, wait_agent on it, next spawn..., then finish.
# --------------------------------------------------------------------------

def claude_denial(server, why="the spawn was refused"):
    """The text Claude Code hands the parent model for a spawn the guard denied.

    No subagent request reached the model server, and the main agent's second
    request ends with an error tool_result: the guard's reason (facts/claude-code.md §3.4).
    """
    assert server.subagent_requests() == [], "the subagent started although %s" % why
    mains = [r for r in server.main_requests() if r.has_tools]
    assert len(mains) >= 2, mains
    denial = tool_results(mains[1])[-1]
    assert denial.get("is_error") is True, denial
    return block_text(denial.get("content"))


def codex_spawner(roles, markers, max_waits=6, prelude=()):
    """Make the ``prelude`` calls (e.g. a shell ``cd``) first; then spawn each role in turn and wait
    on it (again, if the wait timed out) before the next."""
    def script(r):
        if r.is_subagent:
            return "Report: " + verdict(r.all_text, markers)
        calls = r.calls()
        outputs = r.outputs()
        spawned = sum(1 for c in calls if c.get("name") == "spawn_agent")
        if not spawned and len(calls) < len(prelude):
            return [prelude[len(calls)]]
        if calls:
            last = calls[-1]
            out = outputs.get(last["call_id"]) or ""
            agent_id = None
            if last.get("name") == "spawn_agent":
                try:
                    agent_id = json.loads(out)["agent_id"]
                except (ValueError, KeyError, TypeError):
                    agent_id = None  # denied or failed: move on
            elif last.get("name") == "wait_agent" and '"completed"' not in out:
                waits = sum(1 for c in calls if c.get("name") == "wait_agent")
                targets = json.loads(last.get("arguments") or "{}").get("targets") or []
                if targets and waits < max_waits:
                    agent_id = targets[0]
            if agent_id:
                return [wait_agent([agent_id], timeout_ms=60000)]
        if spawned < len(roles):
            return [spawn_agent(roles[spawned], message="Do the e2e task #%d and report." % (spawned + 1))]
        return "All done."
    return script


def codex_outputs(request, name):
    """Outputs (strings) of the ``name`` calls replayed in a Codex request, in order."""
    outputs = request.outputs()
    return [outputs.get(c["call_id"]) for c in request.calls() if c.get("name") == name]


def helper_marketplace(root, skill):
    """A local marketplace (Claude and Codex layouts) with one plugin ``helper`` shipping ``skill``."""
    root = Path(root)
    files = {
        ".claude-plugin/marketplace.json": json.dumps({
            "name": "helper-mkt", "owner": {"name": "e2e"},
            "plugins": [{"name": "helper", "source": "./plugins/helper", "description": "e2e helper",
                         "version": "1.0.0"}]}),
        ".agents/plugins/marketplace.json": json.dumps({
            "name": "helper-mkt", "interface": {"displayName": "helper"},
            "plugins": [{"name": "helper", "source": {"source": "local", "path": "./plugins/helper"},
                         "policy": {"installation": "AVAILABLE", "authentication": "ON_INSTALL"},
                         "category": "Productivity"}]}),
        "plugins/helper/.claude-plugin/plugin.json": json.dumps({
            "name": "helper", "version": "1.0.0", "description": "e2e helper plugin"}),
        "plugins/helper/.codex-plugin/plugin.json": json.dumps({
            "name": "helper", "version": "1.0.0", "description": "e2e helper plugin", "skills": "./skills/"}),
        "plugins/helper/skills/%s/SKILL.md" % skill.name: skill.md(),
    }
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    return root


def ok(result):
    """A CLI run that exited 0 within its timeout."""
    assert result.rc == 0 and not result.timed_out, result
    return result


def markers_of(skills):
    return [m for s in skills for m in s.markers]


def assert_briefing(parts, agent, skills, dirs=None, part_limit=None):
    """Rebuild the parts (any order) and check every body arrived whole, and nothing else.

    ``dirs`` maps skill names to the folder each must be framed with;
    ``part_limit`` is the most characters one part may have (Claude Code's cap).
    """
    rebuilt = rebuild(parts)
    assert not rebuilt.aborted, parts
    assert rebuilt.agent == agent
    # A plugin skill may be labelled "plugin:skill"; compare by the bare skill name.
    bodies = {name.split(":")[-1]: body for name, body in rebuilt.skills.items()}
    assert len(bodies) == len(rebuilt.skills)
    assert bodies == {s.name: s.body for s in skills}, "bodies not delivered whole"
    for part in parts:
        if part_limit is not None:
            assert len(part) <= part_limit, "a part exceeds the per-output limit"
        for frontmatter in fm_free(skills):
            assert frontmatter not in part, "frontmatter leaked into the briefing"
    for name, expected in (dirs or {}).items():
        assert Path(rebuilt.dirs[name]).resolve() == Path(expected).resolve()
    return rebuilt
