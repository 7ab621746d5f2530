"""Every declaring agent, judged by the same Briefing: the pre-flight and the doctor's rows.

Imported at session start (the pre-flight) and by the doctor, never on a spawn.
"""
from .constants import DENY_LIMIT, MAX_FILE_BYTES, REFUSAL_NAMES
from .files import display_path, is_dir, shown_path
from .harnesses import HARNESSES
from .names import split_plugin_name
from .records import Agent
from .resolution import build_briefing, is_off, resolve_skill
from .rules import matching_rules
from .text import _utf8_len, clip, shown_name


PREFLIGHT_LINES = 12


# ... and only whole lines that fit in this many bytes, the first always: next to an `--agent`
# session's abort and its own systemMessage, part 1 stays under the 10,000 of one hook output.
PREFLIGHT_BUDGET = 4000


PREFLIGHT_LINE_BYTES = DENY_LIMIT


def known_agents(machine, harness):
    """Every agent of ``harness`` a rule could brief here: its files' agents, then its built-ins."""
    found = harness.agent_names(machine) if harness.agent_names else [
        agent for agent, _ in harness.all_agents(machine) if agent is not None]
    names = {agent.name for agent in found}
    return found + [Agent(harness.key, name, None) for name in sorted(harness.builtin_agents)
                    if name not in names]


def survey(machine, harnesses):
    """(harness, name, path, Briefing or None, error) for every declaring agent.

    Then every other known agent (built-ins included, ``path`` None) that a rule briefs.
    """
    rows = []
    for key in harnesses:
        harness = HARNESSES[key]
        names = set()
        for agent, error in harness.all_agents(machine):
            if agent is None:
                rows.append((key, None, error[0], None, error[1]))
            else:
                names.add(agent.name)
                rows.append((key, agent.name, agent.path, build_briefing(agent, machine), None))
        if machine.rules(key)[0]:
            for agent in known_agents(machine, harness):
                rules = matching_rules(machine, harness, agent)
                if agent.name not in names and rules:
                    rows.append((key, agent.name, agent.path,
                                 build_briefing(agent, machine, rules=rules), None))
    return rows


def rule_report(machine, harnesses):
    """Every rule of the rules files, with the skills it resolves to and the agents it briefs.

    One record per rule, with a ``harnesses`` entry per harness it applies in, and the
    doctor's checks for files that cannot be used.
    """
    records, checks, by_id = [], [], {}
    for key in harnesses:
        harness = HARNESSES[key]
        rules, errors = machine.rules(key)
        for path, why in errors:
            if not any(c["detail"].startswith(path + ":") for c in checks):
                checks.append({"name": "rules", "status": "FAIL", "detail": "%s: %s; none of its rules "
                               "applies until it is fixed (declaring agents are briefed and guarded "
                               "as before)" % (path, why)})
        known = known_agents(machine, harness) if rules else []
        for rule in rules:
            ident = (rule.path, rule.index)
            if ident not in by_id:
                by_id[ident] = {
                    "agents": list(rule.patterns), "file": rule.path, "scope": rule.scope,
                    "index": rule.index, "skills": list(rule.skills),
                    "harness": list(rule.harnesses) if rule.harnesses else None,
                    "files": list(rule.files),
                    "overridden": {p: {"file": r.path, "index": r.index} for p, r in rule.overridden.items()},
                    "status": "ok", "problems": [], "warnings": [], "harnesses": {}}
                records.append(by_id[ident])
                unknown = [h for h in rule.harnesses or () if h not in HARNESSES]
                if unknown:
                    by_id[ident]["warnings"].append(
                        "names harness(es) %s, which briefing does not know (it knows %s): the rule "
                        "applies in none of them" % (", ".join(unknown), ", ".join(HARNESSES)))
            record = by_id[ident]
            if not rule.in_harness(key) or len(rule.overridden) == len(rule.patterns):
                continue  # nothing of it applies here
            skills = [resolve_skill(harness, machine, name, "rule") for name in rule.skills]
            applies = [agent.name for agent in known if rule in matching_rules(machine, harness, agent)]
            record["harnesses"][key] = {
                "skills": [{"name": s.name, "status": "ok" if not s.problem else (
                    "missing" if s.problem in ("unknown skill", "not a valid skill name") else "unreadable"),
                    "path": s.path, "bytes": s.size, "origin": s.origin, "problem": s.problem}
                    for s in skills],
                "applies_to": applies}
            if rule.files:
                from .standing import entry_record, entry_warning_text, file_problem_text, rule_entries
                entries = rule_entries(machine, harness, rule)
                record["harnesses"][key]["files"] = [entry_record(e, False) for e in entries]
                for entry in entries:
                    record["problems"] += ["%s: %s" % (harness.label, file_problem_text(f, where=False))
                                           for f in entry.files if f.problem]
                    if entry.warning:
                        record["warnings"].append("%s: %s" % (harness.label, entry_warning_text(entry)))
            for skill in skills:
                if skill.problem:
                    record["problems"].append("%s: skill '%s': %s: %s" % (
                        harness.label, skill.name, skill.problem, skill_fix(harness, skill, rule.label())))
    for record in records:  # read off what was found, in every harness together
        record["status"] = "FAIL" if record["problems"] else "WARN" if record["warnings"] else "ok"
    return records, checks


def skill_fix(harness, skill, where, hint=True):
    """What to do about a skill that cannot be delivered, declared in ``where``; ``hint``: with its
    near miss (the first REFUSAL_NAMES of an agent's: thousands of missing names stay cheap)."""
    if skill.problem == "unknown skill":
        near = " (%s: %s)" % skill.passed[0] if skill.passed else ""  # named so, but not to the harness
        private = "" if skill.source == "native" or split_plugin_name(skill.name)[0] else (
            ", or as a private skill (.briefing/skills/%s/ in the project, or ~/.config/briefing/skills/%s/)" % (
                skill.name, skill.name))  # docs/private-skills.md
        from .near import did_you_mean, near_of
        mean = did_you_mean(near_of(skill)) if hint else ""
        return "%sinstall it where %s looks: %s%s; or remove it from %s%s" % (
            mean + " If not, " if mean else "", harness.label, skill_places(harness, skill.name), private, where,
            near)
    if skill.problem == "not a valid skill name":
        return "a skill name is one folder name, optionally plugin:skill; fix it in %s" % where
    if is_off(skill):
        return "remove the override there, or remove the skill from %s" % where
    return "make SKILL.md a readable UTF-8 file under %d bytes, or remove it from %s" % (
        MAX_FILE_BYTES, where)


def verdict(briefing, error, every_skill=True):
    """('ok'|'WARN'|'FAIL', [problems], [warnings]) for one row of the survey.

    The doctor gets one problem per skill (``every_skill``: it is where the full
    list belongs); the pre-flight gets the refusal's own bounded words instead.
    """
    if error:
        return "FAIL", [error], []
    if briefing.unreadable:
        return "FAIL", [briefing.unreadable], []
    problems, warnings = [], []
    where = display_path(briefing.agent.path)
    if briefing.denies and not every_skill:
        problems.append(briefing.refusal())
    for index, skill in enumerate(briefing.missing if every_skill else ()):
        fix = briefing.fix_of(skill) or skill_fix(
            briefing.harness, skill, skill.rule.label() if skill.rule else where, hint=index < REFUSAL_NAMES)
        problems.append("skill '%s' (%s): %s: %s" % (skill.name, skill.source, skill.problem, fix))
    if every_skill and briefing.files:
        from .standing import entry_warning_text, file_problem_text
        problems += [file_problem_text(f) for f in briefing.file_problems]
        warnings += [entry_warning_text(e) for e in briefing.files if e.warning]
    if briefing.too_large and every_skill:
        sizes = ", ".join("%s %d B" % (s.name, s.size or 0) for s in briefing.items)
        limit = "is over the %d-byte limit" % briefing.limit_bytes if briefing.total_bytes > briefing.limit_bytes \
            else briefing.size_limit()
        problems.append("briefing of %d bytes (%s) %s: declare fewer or smaller skills in %s" % (
            briefing.total_bytes, sizes, limit, briefing.where(briefing.items)))
    if briefing.unreachable and every_skill:
        problems.append(briefing.unreachable)
    warnings += briefing.agent.warnings
    if briefing.agent.legacy:
        # Codex 0.169 drops a role file with an unknown table (facts/codex.md §4): the role
        # cannot be spawned at all. Older Codex versions still load it, and the hook still briefs it.
        problems.append(LEGACY_PROBLEM)
    if problems:
        return "FAIL", problems, warnings
    return ("WARN" if warnings else "ok"), problems, warnings


LEGACY_PROBLEM = ("declares skills in a [briefing] table, which makes Codex drop the whole role "
                  "(spawning it fails with unknown agent_type): use the comment line "
                  "# briefing: skills = [...] instead")


def skill_places(harness, name):
    """Where a skill called ``name`` would be looked for in ``harness``, in words."""
    plugin, skill = split_plugin_name(name)
    if plugin:
        return "skills/%s/ of the enabled plugin %s" % (skill, plugin)
    return harness.skill_places(skill)


def preflight(machine, harness):
    """The pre-flight report for a session of ``harness`` (None: unknown, every harness),
    or '' when every declaration would brief."""
    if not is_dir(machine.cwd):
        return ""
    harnesses = (harness.key,) if harness else tuple(k for k in HARNESSES if HARNESSES[k].in_use(machine))
    records, checks = rule_report(machine, harnesses)
    lines = ["- %s" % check["detail"].replace(machine.home, "~", 1) for check in checks]
    for record in records:
        for text in record["problems"]:
            lines.append("- rule %s in %s: %s" % (", ".join("'%s'" % p for p in record["agents"]),
                                                   display_path(record["file"]), text))
    for row_harness, name, path, briefing, error in survey(machine, harnesses):
        status, problems, warnings = verdict(briefing, error, every_skill=False)
        if status == "ok" or (status == "WARN" and not HARNESSES[row_harness].preflight_warns):
            continue
        who = "agent '%s'" % shown_name(name) if name else "an agent file"
        for text in problems + warnings:
            if " (rule): " in text:
                continue  # said once per rule, above
            lines.append("- %s %s (%s): %s" % (
                HARNESSES[row_harness].label, who, shown_path(path) if path else "built-in", text))
    if not lines:
        return ""
    shown, size = [], 0
    for line in lines[:PREFLIGHT_LINES]:
        line = clip(line, PREFLIGHT_LINE_BYTES)  # a rule's line names one skill, but in full
        size += _utf8_len(line) + 1
        if shown and size > PREFLIGHT_BUDGET:
            break
        shown.append(line)
    if len(lines) > len(shown):
        shown.append("\u2026 and %d more (run briefing-doctor, or <plugin>/hooks/briefing-preload doctor "
                     "under Codex)" % (len(lines) - len(shown)))
    return "briefing pre-flight: %d problem(s) in agents' skill declarations:\n%s" % (
        len(lines), "\n".join(shown))
