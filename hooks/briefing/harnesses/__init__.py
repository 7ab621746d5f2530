"""The harnesses: the registry, and what detection needs to know of each one.

Everything that differs for a harness lives in its own module here
(``claude``, ``codex``, ``copilot``, ``gemini``, ``qwen``, ``opencode`` and ``kilo``), as one
``Harness`` called
``HARNESS`` plus the discovery it names: its project, agents, skills, native
preload, hooks-file checks. Nothing outside these modules branches on which
harness it is.

Detection has to weigh every harness before it knows which one sent a payload,
so the few facts it reads (a ``Record``) are written here, one per harness,
and a harness's module is imported only when that harness is needed: a
Claude Code spawn never loads the discovery of Codex, Copilot CLI or Gemini CLI.

Adding a harness: write ``harnesses/<key>.py`` with its ``HARNESS``, and add its
``Record`` to ``RECORDS`` below. Nothing else changes.
"""
import os

from ..constants import PARTS


class Record(object):
    """What detection reads of a harness, without importing its module.

    key             short name: ``--harness KEY``, ``Agent.harness``, JSON output, module name
    label           the name people know it by
    spawn_tools     the guard's tool names -> the ``tool_input`` field that names the agent
    payload_keys    payload keys only this harness sends (the strongest detection signal)
    env_markers     variables this harness sets for its hooks, and that no other harness sets
    mimics          keys of harnesses whose env_markers this harness sets too, for compatibility:
                    where both are marked, this one sent the payload
    never_sends     payload keys this harness never sends: a payload with one is not its own
    transcript_root (machine) -> the folder its transcripts live under
    transcript_mark a path fragment of its transcripts, for when the root does not match
    unnamed_event   (payload) -> the event of a payload without ``hook_event_name``, or None
    """

    FIELDS = dict(payload_keys=(), env_markers=(), mimics=(), never_sends=(),
                  transcript_root=lambda machine: None, transcript_mark=None, unnamed_event=None)

    def __init__(self, key, label, spawn_tools, **fields):
        self.key, self.label, self.spawn_tools = key, label, spawn_tools
        self._fill(self.FIELDS, fields)

    def _fill(self, defaults, fields):
        """Every field of ``defaults``, as given in ``fields`` or by default; no other."""
        unknown = set(fields) - set(defaults)
        if unknown:
            raise TypeError("%s: unknown field(s) %s" % (self.key, ", ".join(sorted(unknown))))
        self.__dict__.update(defaults)
        self.__dict__.update(fields)


class Harness(Record):
    """Everything that differs between harnesses, for one harness: its Record, and

    find_project    (machine) -> the Project: the one answer to "where is the project" for
                    this harness
    find_agent      (machine, name) -> the Agent that wins ``name``, or None
    all_agents      (machine) -> (Agent, None) or (None, (path, why)) per declaring agent
    resolve_skill   (machine, name, source) -> Skill, searched where the harness searches
    skill_places    (name) -> where a skill of that name would be looked for, in words
    skill_roots     (machine) -> [(origin, folder)] of the folders it finds skills in, whose entries
                    are the candidates of a near miss (near.near_skills), or None
    preloads_native the harness preloads the agent's own ``skills:`` field itself
    native_skip     (machine, Skill) -> why the harness will skip that resolved native entry
                    although it exists (briefing then delivers it), or None: it preloads it
                    (default: it preloads every one)
    render_skill    (machine, Skill) -> the body as the harness itself delivers a skill (a
                    substitution.Rendering: its text, or why a hook cannot deliver it so), or
                    None: as written (default)
    flat_context    a context is the top-level ``additionalContext``, not ``hookSpecificOutput``
    session_agents  sessions can run as an agent (``claude --agent NAME``)
    part_budget     characters of one hook output, or None: part 1 carries everything
    whole_limit     bytes of skill text deliverable whole when part_budget is None
    output_limit    bytes of one hook's stdout the harness reads whole, or None (no cap): a briefing
                    whose output, as printed (JSON, non-ASCII escaped), is longer is refused
    hooks_check     (plugin root) -> the doctor's check of the hooks file this harness reads
    trust_check     (machine) -> the doctor's check that the harness runs the hooks at all, or None
    loads_scope     (machine, scope) -> whether the harness loads the configuration of that
                    scope ("project", "user") in this session; briefing reads its own rules
                    files of a scope only then (default: always; Claude Code: --setting-sources)
    session_check   (machine) -> the doctor's check of what the running session loads (Claude
                    Code: --setting-sources, programmatic agents), or None; ``shown`` in it
                    makes the text report print it even when ok
    deny            (reason) -> the guard's refusal in this harness's shape, or None for
                    PreToolUse's ``permissionDecision: deny``
    guard_context   the guard's output for a spawn it lets through carries the briefing (or
                    nothing), as SubagentStart would print it: the OpenCode/Kilo plugin keeps it
                    for the child session, one hook process per spawn
    brief_field     the spawn tool's field the briefing goes in front of, where the guard is
                    also the delivery (Gemini CLI, Droid: ``prompt``); None: the guard never
                    changes the call, and the briefing arrives at SubagentStart
    input_output    (event, arguments) -> the guard's output that passes a spawn's rewritten
                    arguments on, or None: Gemini CLI's shape (``tool_input``, which replaces them)
    preflight_warns the pre-flight lists this harness's warnings too, not only its failures
    builtin_agents  names of the agents the harness ships, which have no file (rules brief them)
    builtin_name    (machine, name) -> the built-in the harness runs for a name no file answers, spelt
                    as in builtin_agents (Qwen Code matches them case-blind, Claude Code a folded
                    spelling), or the name as written (default)
    default_agent   the agent a spawn without a name starts, or None
    agent_names     (machine) -> the name of every agent file, declaring or not (the doctor
                    shows which of them a rule applies to), or None: the declaring ones only
    compacted       (machine, payload, name) -> whether the harness's own records show that the
                    agent of a tool-call or prompt payload was compacted after its briefing was
                    last delivered (then the hook delivers it again), or None: no such records,
                    a compacted agent gets its briefing back some other way or not at all
    session_agent   (machine, payload) -> the agent a session runs as, where no payload names
                    it (``copilot --agent NAME``: its command line; a Droid sub-droid's tool call:
                    its transcript's Task prompt), or None
    redelivery      when an agent receives its briefing in this harness, in words (the doctor)
    shows_path      (machine, path) -> how the harness names that project path to every agent
                    (a private skill's folder in a view of the project's files), or None
    unreachable     (machine, agent) -> why no hook can put a briefing into that agent before its
                    first turn, with what to change, or None (default): the spawn of an agent
                    briefing would brief is then refused (Qwen Code: no ``${hook_context}``)
    installed_check (machine) -> the doctor's ``installed`` check: is briefing installed and enabled
                    where this harness loads it from, and can that copy work (briefing.installed)
    in_use          (machine) -> whether this machine runs the harness at all: the doctor's and an
                    unknown harness's pre-flight leave one out that does not (default: every one)
    sub_session     (payload) -> whether a SessionStart payload is a spawned session's own (a Droid
                    sub-droid, briefed by its spawn's arguments): no pre-flight, nothing (default: never)
    agent_hint      (machine) -> where the harness looks for agents, when this project keeps agents
                    where it does not (Kilo and .opencode/), or None: the doctor says it beside
                    an unknown agent and an empty table
    unused_why      (machine) -> why ``in_use`` left it out, in words (the doctor says so)
    loads_file      (machine, agent, path, session) -> why the harness itself already puts that
                    project file into this agent's context (briefing then does not deliver it
                    again), or None (default: it loads none); measured per harness, docs/files.md
    loaded_skills   (machine, payload) -> a loaded.Found: the skills the payload's agent loaded while
                    it worked, as the harness's records show them, when this payload is the moment to
                    give them back after a compaction; or None (docs/loaded-skills.md). None as the
                    field (default): the harness keeps them itself, or no hook can.
    loaded_payloads (machine, session id or None) -> [(who, payload)]: one payload per agent of that
                    session (None: the newest) for ``loaded_skills``, as at its next compaction; the
                    doctor's ``--loaded`` shows what each would get back
    loaded_sources  the SessionStart ``source`` values at which ``loaded_skills`` is asked (default
                    ``("compact",)``; Qwen Code also ``"resume"``: a resumed session that compacted
                    before starts from the compacted history)
    """

    FIELDS = dict(preloads_native=False, session_agents=False, part_budget=None, whole_limit=None, output_limit=None,
                  hooks_check=None, trust_check=None, session_check=None, installed_check=None,
                  sub_session=lambda payload: False, input_output=None,
                  skill_roots=None, agent_hint=lambda machine: None,
                  loads_scope=lambda machine, scope: True, native_skip=lambda machine, skill: None,
                  render_skill=lambda machine, skill: None,
                  flat_context=False, deny=None, brief_field=None, guard_context=False, preflight_warns=False,
                  builtin_agents=frozenset(), builtin_name=lambda machine, name: name, default_agent=None, agent_names=None,
                  compacted=None, session_agent=None, redelivery="at spawn",
                  loads_file=lambda machine, agent, path, session: None,
                  unreachable=lambda machine, agent: None, in_use=lambda machine: True,
                  unused_why=lambda machine: "not in use on this machine",
                  shows_path=lambda machine, path: None, loaded_skills=None,
                  loaded_payloads=None, loaded_sources=("compact",))

    def __init__(self, record, find_project, find_agent, all_agents, resolve_skill, skill_places,
                 **fields):
        self.__dict__.update(record.__dict__)
        self.find_project, self.find_agent, self.all_agents = find_project, find_agent, all_agents
        self.resolve_skill, self.skill_places = resolve_skill, skill_places
        self._fill(self.FIELDS, fields)
        self.builtin_agents = frozenset(self.builtin_agents)

    def capacity(self, agent_name, skills):
        """Bytes of skill text this harness takes whole for this agent (a lower bound when split)."""
        if self.part_budget is None:
            return self.whole_limit
        from ..rendering import split_capacity
        return split_capacity(agent_name, skills, self.part_budget)

    def delivery(self):
        """How a briefing travels, in words, for messages."""
        if self.brief_field is not None:
            return "in front of the spawn's %s" % self.brief_field
        if self.part_budget is None:
            return "one context"
        return "%d hook outputs of at most %d characters" % (PARTS, self.part_budget)

    def render(self, agent_name, skills):
        from ..rendering import render_parts
        return render_parts(agent_name, skills, self.part_budget)

    def context_output(self, event, text):
        """A hook output that puts ``text`` into the agent's context."""
        if self.flat_context:
            return {"additionalContext": text}
        return {"hookSpecificOutput": {"hookEventName": event, "additionalContext": text}}

    def rewrite_output(self, event, arguments):
        """The guard's output that lets a spawn through with ``arguments`` (``brief_field``)."""
        if self.input_output is not None:
            return self.input_output(event, arguments)
        return {"hookSpecificOutput": {"hookEventName": event, "tool_input": arguments}}

    def deny_output(self, reason):
        """The guard's refusal of a spawn."""
        if self.deny is not None:
            return self.deny(reason)
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                       "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}}


def copilot_event(payload):
    """Copilot CLI's Claude-format SubagentStart payload has no hook_event_name (fact 13)."""
    if isinstance(payload.get("agent_type"), str) and "agentName" in payload and "toolName" not in payload:
        return "SubagentStart"
    return None


def qwen_dir(machine):
    """Qwen Code's own folder: ``$QWEN_HOME`` (``~`` expanded), else ``~/.qwen`` (getGlobalQwenDir)."""
    env_dir = machine.env.get("QWEN_HOME")
    if env_dir:
        if env_dir == "~" or env_dir.startswith("~/"):
            env_dir = os.path.join(machine.home, env_dir[2:])
        return os.path.abspath(env_dir)
    return os.path.join(machine.home, ".qwen")


# Order matters only for detection: when a payload carries no key unique to one
# harness, the environment markers are tried in this order.
RECORDS = (
    Record(
        "claude", "Claude Code",
        # Claude Code calls its spawn tool Agent (Task in older versions).
        spawn_tools={"Agent": "subagent_type", "Task": "subagent_type"},
        # Claude Code sets CLAUDE_PROJECT_DIR for every hook (claude-code.md 3.7); Codex sets no
        # such variable, and inside Claude Code's own Bash tool it is empty, so a Codex started
        # from there does not inherit it.
        env_markers=("CLAUDE_PROJECT_DIR",),
        transcript_root=lambda machine: machine.claude_dir,
        transcript_mark="/.claude/projects/"),
    Record(
        "codex", "Codex",
        spawn_tools={"spawn_agent": "agent_type", "collaborationspawn_agent": "agent_type"},
        # Codex puts turn_id into its spawn events' payloads; Claude Code never sends
        # one (claude-code.md 3.1). (Codex's "model" is not used: other harnesses send
        # a model too.)
        payload_keys=("turn_id",),
        transcript_root=lambda machine: machine.codex_home,
        transcript_mark="/.codex/sessions/"),
    Record(
        "copilot", "Copilot CLI",
        # The delegation tool is task; a Claude-format hooks file sees it as Agent, and the agent
        # is named in agent_type, not subagent_type (copilot-cli.md facts 1, 13).
        spawn_tools={"Agent": "agent_type", "task": "agent_type"},
        # Its SubagentStart payload is camelCase plus agent_id/agent_type/parent_agent_id, with no
        # hook_event_name (fact 13); no other harness sends these keys.
        payload_keys=("agentName", "sessionId", "parent_agent_id"),
        # Set for every Copilot hook (fact 17), along with CLAUDE_PROJECT_DIR and CLAUDE_PLUGIN_ROOT
        # for Claude Code plugins: where both are set, Copilot ran the hook.
        env_markers=("COPILOT_CLI",), mimics=("claude",),
        # Its Claude-format payloads never carry transcript_path (fact 13): a payload with one comes
        # from a Claude Code or Codex that merely inherited COPILOT_CLI from a Copilot shell.
        never_sends=("transcript_path",),
        unnamed_event=copilot_event),
    Record(
        "gemini", "Gemini CLI",
        # One spawn tool for every agent; its matcher must be anchored, because Gemini CLI
        # tests it as an unanchored regex (facts/gemini-cli.md §4, §8).
        spawn_tools={"invoke_agent": "agent_name"},
        # Set for every Gemini CLI hook, and by no other harness; Gemini CLI also sets
        # CLAUDE_PROJECT_DIR "for compatibility", which must not make it Claude Code (§10).
        env_markers=("GEMINI_SESSION_ID",), mimics=("claude",),
        transcript_root=lambda machine: machine.gemini_dir,
        transcript_mark="/.gemini/tmp/"),
    Record(
        "qwen", "Qwen Code",
        # Its spawn tool is agent (a Claude-style matcher "Agent" fires for it too, but the payload
        # says "agent"), naming the agent in subagent_type (facts/qwen-code.md §1).
        spawn_tools={"agent": "subagent_type"},
        # Set for hooks only (its shell tool sets QWEN_CODE_* but not this); Qwen Code also sets
        # CLAUDE_PROJECT_DIR and GEMINI_PROJECT_DIR, which must not make it Claude Code (§1).
        env_markers=("QWEN_PROJECT_DIR",), mimics=("claude",),
        transcript_root=qwen_dir,
        transcript_mark="/.qwen/projects/"),
    # OpenCode and Kilo run no hook commands: briefing's plugin sends every payload, with a key
    # naming the CLI it runs in (docs/opencode.md). Their task tool names the agent in
    # subagent_type; Copilot's task tool is told apart by the sender.
    Record(
        "opencode", "OpenCode",
        spawn_tools={"task": "subagent_type"},
        payload_keys=("opencode_plugin",)),
    Record(
        "kilo", "Kilo",
        spawn_tools={"task": "subagent_type"},
        payload_keys=("kilo_plugin",)),
    Record(
        "droid", "Droid",
        # Factory Droid's spawn tool is Task, naming the droid in subagent_type (factory-droid.md 3c).
        spawn_tools={"Task": "subagent_type"},
        # Only a sub-droid's SessionStart carries calling_session_id (3d). Droid sets
        # DROID_PROJECT_DIR and FACTORY_PROJECT_DIR for every hook, and CLAUDE_PROJECT_DIR too,
        # which must not make it Claude Code (2).
        payload_keys=("calling_session_id",),
        env_markers=("DROID_PROJECT_DIR", "FACTORY_PROJECT_DIR"), mimics=("claude",),
        transcript_root=lambda machine: os.path.join(machine.home, ".factory", "sessions"),
        transcript_mark="/.factory/sessions/"),
)


class Registry(object):
    """The harnesses by key, in RECORDS order; a harness's module is imported on first use.

    ``records()`` answers detection without importing any harness; ``[key]``,
    ``values()`` and ``items()`` import the modules they return.
    """

    def __init__(self, records):
        self._records = dict((record.key, record) for record in records)
        self._loaded = {}

    def records(self):
        return list(self._records.values())

    def record(self, key):
        return self._records[key]

    def __getitem__(self, key):
        harness = self._loaded.get(key)
        if harness is None:
            if key not in self._records:
                raise KeyError(key)
            module = __import__("%s.%s" % (__name__, key), fromlist=["HARNESS"])
            harness = self._loaded[key] = module.HARNESS
        return harness

    def __contains__(self, key):
        return key in self._records

    def __iter__(self):
        return iter(self._records)

    def __len__(self):
        return len(self._records)

    def keys(self):
        return list(self._records)

    def values(self):
        return [self[key] for key in self._records]

    def items(self):
        return [(key, self[key]) for key in self._records]


HARNESSES = Registry(RECORDS)
