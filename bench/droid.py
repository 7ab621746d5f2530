"""bench/run's rows for Factory Droid's spawn path (issue 46), and Claude Code's share of it.

Droid runs the plugin's hooks/hooks.json with ``${CLAUDE_PLUGIN_ROOT}`` and ``${DROID_PLUGIN_ROOT}``
both replaced by the plugin's folder in the command string, and both variables set to the
placeholder ``/PLUGIN_ROOT_NOT_EXPANDED_ERROR`` in the environment, beside DROID_PROJECT_DIR,
FACTORY_PROJECT_DIR and CLAUDE_PROJECT_DIR (docs/factory-droid.md; facts/factory-droid.md §2).
A spawn there runs three events, each timed here as its own row against the floor:

  guard   the parent's PreToolUse on ``Task`` for a declaring droid: lets it through (prints nothing).
  set     the sub-droid's SessionStart, all 8 handlers together (the wall time Droid waits):
          part 1 prints the one-line note; parts 2..8 are shells that exit, no interpreter.
  prompt  the sub-droid's UserPromptSubmit: the briefing, every declared skill body whole, found
          through the captured e2e transcripts (tests/data/audit/droid: the parent holds the Task call).

Each runs one interpreter: goal <= DROID_GOAL x the floor. A "spawn" row runs the three one after
another (no goal: three interpreters). The Claude Code row is the same UserPromptSubmit handler as
Claude Code runs it (``${DROID_PLUGIN_ROOT}`` left to the shell, unset): one shell that exits.
Verifiers check the outputs, and run the commands once with a ``python3`` on PATH that leaves a
mark, so that "no interpreter" is checked, not inferred from the time.

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
NOTE = "briefing: this droid's declared skills follow in the next message."
RECORDS = os.path.join("tests", "data", "audit", "droid", "home", ".factory", "sessions", "@SLUG@")
PARENT = "1278700a-ec8b-4a71-b6c9-e18075b6a951"  # the e2e run's main session
CHILD = "88cdb7ba-6cf2-4589-aee4-2cb2e635a6d2"  # its sub-droid "briefed" (callingToolUseId ...0001)
DROID = "briefed"


def machine(sc, repo, want):
    """Droid's side of the typical machine: .factory/droids and .factory/skills in the project (the
    typical skills' bodies), and the e2e run's parent transcript with the sub-droid's first line."""
    project = sc.project
    for name, body in want.items():
        put(os.path.join(project, ".factory", "skills", name, "SKILL.md"),
            "---\nname: %s\ndescription: Use when the %s skill is needed.\n---\n%s" % (name, name, body))
    for name, skills in ((DROID, sorted(want)), ("control", None), ("writer", None)):
        decl = "briefing:\n  skills: [%s]\n" % ", ".join(skills) if skills else ""
        put(os.path.join(project, ".factory", "droids", name + ".md"),
            "---\nname: %s\ndescription: Droid %s.\nmodel: inherit\n%s---\nYou are %s.\n" % (name, name, decl, name))
    source = os.path.join(repo, RECORDS)
    folder = os.path.join(sc.home, ".factory", "sessions", project.replace("/", "-"))
    for session, whole in ((PARENT, True), (CHILD, False)):
        with open(os.path.join(source, session + ".jsonl"), encoding="utf-8") as f:
            text = f.read() if whole else f.readline()  # at its first prompt the sub-droid's file has begun
        put(os.path.join(folder, session + ".jsonl"), text.replace("@ROOT@/project", project))
    return folder


def put(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def payloads(sc, folder):
    """The three payloads, in the shapes of payloads/droid/SAMPLES.json."""
    common = {"cwd": sc.project, "permission_mode": "auto-high"}
    guard = dict(common, session_id=PARENT, transcript_path=os.path.join(folder, PARENT + ".jsonl"),
                 hook_event_name="PreToolUse", tool_name="Task",
                 tool_input={"subagent_type": DROID, "description": "e2e delegation",
                             "prompt": "TASK-FOR:briefed report your verdict", "await": True})
    child = dict(common, session_id=CHILD, transcript_path=os.path.join(folder, CHILD + ".jsonl"))
    start = dict(child, hook_event_name="SessionStart", source="startup", calling_session_id=PARENT,
                 CLAUDE_ENV_FILE=os.path.join(sc.home, ".factory", "temp", "env", "droid-env-%s.sh" % CHILD))
    prompt = dict(child, hook_event_name="UserPromptSubmit", message_id="8a145869-49fb-417a-bf8e-d6faf96fc0e2",
                  has_images=False, prompt="# Task Tool Invocation\n\nSubagent type: %s\nTask description: e2e "
                  "delegation\n\n## Task\n---BEGIN TASK FROM PARENT AGENT---\nTASK-FOR:briefed report your verdict\n"
                  "---END TASK FROM PARENT AGENT---" % DROID)
    return guard, start, prompt


def rows(Row, base_env, make_verifier, handlers, hooks_json, sc, repo, bindir, stdin_dir, framing):
    """[Row]: Droid's guard, set, prompt and whole spawn; Claude Code's UserPromptSubmit."""
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
    out, stages = [], []
    events = (("guard", "PreToolUse", "Task"), ("set", "SessionStart", "startup"), ("prompt", "UserPromptSubmit", ""))
    for (event, hook_event, match), data in zip(events, payloads(sc, folder)):
        cmds = droid_cmds(hook_event, match)
        stdin = os.path.join(stdin_dir, "typical-droid-%s.json" % event)
        with open(stdin, "w") as f:
            json.dump(data, f)
        check, started = {"guard": (quiet, [1]), "set": (note_verifier(quiet), [1] + [0] * 7),
                          "prompt": (make_verifier("set", DROID, want, framing), [1])}[event]
        verify = counted(check, cmds, started, env, sc.project, stdin, stub)
        row = Row("typical/droid/%s/hit" % event, "typical droid %s hit (%s)" % (event, DROID), cmds, env,
                  sc.project, stdin, "hook", sc.name, event, verify)
        row.goal = DROID_GOAL
        out.append(row)
        stages.append((cmds, stdin, verify))
    spawn = Row("typical/droid/spawn/hit", "typical droid spawn hit (guard, set, prompt)",
                [c for cmds, _, _ in stages for c in cmds], env, sc.project, stages[0][1], "hook", sc.name,
                "spawn", staged_verifier(stages))
    spawn.stages = [cmds for cmds, _, _ in stages]
    spawn.stdin_paths = [path for cmds, path, _ in stages for _ in cmds]
    spawn.goal = None
    out.append(spawn)
    # Claude Code runs the same UserPromptSubmit handler on every prompt: its shell test fails there.
    cc_cmds = handlers(hooks_json, "UserPromptSubmit", "", repo)
    cc_env = base_env(bindir, sc, "claude", repo)
    cc_stdin = os.path.join(stdin_dir, "typical-claude-prompt.json")
    with open(cc_stdin, "w") as f:
        json.dump({"session_id": "56971daa-6378-427e-bd03-e2e19bde659f", "cwd": sc.project,
                   "transcript_path": os.path.join(sc.home, ".claude", "projects", "p", "56971daa.jsonl"),
                   "permission_mode": "default", "hook_event_name": "UserPromptSubmit", "prompt": "Review it."}, f)
    row = Row("typical/claude/prompt", "typical claude prompt, the droid handler (a shell)", cc_cmds, cc_env,
              sc.project, cc_stdin, "hook", sc.name, "prompt",
              counted(quiet, cc_cmds, [0] * len(cc_cmds), cc_env, sc.project, cc_stdin, stub))
    row.goal = SHELL_GOAL
    out.append(row)
    return out


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


def note_verifier(quiet):
    """The sub-droid's SessionStart: part 1 prints the note; parts 2..8 nothing (``quiet``: bench/run's
    guard check, exit 0, no traceback, no output)."""
    def verify(outs, errs, statuses):
        problems = quiet(outs[1:], errs[1:], statuses[1:])
        if statuses[0] != 0 or "Traceback" in errs[0]:
            problems.append("part 1: status %d, stderr %r" % (statuses[0], errs[0][-160:]))
        try:
            context = (json.loads(outs[0]).get("hookSpecificOutput") or {}).get("additionalContext")
        except ValueError:
            context = outs[0][:160]
        if context != NOTE:
            problems.append("part 1 printed %r, not the note" % context)
        return problems
    return verify


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
