"""bench/run's rows for Factory Droid's spawn path (issue 46), and Claude Code's share of it.

Droid runs the plugin's hooks/hooks.json with ``${CLAUDE_PLUGIN_ROOT}`` and ``${DROID_PLUGIN_ROOT}``
both replaced by the plugin's folder in the command string, and both variables set to the
placeholder ``/PLUGIN_ROOT_NOT_EXPANDED_ERROR`` in the environment, beside DROID_PROJECT_DIR,
FACTORY_PROJECT_DIR and CLAUDE_PROJECT_DIR (docs/factory-droid.md; facts/factory-droid.md §2).
A spawn there runs two events, each timed here as its own row against the floor:

  guard   the parent's PreToolUse on ``Task`` for a declaring droid: lets it through with the
          briefing, every declared skill body whole, in front of its prompt (``updatedInput``).
  set     the sub-droid's SessionStart, all 8 handlers together (the wall time Droid waits):
          part 1 reads the payload and stops at its calling_session_id; parts 2..8 exit; all
          shells, no interpreter, nothing printed.

The guard runs one interpreter (goal <= DROID_GOAL x the floor), the set none (goal <= SHELL_GOAL);
the "spawn" row runs the two one after another: the whole spawn path, one interpreter, goal <=
DROID_GOAL. Two more rows time the PostToolUse handler on a sub-droid's LS: before any compaction
(the shell reads the transcript's first line and finds no compaction: no interpreter, goal <=
SHELL_GOAL), and after a compaction that removed the prompt (the briefing again: one interpreter,
goal <= DROID_GOAL). Verifiers check the outputs, and run the commands once with a ``python3`` on PATH that
leaves a mark, so that "one interpreter" and "no interpreter" are checked, not inferred from the time.

Imported by bench/run, which hands in its Row class and helpers; standard library only.
"""
import json
import os
import subprocess

DROID_GOAL = 1.25
# A shell that exits: well under the interpreter it no longer starts.
SHELL_GOAL = 0.5
ROOT_VAR = "${DROID_PLUGIN_ROOT}"
NOT_EXPANDED = "/PLUGIN_ROOT_NOT_EXPANDED_ERROR"
PARENT = "1278700a-ec8b-4a71-b6c9-e18075b6a951"  # a main session's id, as Droid writes them
CHILD = "88cdb7ba-6cf2-4589-aee4-2cb2e635a6d2"  # its sub-droid's
DROID = "briefed"
TASK = "TASK-FOR:briefed report your verdict"


def sub_droid_transcript(folder, compacted):
    """A sub-droid's transcript as Droid writes it (compact JSON): its first line, the reminders, the
    Task prompt with a briefing's opening, an LS call; ``compacted``: then a compaction that removed
    everything up to that call's result (tests/test_briefing_droid.py builds the same)."""
    def line(record):
        return json.dumps(record, separators=(",", ":")) + "\n"
    prompt = ("# Task Tool Invocation\n\nSubagent type: %s\nTask description: d\n\n## Task\n"
              "---BEGIN TASK FROM PARENT AGENT---\n<briefing agent=\"%s\" part=\"1/1\" seal=\"00\">\n"
              "</briefing seal=\"00\">\n\n%s\n---END TASK FROM PARENT AGENT---" % (DROID, DROID, TASK))
    text = line({"type": "session_start", "id": CHILD, "callingSessionId": PARENT, "callingToolUseId": "toolu_1"})
    text += line({"type": "message", "id": "context-1", "message": {"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>\nAvailable skills\n</system-reminder>"}]}})
    text += line({"type": "message", "id": "m-task", "message": {"role": "user", "content": [
        {"type": "text", "text": prompt}]}})
    text += line({"type": "message", "id": "m-c1", "message": {"role": "assistant", "content": [
        {"type": "tool_use", "id": "c1", "name": "LS", "input": {}}]}})
    text += line({"type": "message", "id": "m-r1", "message": {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "c1", "is_error": False, "content": "x"}]}})
    if compacted:
        text += line({"type": "compaction_state", "id": "cs", "removedCount": 4,
                      "anchorMessage": {"id": "m-r1", "index": 3}})
    path = os.path.join(folder, "%s-%s.jsonl" % (CHILD, "compacted" if compacted else "fresh"))
    put(path, text)
    return path


def machine(sc, repo, want):
    """Droid's side of the typical machine: .factory/droids and .factory/skills in the project (the
    typical skills' bodies); the sessions folder the payloads name."""
    project = sc.project
    for name, body in want.items():
        put(os.path.join(project, ".factory", "skills", name, "SKILL.md"),
            "---\nname: %s\ndescription: Use when the %s skill is needed.\n---\n%s" % (name, name, body))
    for name, skills in ((DROID, sorted(want)), ("control", None), ("writer", None)):
        decl = "briefing:\n  skills: [%s]\n" % ", ".join(skills) if skills else ""
        put(os.path.join(project, ".factory", "droids", name + ".md"),
            "---\nname: %s\ndescription: Droid %s.\nmodel: inherit\n%s---\nYou are %s.\n" % (name, name, decl, name))
    folder = os.path.join(sc.home, ".factory", "sessions", project.replace("/", "-"))
    os.makedirs(folder, exist_ok=True)
    return folder


def put(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def payloads(sc, folder):
    """The two payloads, in the shapes of payloads/droid/SAMPLES.json."""
    common = {"cwd": sc.project, "permission_mode": "auto-high"}
    guard = dict(common, session_id=PARENT, transcript_path=os.path.join(folder, PARENT + ".jsonl"),
                 hook_event_name="PreToolUse", tool_name="Task",
                 tool_input={"subagent_type": DROID, "description": "e2e delegation",
                             "prompt": TASK, "await": True})
    child = dict(common, session_id=CHILD, transcript_path=os.path.join(folder, CHILD + ".jsonl"))
    start = dict(child, hook_event_name="SessionStart", source="startup", calling_session_id=PARENT,
                 CLAUDE_ENV_FILE=os.path.join(sc.home, ".factory", "temp", "env", "droid-env-%s.sh" % CHILD))
    return guard, start


def rows(Row, base_env, make_verifier, handlers, hooks_json, sc, repo, bindir, stdin_dir, framing):
    """[Row]: Droid's guard, the sub-droid's SessionStart set, and the two as one spawn."""
    want = next(t[3] for t in sc.targets if t[0] == "hit" and t[1] == "claude")
    folder = machine(sc, repo, want)
    env = base_env(bindir, sc, "claude", repo)
    env.update(CLAUDE_PLUGIN_ROOT=NOT_EXPANDED, DROID_PLUGIN_ROOT=NOT_EXPANDED, DROID_PROJECT_DIR=sc.project,
               FACTORY_PROJECT_DIR=sc.project, CLAUDE_PROJECT_DIR=sc.project)
    stub = stub_interpreter(stdin_dir)

    def droid_cmds(event, match):  # Droid substitutes both variables in the command string
        cmds = [c.replace(ROOT_VAR, repo) for c in handlers(hooks_json, event, match, repo)]
        return cmds or [":"]  # no handler: a row to time all the same, failed by its count of interpreters

    quiet = make_verifier("guard", DROID, {}, framing)  # exit 0, no traceback, prints nothing
    briefed = guard_verifier(make_verifier("set", DROID, want, framing))
    out, stages = [], []
    events = (("guard", "PreToolUse", "Task", briefed, [1], DROID_GOAL),
              ("set", "SessionStart", "startup", quiet, [0] * 8, SHELL_GOAL))
    for (event, hook_event, match, check, started, goal), data in zip(events, payloads(sc, folder)):
        cmds = droid_cmds(hook_event, match)
        stdin = os.path.join(stdin_dir, "typical-droid-%s.json" % event)
        with open(stdin, "w") as f:
            json.dump(data, f)
        verify = counted(check, cmds, started, env, sc.project, stdin, stub)
        row = Row("typical/droid/%s/hit" % event, "typical droid %s hit (%s)" % (event, DROID), cmds, env,
                  sc.project, stdin, "hook", sc.name, event, verify)
        row.goal = goal
        out.append(row)
        stages.append((cmds, stdin, verify))
    spawn = Row("typical/droid/spawn/hit", "typical droid spawn hit (guard, then the sub-droid's start)",
                [c for cmds, _, _ in stages for c in cmds], env, sc.project, stages[0][1], "hook", sc.name,
                "spawn", staged_verifier(stages))
    spawn.stages = [cmds for cmds, _, _ in stages]
    spawn.stdin_paths = [path for cmds, path, _ in stages for _ in cmds]
    spawn.goal = DROID_GOAL  # the whole spawn path: one interpreter
    out.append(spawn)
    # A sub-droid's tool call of the kinds hooks.json's PostToolUse matcher names (LS, Execute, Create).
    cmds = droid_cmds("PostToolUse", "LS")
    for compacted, check, started, goal in ((False, quiet, [0], SHELL_GOAL),
                                            (True, make_verifier("set", DROID, want, framing), [1], DROID_GOAL)):
        kind = "after-compaction" if compacted else "tool-call"
        stdin = os.path.join(stdin_dir, "typical-droid-%s.json" % kind)
        with open(stdin, "w") as f:
            json.dump({"session_id": CHILD, "transcript_path": sub_droid_transcript(folder, compacted),
                       "cwd": sc.project, "permission_mode": "auto-high", "hook_event_name": "PostToolUse",
                       "tool_name": "LS", "tool_input": {}, "tool_response": "x"}, f, separators=(",", ":"))
        row = Row("typical/droid/%s/hit" % kind, "typical droid %s hit (%s: LS, %s)" % (
            kind, DROID, "the briefing again" if compacted else "no compaction yet"), cmds, env, sc.project,
            stdin, "hook", sc.name, kind, counted(check, cmds, started, env, sc.project, stdin, stub))
        row.goal = goal
        out.append(row)
    return out


def guard_verifier(briefing_check):
    """The guard's output for a declaring droid: ``updatedInput`` whose prompt is the briefing, a
    blank line, then the task as the parent model wrote it; the briefing is checked as a
    SubagentStart context would be (``briefing_check``: bench/run's verifier, every body whole)."""
    def verify(outs, errs, statuses):
        problems, contexts = [], []
        for text in outs:
            try:
                data = json.loads(text) if text.strip() else {}
            except ValueError:
                data = {}
            prompt = ((data.get("hookSpecificOutput") or {}).get("updatedInput") or {}).get("prompt")
            if not isinstance(prompt, str) or not prompt.endswith("\n\n" + TASK):
                problems.append("the guard did not pass the task on behind a briefing: %r" % text[:160])
                continue
            contexts.append(json.dumps({"hookSpecificOutput": {"additionalContext": prompt[:-len(TASK) - 2]}}))
        return problems + briefing_check(contexts, errs, statuses)
    return verify


def stub_interpreter(folder):
    """A folder whose ``python3`` appends a line to a mark file and exits 0; (folder, mark)."""
    bin_dir = os.path.join(folder, "droid-stub-bin")
    mark = os.path.join(bin_dir, "started")
    put(os.path.join(bin_dir, "python3"), "#!/bin/sh\necho x >> '%s'\nexit 0\n" % mark)
    os.chmod(os.path.join(bin_dir, "python3"), 0o755)
    return bin_dir, mark


def interpreters(cmd, env, cwd, stdin, stub):
    """How many times ``cmd`` starts ``python3``: run once with the stub first on PATH."""
    bin_dir, mark = stub
    if os.path.exists(mark):
        os.unlink(mark)
    with open(stdin, "rb") as f:
        subprocess.run(["/bin/sh", "-c", cmd], stdin=f, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       cwd=cwd, env=dict(env, PATH=bin_dir + os.pathsep + env["PATH"]))
    if not os.path.exists(mark):
        return 0
    with open(mark) as f:
        return len(f.read().split())


def counted(check, cmds, started, env, cwd, stdin, stub):
    """``check``, and each handler starts the number of interpreters in ``started`` (run once more,
    with the stub): a handler that is a shell must start none, a hook exactly one."""
    def verify(outs, errs, statuses):
        problems = check(outs, errs, statuses)
        got = [interpreters(c, env, cwd, stdin, stub) for c in cmds]
        if got != started:
            problems.append("interpreters started per handler: %r, want %r" % (got, started))
        return problems
    return verify


def staged_verifier(stages):
    """A spawn row's outputs, stage by stage, each through its own row's verifier."""
    def verify(outs, errs, statuses):
        problems, at = [], 0
        for cmds, _, check in stages:
            n = len(cmds)
            problems += check(outs[at:at + n], errs[at:at + n], statuses[at:at + n])
            at += n
        return problems
    return verify
