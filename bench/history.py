"""bench/run's session-start rows with large histories (issue 43, holes 5, 6 and 8).

At every session start the hook runs the pre-flight, which reads the last session's records
(``audit.last_session_line``). Each row here starts a session on a machine whose records hold
what once made that start slow, beside the same start with no history at all; the goal is the
ratio of the two (<= HISTORY_GOAL), not a ratio to the interpreter floor:

  claude    the last Claude Code session is one transcript of a single 256 MiB line
            (a crash-padded record): the read is bounded, not the line.
  codex     3,000 other projects' rollouts written after this project's last session, each
            with a 22 kB session_meta line as Codex writes it: the listing opens a few.
  opencode  OpenCode's database with this project's recent session, and a 512 KiB log of
            lines with long tokens without "=" (quadratic for a backtracking field pattern).

Imported by bench/run, which hands in its Row class and helpers; standard library only.
"""
import json
import os
import random
import sqlite3
import time

HISTORY_GOAL = 1.5
FOREIGN_ROLLOUTS = 3000
HUGE_LINE = 256 * 1024 * 1024
HOSTILE_LOG = 512 * 1024

AGENT = "---\nname: reviewer\ndescription: Reviews.\nbriefing:\n  skills: [alpha]\n---\nReview.\n"
SKILL = "---\nname: alpha\ndescription: The alpha skill.\n---\n# Alpha\nCheck the diff.\n"
ROLE = '# briefing: skills = ["alpha"]\nname = "reviewer"\ndescription = "Reviews."\n'


def put(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def machine(root):
    """A project whose agent declares a skill, for every harness here; (home, project)."""
    home, project = os.path.join(root, "home"), os.path.join(root, "project")
    os.makedirs(os.path.join(project, ".git"))
    os.makedirs(home)
    for folder in (".claude", ".opencode"):
        put(os.path.join(project, folder, "agents", "reviewer.md"), AGENT)
        put(os.path.join(project, folder, "skills", "alpha", "SKILL.md"), SKILL)
    put(os.path.join(project, ".codex", "agents", "reviewer.toml"), ROLE)
    put(os.path.join(project, ".codex", "skills", "alpha", "SKILL.md"), SKILL)
    return home, project


def slug(path):
    return "".join(c if c.isascii() and c.isalnum() else "-" for c in path)


def huge_transcript(home, project):
    """The last Claude Code session: one line of HUGE_LINE bytes."""
    folder = os.path.join(home, ".claude", "projects", slug(project))
    os.makedirs(folder)
    with open(os.path.join(folder, "0badc0de-0000-4000-8000-000000000000.jsonl"), "wb") as handle:
        handle.write(b'{"type":"user","message":{"role":"user","content":"')
        chunk = b"x" * (8 * 1024 * 1024)
        for _ in range(HUGE_LINE // len(chunk)):
            handle.write(chunk)
        handle.write(b'"}}\n')


def foreign_rollouts(home, project):
    """This project's last Codex session two days ago, then FOREIGN_ROLLOUTS of other projects."""
    rnd = random.Random(43)
    now = time.time()
    instructions = "You are Codex. " * 1500  # a session_meta line is about 22 kB

    def rollout(thread, cwd, started):
        day = time.strftime("%Y/%m/%d", time.gmtime(started))
        path = os.path.join(home, ".codex", "sessions", day, "rollout-%s-%s.jsonl" % (
            time.strftime("%Y-%m-%dT%H-%M-%S", time.gmtime(started)), thread))
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(started))
        put(path, json.dumps({"timestamp": stamp, "type": "session_meta", "payload": {
            "session_id": thread, "id": thread, "timestamp": stamp, "cwd": cwd, "cli_version": "0.169.0",
            "base_instructions": {"text": instructions}}}) + "\n")
        os.utime(path, (started + 30, started + 30))

    rollout("01a00000-0000-7000-8000-000000000000", project, now - 2 * 86400)
    for n in range(FOREIGN_ROLLOUTS):
        rollout("01a1%04x-0000-7000-8000-%012x" % (n, n), "/work/other-%d" % (n % 40),
                now - rnd.uniform(120, 2 * 86400 - 600))


def hostile_log(home, project, repo):
    """OpenCode's database as the captured records hold it, its session recent; a hostile log."""
    data = os.path.join(home, ".local", "share", "opencode")
    audit_data = os.path.join(repo, "tests", "data", "audit")
    sql = ""
    # the tables (one file the captures share), then the capture's rows
    for sql_path in (os.path.join(audit_data, "opencode-tables.sql"),
                     os.path.join(audit_data, "opencode", "home", ".local", "share", "opencode", "opencode.db.sql")):
        with open(sql_path, encoding="utf-8") as handle:
            sql += handle.read().replace("@ROOT@/project", project).replace("@ROOT@", os.path.dirname(project))
    os.makedirs(os.path.join(data, "log"))
    db = sqlite3.connect(os.path.join(data, "opencode.db"))
    db.executescript(sql)
    db.execute("UPDATE session SET time_updated = ?", (int(time.time() * 1000),))
    db.commit()
    db.close()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
    token = "a" * 30000
    with open(os.path.join(data, "log", "%s.log" % stamp.replace(":", "")), "w") as handle:
        written = 0
        while written < HOSTILE_LOG:
            line = "timestamp=%s level=INFO run=r1 message=stream %s\n" % (stamp, token)
            handle.write(line)
            written += len(line)


def rows(Row, base_env, bindir, repo, tmp, hooks_json, codex_json, handlers):
    """[Row]: each harness's session start with no history and with its large one."""
    out = []
    hook = os.path.join(repo, "hooks", "briefing-preload")
    cases = (
        ("claude", handlers(hooks_json, "SessionStart", "startup", repo), huge_transcript,
         "a 256 MiB one-line transcript"),
        ("codex", handlers(codex_json, "SessionStart", "startup", repo), foreign_rollouts,
         "%d other projects' rollouts" % FOREIGN_ROLLOUTS),
        ("opencode", ["python3 -I -S -B '%s'" % hook], lambda h, p: hostile_log(h, p, repo),
         "a 512 KiB hostile log"),
    )
    for harness, cmds, build, what in cases:
        for history in (False, True):
            root = os.path.join(tmp, "history-%s-%s" % (harness, "with" if history else "none"))
            home, project = machine(root)
            if history:
                build(home, project)
            scenario = type("History", (), {"home": home, "project": project, "root": root,
                                            "codex_home": os.path.join(home, ".codex")})
            stdin = os.path.join(root, "payload.json")
            data = {"hook_event_name": "SessionStart", "source": "startup", "cwd": project,
                    "session_id": "5e55107a-0000-4000-8000-000000000000"}
            if harness == "opencode":
                data["opencode_plugin"] = "1"
            elif harness == "codex":  # the transcript's place is how the hook tells Codex (payloads/)
                data.update(model="fake-model", permission_mode="bypassPermissions", transcript_path=os.path.join(
                    home, ".codex", "sessions", time.strftime("%Y/%m/%d"), "rollout-%s-%s.jsonl" % (
                        time.strftime("%Y-%m-%dT%H-%M-%S"), data["session_id"])))
            elif harness == "claude":
                data["transcript_path"] = os.path.join(home, ".claude", "projects", slug(project),
                                                       data["session_id"] + ".jsonl")
            with open(stdin, "w") as handle:
                json.dump(data, handle)
            env = base_env(bindir, scenario, "codex" if harness == "codex" else "claude", repo)
            if harness == "opencode":
                for name in ("CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR"):
                    env.pop(name, None)
            key = "history/%s/%s" % (harness, "with" if history else "none")
            label = "%s session start, %s" % (harness, what if history else "no history")
            row = Row(key, label, cmds, env, project, stdin, "hook", "history", "start", start_verifier())
            row.goal = None
            row.versus = "history/%s/none" % harness if history else None
            out.append(row)
    return out


def start_verifier():
    def verify(outs, errs, statuses):
        problems = []
        if any(os.WEXITSTATUS(s) != 0 or os.WIFSIGNALED(s) for s in statuses):
            problems.append("exit statuses %r" % [os.WEXITSTATUS(s) for s in statuses])
        if any("Traceback" in e for e in errs):
            problems.append("traceback on stderr")
        for o in outs:
            if o.strip():
                try:
                    json.loads(o)
                except ValueError:
                    problems.append("stdout is not JSON: %r" % o[:80])
        return problems
    return verify


def report(rows, median):
    """Print each history row against its no-history twin; [bool] per goal."""
    by_key = dict((r.key, r) for r in rows)
    verdicts = []
    for row in rows:
        twin = by_key.get(getattr(row, "versus", None) or "")
        if twin is None or not row.times or not twin.times:
            continue
        with_ms, none_ms = median(row.times), median(twin.times)
        ok = with_ms / none_ms <= HISTORY_GOAL and not row.failures
        verdicts.append(ok)
        print("%s: %.1f ms against %.1f ms with no history: %.2fx (goal <= %.2fx: %s)" % (
            row.label, with_ms, none_ms, with_ms / none_ms, HISTORY_GOAL, "PASS" if ok else "FAIL"))
    return verdicts

