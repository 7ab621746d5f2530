"""bench/run --audit: ``briefing-doctor --audit --json`` over 250..2,000 recorded Claude Code
sessions (issue 40), timed per run and per session against the goal for 1,000.

Imported by bench/run, which hands in its helpers; standard library only.
"""
import json
import os
import shutil
import statistics
import subprocess
import time

REPO_DEFAULT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

AUDIT_GOAL_S = 10.0  # --audit over 1,000 recorded sessions, on the 2-core machine of the figures


def build_audit(root, n, body_text):
    """``n`` Claude Code sessions of one project, as Claude Code 2.1.328 writes them: each a main
    file and one briefed subagent (the captured records of tests/data/audit/claude), the main file
    with a 64 kB request blob, the line kind that makes real records large."""
    data = os.path.join(REPO_DEFAULT, "tests", "data", "audit", "claude", "home", ".claude", "projects", "@SLUG@")
    template = None
    for name in sorted(os.listdir(data)):
        sub = os.path.join(data, name, "subagents")
        if os.path.isdir(sub):
            for f in sorted(os.listdir(sub)):
                text = open(os.path.join(sub, f), encoding="utf-8").read()
                if f.endswith(".jsonl") and "hook_additional_context" in text and "compact_boundary" not in text:
                    template = (name, f, text, open(os.path.join(sub, f[:-6] + ".meta.json")).read(),
                                open(os.path.join(data, name + ".jsonl"), encoding="utf-8").read())
    session, agent_file, agent_text, meta, main_text = template
    project = os.path.join(root, "project")
    os.makedirs(os.path.join(project, ".git"))
    os.makedirs(os.path.join(project, ".claude", "agents"))
    with open(os.path.join(project, ".claude", "agents", "reviewer.md"), "w") as f:
        f.write("---\nname: reviewer\ndescription: d\nbriefing:\n  skills: [alpha, beta]\n---\nBody.\n")
    for skill in ("alpha", "beta"):
        os.makedirs(os.path.join(project, ".claude", "skills", skill))
        with open(os.path.join(project, ".claude", "skills", skill, "SKILL.md"), "w") as f:
            f.write("---\nname: %s\ndescription: d\n---\n%s\n" % (skill, body_text(skill, 4000)))
    slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in project)
    base = os.path.join(root, "home", ".claude", "projects", slug)
    blob = json.dumps({"type": "api-request-blob", "message": {"role": "user", "content": "x" * 65536}}) + "\n"
    for i in range(n):
        sid = "%08x-0000-4000-8000-%012x" % (i, i)
        sub = os.path.join(base, sid, "subagents")
        os.makedirs(sub)
        with open(os.path.join(base, sid + ".jsonl"), "w", encoding="utf-8") as f:
            f.write(main_text.replace(session, sid).replace("@ROOT@", root) + blob)
        with open(os.path.join(sub, agent_file), "w", encoding="utf-8") as f:
            f.write(agent_text.replace(session, sid).replace("@ROOT@", root) + blob)
        with open(os.path.join(sub, agent_file[:-6] + ".meta.json"), "w") as f:
            f.write(meta)
    return project


def audit_scaling(args, repo, exe, tmp, body_text):
    """briefing-doctor --audit --json over 250..2000 sessions: time per run, and per session."""
    sizes = (250, 500, 1000, 2000)
    runs = args.runs or 3
    doctor = os.path.join(repo, "bin", "briefing-doctor")
    print("briefing-doctor --audit --json over N recorded Claude Code sessions (each a main file and one "
          "briefed subagent, ~140 kB); %d runs per size, medians" % runs)
    print("%-9s %10s %12s %14s %10s %12s %s" % ("sessions", "median s", "min-max s", "ms/session", "CPU s",
                                              "CPU ms/sess", "runs"))
    medians, cpus = {}, {}
    for n in sizes:
        root = os.path.join(tmp, "audit-%d" % n)
        project = build_audit(root, n, body_text)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.path.join(root, "home"), "LANG": "C.UTF-8"}
        times, cpu, problems = [], [], []
        for _ in range(runs):
            start, before = time.monotonic(), os.times()
            proc = subprocess.run([exe, doctor, "--audit", "--json", "--harness", "claude", "--cwd", project],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            times.append(time.monotonic() - start)
            after = os.times()
            cpu.append(after.children_user + after.children_system - before.children_user - before.children_system)
            try:
                report = json.loads(proc.stdout.decode())
                if proc.returncode != 0 or report["summary"]["briefed"] != n:
                    problems.append("rc %d, summary %s" % (proc.returncode, report["summary"]))
            except (ValueError, KeyError):
                problems.append("no report: %s" % proc.stderr.decode()[-300:])
        medians[n] = statistics.median(times)
        cpus[n] = statistics.median(cpu)
        print("%-9d %10.2f %5.2f-%-6.2f %14.2f %10.2f %12.2f %s" % (
            n, medians[n], min(times), max(times), 1000 * medians[n] / n, cpus[n], 1000 * cpus[n] / n,
            "; ".join(problems) or "ok"))
        shutil.rmtree(root, ignore_errors=True)
    per = [1000 * cpus[n] / n for n in sizes]
    print("1,000 sessions: %.2f s wall, %.2f s CPU (goal <= %.0f s: %s); CPU per session %.2f ms at 250, "
          "%.2f ms at 2,000 (linear: the cost per session does not grow)" % (
              medians[1000], cpus[1000], AUDIT_GOAL_S, "PASS" if medians[1000] <= AUDIT_GOAL_S else "FAIL",
              per[0], per[-1]))
    return 0 if medians[1000] <= AUDIT_GOAL_S else 1
