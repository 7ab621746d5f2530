"""Factory Droid: everything that differs for it (facts/factory-droid.md, docs/factory-droid.md;
measured on 0.225.2).

Droid installs the Claude Code plugin as it is (``droid plugin marketplace add``, ``droid plugin
install``) and runs its ``hooks/hooks.json``, but it has no SubagentStart: a custom droid
(``.factory/droids/*.md``, spawned through its ``Task`` tool) is a session of its own whose
hooks name no droid. So the guard (PreToolUse on ``Task``, in the parent) does both: it refuses a
droid whose declared skill is missing, and lets a declaring droid through with the briefing in
front of its Task prompt (``updatedInput``): one hook process per spawn, and the briefing travels
with the call that starts the droid, so nothing can change between the check and the delivery.

Compaction (measured in the binary and the e2e suite): Droid keeps the newest messages that fit
and summarizes the rest, removing at least the first message, which is Droid's own reminders,
not the prompt: the briefing stays with the task as long as the kept part reaches back to the
prompt (docs/factory-droid.md says where that ends).
"""
import os

from ..files import is_dir, is_file, is_inside, read_head, read_json, read_tail, shown_path, top_level_files
from . import HARNESSES, Harness
from ..lookup import declaring_md_agents, find_in_tree, first_usable, load_md_agent, named_skill_files
from ..names import split_plugin_name
from ..records import Project, Skill

# Droid passes a Task prompt of any size on whole (a 512 KiB briefing arrived whole in the e2e
# suite); the cap of the other one-context harnesses.
DROID_LIMIT = 512 * 1024

# Built-in sub-droid types, with no file (facts §6); a custom droid of the same name is not measured.
DROID_BUILTIN_AGENTS = frozenset(("worker", "explorer"))


def factory_dir(machine):
    return os.path.join(machine.home, ".factory")


def find_droid_project(machine):
    """Droid's project: the folder every hook gets as DROID_PROJECT_DIR (FACTORY_PROJECT_DIR too).

    Droid reads ``.factory/droids`` and ``.factory/skills`` of that folder (facts §6).
    """
    for variable in ("DROID_PROJECT_DIR", "FACTORY_PROJECT_DIR"):
        env_dir = machine.env.get(variable)
        if env_dir and os.path.isabs(env_dir) and is_dir(env_dir):
            folder = os.path.abspath(env_dir)
            return Project(folder, variable, "$%s, the folder Droid runs in (every hook gets it)" % variable,
                           [folder], ".factory/droids, .factory/skills and .agents/skills")
    return Project(machine.cwd, "cwd", "DROID_PROJECT_DIR is not set; the cwd, taken as the folder Droid runs in",
                   [machine.cwd], ".factory/droids, .factory/skills and .agents/skills")


def droid_plugins(machine):
    """Installed and enabled Droid plugins as [(name, root)]: ``~/.factory/plugins/installed_plugins/
    *.json`` (one per install, ``pluginId`` and ``entry.installPath``), enabled in
    ``enabledPlugins`` of the user's or the project's ``.factory/settings.json``."""
    if machine.state.get("droid_plugins") is not None:
        return machine.state["droid_plugins"]
    enabled = {}
    for settings in (os.path.join(factory_dir(machine), "settings.json"),
                     os.path.join(machine.project("droid").folder, ".factory", "settings.json")):
        data = read_json(settings) if is_file(settings) else None
        flags = data.get("enabledPlugins") if isinstance(data, dict) else None
        if isinstance(flags, dict):
            enabled.update((k, v) for k, v in flags.items() if isinstance(k, str))
    found = []
    for path in install_records(machine):
        data = read_json(path)
        if not isinstance(data, dict) or not isinstance(data.get("entry"), dict):
            continue
        plugin_id, root = data.get("pluginId"), data["entry"].get("installPath")
        if isinstance(plugin_id, str) and enabled.get(plugin_id) is True and isinstance(root, str) \
                and os.path.isabs(root):
            found.append((plugin_id.split("@", 1)[0], root))
    machine.state["droid_plugins"] = found
    return found


def install_records(machine, prefix=""):
    """The paths of ``~/.factory/plugins/installed_plugins/<prefix>*.json`` (one per install), sorted."""
    base = os.path.join(factory_dir(machine), "plugins", "installed_plugins")
    try:
        return sorted(e.path for e in os.scandir(base) if e.name.startswith(prefix) and e.name.endswith(".json"))
    except OSError:
        return []


def droid_agent_roots(machine):
    """Droid folders in the order in which the first wins: the project's, the personal ones, then
    each plugin's ``droids/`` (its ``agents/``, renamed at install). Top level only (facts §6)."""
    roots = [(None, os.path.join(machine.project("droid").folder, ".factory", "droids")),
             (None, os.path.join(factory_dir(machine), "droids"))]
    return roots + [(name, os.path.join(root, "droids")) for name, root in droid_plugins(machine)]


def load_droid(path, name):
    return load_md_agent(path, name, "droid")


def find_droid(machine, name):
    """The droid Droid would start for a Task's ``subagent_type``: the frontmatter ``name``
    (a file ``file-a.md`` named ``fm-name`` is ``fm-name``), project over personal (facts §6)."""
    if not isinstance(name, str) or not name or name in DROID_BUILTIN_AGENTS:
        return None
    for _, root in droid_agent_roots(machine):
        agent = find_in_tree(root, name, ".md", load_droid, walked=sorted(top_level_files(root, ".md")))
        if agent is not None:
            return agent
    return None


def all_droids(machine, every=False):
    roots = [(None, root, False) for _, root in droid_agent_roots(machine)]
    return declaring_md_agents("droid", roots, (".md",), (), DROID_BUILTIN_AGENTS, every=every)


def droid_skill_roots(machine):
    # Listed in Droid's "Available skills" (facts §6): the project's and the personal .factory and
    # .agents skills, at any depth, by frontmatter name; .claude/ is not read.
    project = machine.project("droid").folder
    return [("project", os.path.join(project, ".factory", "skills")),
            ("project", os.path.join(project, ".agents", "skills")),
            ("user", os.path.join(factory_dir(machine), "skills")),
            ("user", os.path.join(machine.home, ".agents", "skills"))]


def resolve_droid_skill(machine, name, source):
    plugin, skill = split_plugin_name(name)
    if skill is None:
        return Skill(name, source, problem="not a valid skill name")

    def candidates():
        if plugin is None:
            for origin, root in machine.live("droid", lambda: droid_skill_roots(machine)):
                for path in named_skill_files(machine, root, skill):
                    yield path, origin
        for plugin_name, root in droid_plugins(machine):
            if plugin is None or plugin_name == plugin:
                for path in named_skill_files(machine, os.path.join(root, "skills"), skill):
                    yield path, "plugin %s" % plugin_name

    return first_usable(name, source, candidates())


def droid_skill_places(skill):
    return ("a skill named %s (its frontmatter name) under .factory/skills/ or .agents/skills/ in the "
            "project, ~/.factory/skills/, ~/.agents/skills/, or an installed Droid plugin" % skill)


# -- the spawn's arguments -----------------------------------------------------

def droid_updated_input(event, arguments):
    """The guard lets a declaring droid's Task through with its prompt rewritten: Droid merges
    ``updatedInput`` into the call, and the sub-droid's first request carries the rewritten prompt,
    while the parent's transcript and later requests keep the original (facts 3g)."""
    return {"hookSpecificOutput": {"hookEventName": event, "updatedInput": arguments}}


# -- a sub-droid's compactions ---------------------------------------------------
#
# Droid keeps a sub-droid's newest messages that fit its budget and removes everything before them
# (docs/factory-droid.md): at a real compaction that is usually the Task prompt, and the briefing
# with it. No hook runs there; the sub-droid's next tool call of the kinds in hooks.json's
# PostToolUse matcher brings it back, as additionalContext, which Droid puts after that call's
# result. Whether the briefing is still in the history is read off the sub-droid's transcript:
# every history message is a line with its ``id``; a PostToolUse context is the hook's record
# (``hookToolCallId``), placed right after that call's ``tool_result`` line; a ``compaction_state``
# line's ``anchorMessage`` is the last message the compaction removed (read in the 0.225.2 binary).

# How much of a sub-droid's transcript is read: its head (the first line, Droid's reminders and
# the Task prompt with the briefing) and its newest bytes, together at most RECORD_BYTES.
HEAD_BYTES = 2 * 1024 * 1024
RECORD_BYTES = 32 * 1024 * 1024
# The prompt Droid renders for a sub-droid (facts §2): its header names the droid, and the task
# the parent model wrote starts after TASK_START, where the guard puts the briefing first.
TASK_HEADER = "# Task Tool Invocation\n\nSubagent type: "
TASK_START = "---BEGIN TASK FROM PARENT AGENT---\n"


def sub_droid_transcript(machine, payload):
    """The bytes of the transcript of the sub-droid a hook runs in, or None: a main session (its
    first line has no ``callingSessionId``), or a path outside Droid's sessions folder."""
    path = payload.get("transcript_path")
    sessions = os.path.join(factory_dir(machine), "sessions")
    if not isinstance(path, str) or "\0" in path or not is_inside(path, sessions):
        return None
    head = read_head(path, HEAD_BYTES)
    if not head or b'"callingSessionId":' not in head.split(b"\n", 1)[0]:
        return None
    return head_and_tail(path, head, RECORD_BYTES)


def head_and_tail(path, head, limit):
    """A record file's bytes, or for one longer than ``limit``, its ``head`` and then its newest
    bytes, ``limit`` in all (a line cut at the seam is not JSON, and is skipped); None: unreadable."""
    tail = read_tail(path, limit)
    if tail is None:
        return None
    return tail if len(tail) < limit else head[:limit // 2] + b"\n" + tail[min(len(head), limit // 2):]


def user_texts(record):
    message = record.get("message") if isinstance(record.get("message"), dict) else {}
    content = message.get("content") if message.get("role") == "user" else None
    return [b["text"] for b in content if isinstance(b, dict) and b.get("type") == "text"
            and isinstance(b.get("text"), str)] if isinstance(content, list) else []


def hook_contexts(record, event):
    """The additionalContext texts a hook record of ``event`` holds (its stdout, verbatim)."""
    from ..jsontext import parse_json
    message = record.get("message") if isinstance(record.get("message"), dict) else {}
    if message.get("hookEventName") != event:
        return []
    out = []
    for result in message.get("hookResults") or ():
        stdout = result.get("stdout") if isinstance(result, dict) else None
        try:
            data = parse_json(stdout) if isinstance(stdout, str) and stdout.startswith("{") else None
        except ValueError:
            data = None
        hso = data.get("hookSpecificOutput") if isinstance(data, dict) else None
        if isinstance(hso, dict) and isinstance(hso.get("additionalContext"), str):
            out.append(hso["additionalContext"])
    return out


def first_line_with(data, needle):
    """(offset, object) of the first JSON line of ``data`` holding ``needle``, or (None, None)."""
    from ..jsontext import json_lines_with
    return next(json_lines_with(data, needle), (None, None))


def history_place(data, start, record):
    """Where a message stands in the history Droid sends: its line, or for a hook's context (a
    record with ``hookToolCallId``), just after the line of that call's result."""
    message = record.get("message") if isinstance(record.get("message"), dict) else {}
    call = message.get("hookToolCallId")
    if not isinstance(call, str) or not call:
        return start
    result, _ = first_line_with(data, ('"tool_use_id":"%s"' % call).encode("utf-8"))
    return (start if result is None else result) + 0.5


def droid_timeline(data):
    """What a sub-droid's transcript says of its briefing: {"droid": the prompt's subagent type,
    "events": [("deliver", how, text, place) | ("compact", place of the last message removed)]}
    in the order Droid wrote them, where place is a position in the history (``history_place``)."""
    from ..jsontext import json_lines_with
    droid, events = None, []  # (offset of the line, event)
    for start, record in json_lines_with(data, b"# Task Tool Invocation"):
        text = next((t for t in user_texts(record) if t.startswith(TASK_HEADER)), None)
        if text is not None:
            droid = text[len(TASK_HEADER):].split("\n", 1)[0]
            task = text.find(TASK_START)
            if task >= 0 and text.startswith("<briefing agent=", task + len(TASK_START)):
                events.append((start, ("deliver", "Task prompt", text[task + len(TASK_START):], start)))
            break
    for start, record in json_lines_with(data, b"<briefing agent="):
        for text in hook_contexts(record, "PostToolUse"):
            if text.startswith("<briefing agent="):
                events.append((start, ("deliver", "PostToolUse", text, history_place(data, start, record))))
    for start, record in json_lines_with(data, b'"type":"compaction_state"'):
        anchor = record.get("anchorMessage") if isinstance(record.get("anchorMessage"), dict) else {}
        found, message = (first_line_with(data, ('{"type":"message","id":"%s"' % anchor["id"]).encode("utf-8"))
                          if isinstance(anchor.get("id"), str) else (None, None))
        # A last-removed message the records do not hold: take everything as removed.
        events.append((start, ("compact", float("inf") if found is None else history_place(data, found, message))))
    return {"droid": droid, "events": [event for _, event in sorted(events, key=lambda e: e[0])]}


def replay(events):
    """The timeline as the history lived it: ("deliver", how, text) for each delivery, and
    ("compact", None, the newest copy still there after it, or None) for each compaction."""
    held = []  # (place, text) of the copies in the history
    for event in events:
        if event[0] == "deliver":
            held.append((event[3], event[2]))
            yield event[:3]
        else:
            held = [(place, text) for place, text in held if place > event[1]]
            yield "compact", None, held[-1][1] if held else None


def sub_droid(machine, payload):
    """``droid_timeline`` of the sub-droid a hook runs in (read once per run), or None."""
    if "droid_timeline" not in machine.state:
        data = sub_droid_transcript(machine, payload)
        machine.state["droid_timeline"] = droid_timeline(data) if data else None
    return machine.state["droid_timeline"]


def droid_session_agent(machine, payload):
    """The droid a sub-droid runs as (its Task prompt's header), for a tool call inside it."""
    found = sub_droid(machine, payload) if payload.get("hook_event_name") == "PostToolUse" else None
    return found["droid"] if found else None


def droid_compacted(machine, payload, name):
    """Whether a compaction removed every copy of the sub-droid's briefing and none came since."""
    found = sub_droid(machine, payload)
    if not found or found["droid"] != name:
        return False
    steps = list(replay(found["events"]))
    # delivered once at least, and the newest step is a compaction that left no copy
    return any(step[0] == "deliver" for step in steps) and steps[-1][0] == "compact" and steps[-1][2] is None


# -- the hooks file, and the doctor --------------------------------------------

def droid_hooks_check(root):
    """hooks/hooks.json as Droid reads it: a PreToolUse handler whose matcher takes ``Task``, a
    SessionStart handler and a PostToolUse one on Droid's own tools, running the hook (Droid reads
    no other file)."""
    path = os.path.join(root, "hooks", "hooks.json")
    data = read_json(path)
    hooks = data.get("hooks") if isinstance(data, dict) else None
    if not isinstance(hooks, dict):
        return {"name": "hooks.json (Droid)", "status": "FAIL",
                "detail": "%s is missing or has no hooks: Droid runs no briefing hook" % shown_path(path)}

    def runs(event, matches=None):
        for group in hooks.get(event) or ():
            if not isinstance(group, dict):
                continue
            if matches and not matches(group.get("matcher")):
                continue
            for hook in group.get("hooks") or ():
                if isinstance(hook, dict) and "briefing-preload" in str(hook.get("command", "")):
                    return True
        return False

    missing = [what for what, ok in (
        ("a PreToolUse handler matching Task (the guard and the delivery)",
         runs("PreToolUse", lambda m: isinstance(m, str) and "Task" in m.split("|"))),
        ("a SessionStart handler (the pre-flight)", runs("SessionStart")),
        ("a PostToolUse handler matching LS, Execute and Create (the briefing again after a compaction)",
         runs("PostToolUse", lambda m: isinstance(m, str) and {"LS", "Execute", "Create"} <= set(m.split("|")))))
        if not ok]
    if missing:
        return {"name": "hooks.json (Droid)", "status": "FAIL",
                "detail": "%s lacks %s: Droid %s" % (shown_path(path), "; ".join(missing),
                                                     "spawns declaring droids unguarded or unbriefed")}
    return {"name": "hooks.json (Droid)", "status": "ok",
            "detail": "%s: guard and delivery on Task, the briefing again after a compaction" % shown_path(path)}


DROID_INSTALL = "droid plugin marketplace add %s && droid plugin install briefing@%s"


def droid_installed_check(machine):
    """The doctor's ``installed`` check: briefing installed as a Droid plugin and enabled."""
    from ..installed import checkout, judge_copy, not_installed, result  # the doctor's checks only
    folder = checkout()
    fix = DROID_INSTALL % (folder, os.path.basename(folder.rstrip("/")) or "briefing")
    for name, root in droid_plugins(machine):
        if name == "briefing":
            return judge_copy("droid", "Droid", root, droid_hooks_check, fix)
    records = install_records(machine, "briefing-")
    if records:
        # Droid 0.225.2 has no `plugin enable`: install again (it enables), or set enabledPlugins.
        ids = [data.get("pluginId") for data in map(read_json, records) if isinstance(data, dict)]
        plugin_id = next((i for i in ids if isinstance(i, str)), "briefing@<marketplace>")
        return result("droid", "WARN", "briefing is installed in Droid (%s) but not enabled for this project: "
                      "droid plugin install %s, or \"enabledPlugins\": {\"%s\": true} in ~/.factory/settings.json"
                      % (shown_path(records[0]), plugin_id, plugin_id))
    return not_installed("droid", "Droid", fix)


HARNESS = Harness(
    HARNESSES.record("droid"),
    find_project=find_droid_project,
    find_agent=find_droid,
    all_agents=all_droids,
    resolve_skill=resolve_droid_skill,
    skill_places=droid_skill_places,
    skill_roots=droid_skill_roots,
    part_budget=None, whole_limit=DROID_LIMIT,
    hooks_check=droid_hooks_check,
    installed_check=droid_installed_check,
    builtin_agents=DROID_BUILTIN_AGENTS,
    agent_names=lambda machine: [a for a, _ in all_droids(machine, every=True) if a],
    brief_field="prompt", input_output=droid_updated_input,
    session_agent=droid_session_agent, compacted=droid_compacted,
    # Only a sub-droid's SessionStart carries calling_session_id (facts 3d).
    sub_session=lambda payload: bool(payload.get("calling_session_id")),
    # Droid makes ~/.factory on its first run: without it, its built-ins are nobody's concern here.
    in_use=lambda machine: is_dir(factory_dir(machine)),
    unused_why=lambda machine: "%s does not exist (Droid makes it on its first run); --harness droid checks it "
                               "anyway" % shown_path(factory_dir(machine)),
    redelivery="at spawn, in front of the Task prompt; after a compaction that removed it, at the sub-droid's "
               "next LS, Execute or Create call (PostToolUse)")
