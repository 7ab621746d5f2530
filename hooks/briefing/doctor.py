"""briefing-doctor: the CLI (doctor mode only; a hook run never imports it).

Exit 0 healthy (warnings allowed), 1 problems, 2 usage. ``--show AGENT`` prints
exactly what the agent receives; ``--json`` the same as data (docs/doctor.md).
"""
import os
import sys

from .constants import MAX_FILE_BYTES
from .files import display_path, is_dir, is_inside, plugin_root, read_text
from .harnesses import HARNESSES
from .jsontext import parse_json
from .machine import Machine
from .records import PRIVATE_ORIGIN, Unreadable
from .rendering import render_abort
from .resolution import is_off, resolve
from .survey import LEGACY_PROBLEM, rule_report, survey, verdict
from .substitution import SESSION_PLACEHOLDER
from .text import _utf8_len, for_people


DOCTOR_USAGE = ("usage: briefing-doctor [--cwd DIR] [--harness %s|all] [--json] [--show AGENT] [--version]\n"
                "       briefing-doctor --audit [--since DAYS] [--session ID] [--agent NAME] [--harness H] [--json]\n"
                "       briefing-doctor --loaded [--session ID] [--harness H] [--json]"
                % "|".join(HARNESSES))

DOCTOR_HELP = DOCTOR_USAGE + """

Checks that every agent's declared skills resolve where each harness looks, that briefing is
installed and enabled in each harness, and its hooks; or shows what one agent receives; or
audits what past agent runs received. Exit 0 healthy (warnings allowed), 1 problems, 2 usage.

  --cwd DIR       the project folder to check, as the folder the harness is started in (default .)
  --harness H     %s, or all (default: every harness
                  this machine runs; the report says which it skipped and why)
  --json          the report as JSON (docs/doctor.md)
  --show AGENT    exactly what AGENT receives at spawn, per harness and part
  --version       the version of this copy of briefing
  --audit         what each agent run of the recent sessions received, from the harnesses' records
    --since DAYS  how far back (default 7)
    --session ID  one session (its id, or the start of it)
    --agent NAME  one agent's runs
  --loaded        the skills each agent loaded while it worked, and whether a compaction gives them
                  back (docs/loaded-skills.md); --session ID: one session
  -h, --help      this text

Documentation: docs/doctor.md in briefing's repository.""" % ", ".join(HARNESSES)


def usage_error(text):
    """A bad argument: one line on stderr, exit 2 (the help is one flag away)."""
    sys.stderr.write("briefing-doctor: %s (briefing-doctor --help lists the options)\n" % text)
    return 2


def doctor(argv, out=None):
    """The doctor CLI: 0 healthy (warnings allowed), 1 problems, 2 usage."""
    import json
    out = out or sys.stdout
    options = {"cwd": ".", "harness": "all", "json": False, "show": None, "audit": False, "since": None,
               "session": None, "agent": None, "loaded": False}
    args = list(argv)
    while args:
        arg = args.pop(0)
        key, eq, value = arg.partition("=")
        if key in ("-h", "--help"):
            out.write(DOCTOR_HELP + "\n")
            return 0
        if key == "--version" and not eq:
            out.write("briefing-doctor %s\n" % plugin_version())
            return 0
        if key in ("--json", "--audit", "--loaded") and not eq:
            options[key[2:]] = True
        elif key in ("--cwd", "--harness", "--show", "--since", "--session", "--agent"):
            if not eq:
                if not args:
                    return usage_error("%s needs a value" % key)
                value = args.pop(0)
            options[key[2:]] = value
        else:
            return usage_error("unknown argument %s" % for_people(repr(arg)))
    # "both" is the spelling from the time there were two harnesses; it still means all.
    if options["harness"] not in HARNESSES and options["harness"] not in ("all", "both"):
        from .near import did_you_mean, near
        mean = did_you_mean(near(options["harness"], list(HARNESSES) + ["all"]))
        return usage_error("--harness must be %s or all, not %s%s" % (
            ", ".join(HARNESSES), for_people(repr(options["harness"])), ": " + mean if mean else ""))
    audit_only = ("since", "session", "agent")
    if options["loaded"] and (options["audit"] or options["show"] is not None):
        return usage_error("--loaded goes with neither --audit nor --show")
    if options["loaded"]:
        audit_only = ("since", "agent")  # --session names the session --loaded reads
    if not options["audit"] and any(options[k] is not None for k in audit_only):
        return usage_error("%s go with --audit" % ", ".join("--" + k for k in audit_only))
    if options["audit"] and options["show"] is not None:
        return usage_error("--audit and --show do not go together")
    since = 7.0
    if options["since"] is not None:
        try:
            since = float(options["since"])
        except ValueError:
            since = -1.0
        if not 0 < since <= 3650:
            return usage_error("--since takes a number of days (0 < DAYS <= 3650)")
    cwd = os.path.abspath(options["cwd"])
    if not is_dir(cwd):
        sys.stderr.write("briefing-doctor: %s is not a directory\n" % options["cwd"])
        return 2
    env = os.environ
    if env.get("CLAUDE_PROJECT_DIR") and not is_inside(cwd, env["CLAUDE_PROJECT_DIR"]):
        # The session's project is not where the doctor was pointed: --cwd is the folder claude starts in.
        env = dict(env)
        del env["CLAUDE_PROJECT_DIR"]
    machine = Machine(cwd, env)
    # "all": the harnesses this machine runs (a Qwen Code that never ran here has no ~/.qwen).
    harnesses = tuple(k for k in HARNESSES if HARNESSES[k].in_use(machine)) if options["harness"] in (
        "all", "both") else (options["harness"],)
    projects = {h: machine.project(h) for h in harnesses}
    if options["audit"]:
        from .audit.report import doctor_audit  # the records' reader: --audit only
        return doctor_audit(machine, harnesses, since, options["session"], options["agent"], options["json"], out,
                            skipped_harnesses(machine, options["harness"]))
    if options["loaded"]:
        from .loaded import doctor_loaded  # docs/loaded-skills.md: --loaded only
        return doctor_loaded(machine, harnesses, options["session"], options["json"], out)
    if options["show"] is not None:
        return doctor_show(machine, options["show"], harnesses, options["json"], out)
    rows = []
    for harness, name, path, briefing, error in survey(machine, harnesses):
        status, problems, warnings = verdict(briefing, error)
        rows.append({
            "harness": harness, "agent": name, "file": os.path.relpath(path, cwd) if path else None,
            "status": status, "problems": problems, "warnings": warnings,
            "skills": [skill_record(s, briefing) for s in (briefing.checked if briefing else [])],
            "files": files_records(briefing),
            "total_bytes": briefing.total_bytes if briefing else 0,
            "limit_bytes": briefing.limit_bytes if briefing else HARNESSES[harness].capacity(name or "", []),
        })
    rules, rule_checks = rule_report(machine, harnesses)
    from .private import private_report
    private = private_report(machine, harnesses, rows, rules)  # docs/private-skills.md: WARN at most
    checks = rule_checks + doctor_checks(machine, harnesses, options["harness"] in ("all", "both"))
    skipped = skipped_harnesses(machine, options["harness"])
    failed = any(r["status"] == "FAIL" for r in rows + rules) or any(c["status"] == "FAIL" for c in checks)
    if options["json"]:
        described = {h: {"folder": p.folder, "source": p.source, "why": p.why, "folders": p.folders,
                         "reads": p.reads} for h, p in projects.items()}
        out.write(json.dumps({"version": 1, "cwd": cwd, "ok": not failed, "projects": described,
                              "agents": rows, "rules": rules, "private_skills": private,
                              "checks": checks, "skipped_harnesses": skipped}, indent=2) + "\n")
        return 1 if failed else 0
    color = out.isatty() and not os.environ.get("NO_COLOR")
    paint = {"ok": "\x1b[32m", "WARN": "\x1b[33m", "FAIL": "\x1b[31m"}

    def status_word(word):
        return "%s%-4s\x1b[0m" % (paint[word], word) if color else "%-4s" % word

    def say(line, *values):
        # Every value is untrusted text (names, paths, problems); only status_word() paints.
        out.write(line % tuple(for_people(v) if isinstance(v, str) else v for v in values))

    for key, project in projects.items():
        # Said only when it is news: the project is not simply --cwd, read there alone.
        if project.folders != [cwd] or project.folder != cwd:
            say("project %-6s %s: %s\n", key, display_path(project.folder), project.why)
            say("               reads %s in: %s\n",
                project.reads, ", ".join(display_path(f) for f in project.folders))
    for entry in skipped:
        say("skipped %s: %s\n", HARNESSES.record(entry["harness"]).label, entry["why"])
    if not rows:
        say("briefing-doctor: no agent in %s declares skills (%s)\n",
            cwd, ", ".join(HARNESSES[h].label for h in harnesses))
        for key in harnesses:
            hint = HARNESSES[key].agent_hint(machine)
            if hint:
                say("briefing-doctor: %s\n", hint)
    for row in rows:
        if row["file"] is None and row["status"] == "ok":
            continue  # a built-in that rules brief: its rules say so below (--show prints it)
        who = row["agent"] or "(unreadable)"
        out.write(status_word(row["status"]))
        say("  %-6s %s  %s\n", row["harness"], who, row["file"] or "(built-in: no file, briefed by rules)")
        for skill in row["skills"]:
            where = skill["path"] and os.path.relpath(skill["path"], cwd) if skill["path"] else "-"
            size = "%d B" % skill["bytes"] if skill["bytes"] is not None else "-"
            note = "" if skill["status"] == "ok" else "  [%s]" % skill["status"]
            if skill["source"] == "native" or skill["delivered_by"] not in (None, "briefing"):
                note = "  [%s]" % skill["verdict"]  # who delivers it, and why
            if skill["origin"] == PRIVATE_ORIGIN:
                note += "  [private]"
            say("        %-8s %-24s %-10s %s%s%s\n", skill["source"], skill["name"], size, where, note,
                "  (rule %s)" % ", ".join("'%s'" % p for p in skill["rule"]["agents"])
                if skill.get("rule") else "")
        for entry in row["files"]:
            say_files(say, entry)
        if row["skills"] or row["files"]:
            say("        total %d of %d bytes deliverable\n", row["total_bytes"], row["limit_bytes"])
        for text in row["problems"]:
            say("        FAIL: %s\n", text)
        for text in row["warnings"]:
            say("        WARN: %s\n", text)
    for rule in rules:
        scope = ", ".join(rule["harness"]) if rule["harness"] else "every harness"
        out.write(status_word(rule["status"]))
        say("  rule   %s -> %s  (%s #%d, %s)\n", ", ".join("'%s'" % p for p in rule["agents"]),
            ", ".join(rule["skills"] + ["file %s" % f for f in rule["files"]]) or "(no skills)",
            display_path(rule["file"]), rule["index"], scope)
        for pattern, by in sorted(rule["overridden"].items()):
            say("        '%s' is overridden by rule #%d of %s\n", pattern, by["index"], display_path(by["file"]))
        for key, detail in rule["harnesses"].items():
            for skill in detail["skills"]:
                where = os.path.relpath(skill["path"], cwd) if skill["path"] else "-"
                say("        %-8s %-24s %s%s\n", key, skill["name"], where,
                    "" if skill["status"] == "ok" else "  [%s]" % skill["status"])
            for entry in detail.get("files", ()):
                say_files(say, entry, key)
            say("        %-8s applies to: %s\n", key, ", ".join(detail["applies_to"]) or
                "no known agent (it applies when one is spawned)")
        for text in rule["problems"]:
            say("        FAIL: %s\n", text)
        for text in rule["warnings"]:
            say("        WARN: %s\n", text)
    for record in private:
        out.write(status_word(record["status"]))
        where = record["file"]
        say("  private %s  %s (%s)\n", record["name"], os.path.relpath(where, cwd) if is_inside(where, cwd) else
            display_path(where), record["scope"])
        for key, detail in record["harnesses"].items():
            users = ["agent %s" % name for name in detail["agents"]] + [
                "rule %s (%s #%d)" % (", ".join("'%s'" % p for p in rule["agents"]), display_path(rule["file"]),
                                      rule["index"]) for rule in detail["rules"]]
            if detail["overridden_by"]:
                users.append("overridden by %s" % display_path(detail["overridden_by"]))
            say("        %-8s used by: %s\n", key, ", ".join(users) or "nothing")
        for text in record["warnings"]:
            say("        WARN: %s\n", text)
    for check in checks:
        if check["status"] != "ok" or check.get("shown") or (check["name"] == "installed" and not every_quiet(
                check, options["harness"])):
            out.write(status_word(check["status"]))
            say("  check  %s%s: %s\n", check["name"], " " + check["harness"] if "harness" in check else "",
                check["detail"])
    return 1 if failed else 0


def every_quiet(check, option):
    """An ``installed`` check that is ok is one line of the text report, except in the default list for a
    harness briefing is not installed in (installed_checks: quiet)."""
    return option in ("all", "both") and "not installed" in check["detail"]


def files_records(briefing):
    """The doctor's record of every ``files`` entry of a Briefing (docs/doctor.md): [] when none."""
    if not briefing or not briefing.files:
        return []
    from .standing import entry_record
    return [entry_record(entry) for entry in briefing.files]


def say_files(say, entry, harness=None):
    """A ``files`` entry and what it matches, for people."""
    label = harness or ("rule" if entry["rule"] else "briefing")
    if not entry["matches"]:
        say("        %-8s file %-19s (matches no file)\n", label, entry["entry"])
    for match in entry["matches"]:
        shown = match["path"] or entry["entry"]
        size = "%d B" % match["bytes"] if match["bytes"] is not None else "-"
        say("        %-8s file %-19s %-10s%s  [%s]\n", label, shown, size,
            "" if shown == entry["entry"] else " (from '%s')" % entry["entry"], match["verdict"])
    for skipped in entry["skipped"]:
        say("        %-8s file %-19s %-10s (from '%s')  [skipped: %s]\n", label, skipped["path"], "-",
            entry["entry"], skipped["why"])


def plugin_version():
    """The version in the plugin manifest beside this script: .claude-plugin/plugin.json, the one
    place it is written; in the Gemini CLI or Qwen Code extension, which has no other manifest,
    the gemini-extension.json or qwen-extension.json the build wrote it into."""
    here = plugin_root()
    for manifest in (os.path.join(".claude-plugin", "plugin.json"), "gemini-extension.json",
                     "qwen-extension.json"):
        try:
            version = parse_json(read_text(os.path.join(here, manifest))).get("version")
        except (Unreadable, ValueError, AttributeError):
            continue
        if isinstance(version, str):
            return version
    return "(unknown: .claude-plugin/plugin.json unreadable)"


def skill_record(skill, briefing):
    delivered_by = None
    if skill.problem:
        status = "too-large" if skill.size and skill.size > MAX_FILE_BYTES else (
            "missing" if skill.problem in ("unknown skill", "not a valid skill name") else
            "off" if is_off(skill) else
            "unrenderable" if briefing.unrendered(skill) else "unreadable")
    else:
        status = "ok"
        if briefing.injects_file_of(skill):
            delivered_by = "briefing"
        elif briefing.harness.preloads_native:
            delivered_by = {"claude": "claude-code"}.get(briefing.harness.key, briefing.harness.key)
    rule = skill.rule and {"agents": list(skill.rule.patterns), "file": skill.rule.path,
                           "index": skill.rule.index}
    return {"name": skill.name, "source": skill.source, "status": status, "path": skill.path,
            "bytes": skill.size, "origin": skill.origin, "problem": skill.problem,
            "delivered_by": delivered_by, "rule": rule, "verdict": briefing.verdict_of(skill),
            "harness_skips": skill.skip, "rendered": rendered_tokens(briefing, skill)}


def rendered_tokens(briefing, skill):
    """What the harness's rendering substituted in a skill briefing delivers: [{token, count}]."""
    rendering = briefing.rendering_of(skill)
    return [{"token": token, "count": count} for token, count in (rendering.tokens if rendering else ())]


def doctor_checks(machine, harnesses, every=False):
    """Installation checks: the hooks file of each harness looked at in this plugin, hook trust, and
    whether briefing is installed where each harness loads it from (``every``: the default list)."""
    root = plugin_root()
    checks = [HARNESSES[key].hooks_check(root) for key in harnesses if HARNESSES[key].hooks_check]
    checks += installed_checks(machine, harnesses, every)
    checks += [HARNESSES[key].trust_check(machine) for key in harnesses if HARNESSES[key].trust_check]
    checks += [HARNESSES[key].session_check(machine) for key in harnesses if HARNESSES[key].session_check]
    return checks


def installed_checks(machine, harnesses, every):
    """One ``installed`` check per harness (docs/doctor.md "Installed"). In the default list, a
    harness briefing is not installed in stays quiet (ok, its detail kept) once it is installed in
    another: only a machine where it is installed nowhere is told to install it."""
    checks = [HARNESSES[key].installed_check(machine) for key in harnesses if HARNESSES[key].installed_check]
    missing = [c for c in checks if c["status"] == "WARN" and "not installed" in c["detail"]]
    if every and len(missing) < len(checks):
        for check in missing:
            check["status"] = "ok"
    return checks


def skipped_harnesses(machine, option):
    """[{"harness", "why"}] of the harnesses the default list leaves out (none for one --harness)."""
    if option not in ("all", "both"):
        return []
    return [{"harness": key, "why": HARNESSES[key].unused_why(machine)}
            for key in HARNESSES if not HARNESSES[key].in_use(machine)]


def unknown_agent_hints(machine, name, harnesses):
    """After an unknown agent: per harness, the closest names it knows, and where it looks when this
    project keeps its agents elsewhere (issue 44)."""
    from .near import did_you_mean, near_agents
    for harness in harnesses:
        mean = did_you_mean(near_agents(harness, machine, name))
        hint = harness.agent_hint(machine)
        for text in (mean, hint):
            if text:
                sys.stderr.write(for_people("briefing-doctor: %s: %s\n" % (harness.label, text)))


def doctor_show(machine, name, harnesses, as_json, out):
    """Exactly what ``name`` would receive at spawn, per harness, part by part."""
    import json
    shows = []
    for key in harnesses:
        harness = HARNESSES[key]
        for session in (False, True) if harness.session_agents else (False,):
            briefing = resolve(harness, machine, name, session)
            if briefing is not None:
                shows.append(("%s --agent session" % key if session else "%s subagent" % key, briefing))
    if not shows:
        winners = [(HARNESSES[key], HARNESSES[key].find_agent(machine, name)) for key in harnesses]
        for harness, agent in winners:
            if agent is not None:
                sys.stderr.write("briefing-doctor: %s agent %r (%s) declares no skills: it is the file "
                                 "that wins the name, so it is spawned unbriefed\n" % (
                                     harness.label, name, for_people(display_path(agent.path))))
        if not any(agent for _, agent in winners):
            sys.stderr.write("briefing-doctor: no agent named %r declares skills here, and no rule "
                             "applies to it (%s)\n" % (name, machine.cwd))
            unknown_agent_hints(machine, name, [harness for harness, _ in winners])
        return 1
    failed = False
    report = []
    for label, briefing in shows:
        if briefing.unreadable:
            failed = True
            report.append({"mode": label, "file": briefing.agent.path, "status": "FAIL",
                           "delivery": briefing.harness.delivery(),
                           "reason": briefing.unreadable, "problems": [], "skills": [], "parts": []})
            continue
        reason = briefing.reason() or None
        if briefing.denies:
            failed = True
            texts = [render_abort(briefing)]
            status = "FAIL"
        else:
            texts = briefing.parts() or []  # what a Codex that still loads the role delivers
            status = "ok"
        if briefing.agent.legacy:
            failed = True
            status = "FAIL"
            reason = "; ".join(filter(None, [reason, LEGACY_PROBLEM]))
        report.append({"mode": label, "file": briefing.agent.path, "status": status,
                       "harness": briefing.harness.key,
                       "delivery": briefing.harness.delivery(),
                       "when": briefing.harness.redelivery,  # at spawn, and after a compaction (issue 26)
                       "reason": reason,
                       # every one: the refusal texts name the first REFUSAL_NAMES and send here
                       "problems": verdict(briefing, None)[1],
                       "skills": [s.name for s in briefing.delivered],
                       "files": [f.name for f in briefing.delivered_files],
                       "declared_files": files_records(briefing),
                       "rules": [{"agents": list(r.patterns), "file": r.path, "index": r.index,
                                  "skills": [s.name for s in briefing.checked if s.rule is r],
                                  "files": list(r.files)}
                                 for r in briefing.rules],
                       "declared": [{"name": s.name, "source": s.source, "verdict": briefing.verdict_of(s),
                                     "origin": s.origin, "path": s.path,
                                     "rendered": rendered_tokens(briefing, s)} for s in briefing.checked],
                       "parts": [{"index": i, "chars": len(t), "bytes": _utf8_len(t), "text": t}
                                 for i, t in enumerate(texts, 1)]})
    # A spawn renders ${CLAUDE_SESSION_ID} as its session's id; the doctor has none to show.
    placeholder = None if machine.session else SESSION_PLACEHOLDER
    shown_placeholder = placeholder and any(
        t["token"] == "${CLAUDE_SESSION_ID}" for e in report for d in e.get("declared", ()) for t in d["rendered"])
    if as_json:
        out.write(json.dumps({"version": 1, "agent": name, "shows": report,
                              "session_id": placeholder}, indent=2) + "\n")
        return 1 if failed else 0
    if shown_placeholder:
        out.write("(${CLAUDE_SESSION_ID} is shown as %s: at a spawn it is the session's own id, "
                  "of the same length)\n" % placeholder)
    for entry in report:
        # For a terminal: control characters escaped (--json has the exact text).
        out.write(for_people("=== %s: %s (%s) [%s]\n" % (entry["mode"], name, entry["file"] or "built-in, no file",
                                                          entry["status"])))
        if entry.get("when"):
            out.write(for_people("    receives its briefing %s\n" % entry["when"]))
        if entry.get("reason"):
            out.write(for_people("    %s\n" % entry["reason"]))
        for problem in entry.get("problems", ()):
            out.write(for_people("    - %s\n" % problem))
        for rule in entry.get("rules", ()):
            out.write(for_people("    rule %s (%s #%d): %s\n" % (
                ", ".join("'%s'" % p for p in rule["agents"]), display_path(rule["file"]), rule["index"],
                ", ".join(rule["skills"] + rule.get("files", [])) or "nothing new (declared already)")))
        for declared in entry.get("declared", []):
            out.write(for_people("    %-8s %s: %s%s\n" % (
                declared["source"], declared["name"], declared["verdict"], " (private skill %s)" % display_path(
                    declared["path"]) if declared["origin"] == PRIVATE_ORIGIN else "")))
            if declared["rendered"]:
                out.write(for_people("             rendered as %s renders it: %s\n" % (
                    HARNESSES[entry["harness"]].label, ", ".join(
                        "%s x%d" % (t["token"], t["count"]) for t in declared["rendered"]))))
        for declared in entry.get("declared_files", ()):
            for match in declared["matches"] or [{"path": None, "verdict": "matches no file"}]:
                out.write(for_people("    %-8s file %s%s: %s\n" % (
                    "rule" if declared["rule"] else "briefing", match["path"] or declared["entry"],
                    "" if match["path"] in (None, declared["entry"]) else " (from '%s')" % declared["entry"],
                    match["verdict"])))
            for skipped in declared["skipped"]:
                out.write(for_people("    %-8s file %s (from '%s'): skipped: %s\n" % (
                    "rule" if declared["rule"] else "briefing", skipped["path"], declared["entry"], skipped["why"])))
        count = len(entry["parts"])
        for part in entry["parts"]:
            out.write("--- part %d of %d: %d characters, %d bytes (%s) ---\n" % (
                part["index"], count, part["chars"], part["bytes"], entry["delivery"]))
            out.write(for_people(part["text"]) + "\n")
    return 1 if failed else 0
