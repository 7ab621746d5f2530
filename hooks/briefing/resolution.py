"""Resolution: one Briefing per declaration, the only source of verdicts.

``build_briefing`` resolves every declared name once, where the harness would,
and decides which the hook delivers itself; every refusal, abort, audit line
and doctor verdict is then read off the Briefing.
"""
from .constants import REFUSAL_NAMES, SHOWN_PROBLEM
from .files import display_path, real_path, shown_path
from .harnesses import HARNESSES
from .machine import Machine
from .names import split_plugin_name
from .records import PRIVATE_ORIGIN, Agent
from .rules import matching_rules
from .text import clip, shown_name


class Briefing(object):
    """An agent's declaration, resolved once.

    ``delivered`` are the skills the hook itself injects (for a Claude Code
    subagent, the ``briefing:`` skills that the native field does not already
    preload); ``checked`` are all declared skills, native ones included, and
    the skills of the ``rules`` that apply to the agent (``source == "rule"``).
    """

    def __init__(self, agent, checked, delivered, session=False, rules=(), renderings=None, files=(),
                 delivered_files=(), unreachable=None):
        self.agent = agent
        # Why no hook can brief this agent before its first turn, with the fix (Harness.unreachable).
        self.unreachable = unreachable
        self.files = list(files)  # standing.FileEntry per ``files`` entry: the declaration's, then the rules'
        self.delivered_files = list(delivered_files)  # standing.StandingFile the hook injects, after the skills
        self.harness = HARNESSES[agent.harness]
        self.checked = checked
        self.delivered = delivered
        self.session = session
        self.rules = list(rules)
        self.renderings = renderings or {}  # id(Skill) -> its Rendering, for a skill the harness renders
        self._parts = None
        self._delivered_ids = None  # id() of each delivered skill, built once (the doctor asks per skill)
        self._delivered_real = None  # the real path of each delivered skill's file, built once

    @property
    def missing(self):
        return [s for s in self.checked if s.problem]

    @property
    def file_problems(self):
        """The files that refuse the spawn: a missing plain path, one outside the project, unreadable."""
        return [f for entry in self.files for f in entry.files if f.problem]

    @property
    def items(self):
        """What the hook delivers, in order: the skills, then the project files."""
        return self.delivered + self.delivered_files

    def rendering_of(self, skill):
        """How the harness renders ``skill`` (a substitution.Rendering), or None: delivered as written."""
        return self.renderings.get(id(skill))

    def unrendered(self, skill):
        """Whether ``skill`` is refused because it cannot be delivered as the harness delivers it."""
        rendering = self.renderings.get(id(skill))
        return bool(rendering and rendering.problem and skill.problem)

    def fix_of(self, skill, shown=False):
        """What to change about a skill that cannot be delivered as the harness would, or None.

        Where the harness would preload it itself (and do what a hook cannot: run its
        command, know its value), the fix is to let it; otherwise to change the skill.
        """
        rendering = self.renderings.get(id(skill))
        if not (rendering and rendering.problem and skill.problem):
            return None
        change = {"command": "drop the dynamic line from the skill",
                  "value": "drop that token from the skill",
                  "unsafe": "move the skill to a folder with a plainer path"}[rendering.cause]
        harness = self.harness
        if not harness.preloads_native or skill.origin == PRIVATE_ORIGIN:  # a private skill: only briefing can
            return change[0].upper() + change[1:]
        if self.session:
            return "A %s session preloads nothing itself, so %s" % (
                "claude --agent" if harness.key == "claude" else harness.label, change)
        if skill.source == "native" or rendering.skip:
            return "%s would skip it in skills: (%s), so %s or make %s preload it" % (
                harness.label, clip(skill.skip or rendering.skip or "", SHOWN_PROBLEM), change, harness.label)
        if skill.rule is not None and self.agent.path is None:
            return change[0].upper() + change[1:]  # a built-in agent: no skills: field to move it to
        if skill.rule is not None:
            return "Let %s preload it: list it under skills: in %s instead of in %s; or %s" % (
                harness.label, (shown_path if shown else display_path)(self.agent.path),
                skill.rule.label(shown), change)
        return "Let %s preload it: move it from briefing: to skills: in %s; or %s" % (
            harness.label, (shown_path if shown else display_path)(self.agent.path), change)

    @property
    def unreadable(self):
        """Why the declaration itself could not be read, or None."""
        return self.agent.error

    @property
    def total_bytes(self):
        return sum(s.size or 0 for s in self.items if not s.problem)

    @property
    def limit_bytes(self):
        """How many bytes of skill text this harness can take whole for this agent."""
        return self.harness.capacity(self.agent.name, self.items)

    @property
    def too_large(self):
        if self.missing or self.file_problems or not self.items:
            return False
        if self.harness.part_budget is None:
            return self.total_bytes > self.harness.whole_limit or self.over_output
        return self.parts() is None

    @property
    def over_output(self):
        """Whether the one hook output carrying the whole briefing is longer than the harness reads
        of a hook's stdout (``Harness.output_limit``): measured on the bytes really printed, JSON with
        every non-ASCII character escaped (6 bytes a letter, 12 an emoji), not on the skills' UTF-8
        (issue 43: a Russian skill of 380 KiB prints 1.11 MB, and Qwen Code keeps 1 MiB of it)."""
        limit = self.harness.output_limit
        if limit is None or self.harness.part_budget is not None:
            return False
        return self.printed_bound() > limit and self.printed_bytes > limit

    def printed_bound(self):
        """An upper bound of ``printed_bytes`` without rendering: JSON escaping makes at most 6 bytes
        of one byte of UTF-8; a frame is its name and folder (each character escaped for an attribute
        to at most 6), two seals (16 characters in practice; 256 allowed) and some fixed text; the
        header and the part's tags are under 4 KiB; the human's line is the audit."""
        frames = sum(6 * len(s.name.encode("utf-8")) + 6 * len((getattr(s, "dir", None) or "").encode("utf-8"))
                     + 2 * 256 + 128 for s in self.items)
        fixed = 4096 + 6 * len(self.agent.name.encode("utf-8")) + len(self.audit().encode("utf-8")) + 64
        return 6 * (self.total_bytes + frames + fixed)

    @property
    def printed_bytes(self):
        """Bytes of the hook output that carries the whole briefing, as ``emit`` prints it: the context
        and the human's line (with ", again after compaction", the longest it gets)."""
        from .jsontext import dump_json
        from .text import for_people
        parts = self.parts()
        if not parts:
            return 0
        out = self.harness.context_output("SubagentStart", parts[0])
        out["systemMessage"] = for_people(self.audit() + ", again after compaction")
        return len(dump_json(out))

    @property
    def blocked(self):
        """A declaration that cannot be read although it certainly names skills (``Agent.refuses``)."""
        return bool(self.agent.error and self.agent.refuses)

    @property
    def denies(self):
        """Refuse the spawn: a declared skill is missing, the briefing cannot be delivered whole,
        the declaration naming the skills cannot be read (a programmatic definition), or no hook
        can put it into this agent before its first turn (``unreachable``)."""
        return (bool(self.missing) or bool(self.file_problems) or self.too_large or self.blocked
                or bool(self.unreachable))

    @property
    def deliverable(self):
        return not self.denies

    def parts(self):
        """The rendered parts under this harness's limits, or None when they cannot carry it."""
        if self._parts is None:
            self._parts = self.harness.render(self.agent.name, self.items) or []
        return self._parts or None

    def where(self, skills, shown=False):
        """What to fix for ``skills``: the agent's declaration and/or the rules they come from.

        ``shown``: as a refusal shows it (see REFUSAL_NAMES): the path clipped, and of the
        rules the first alone, with how many others there are.
        """
        places, own = [], False
        for skill in skills:
            if skill.rule is None:
                own = True
                continue
            label = skill.rule.label(shown)
            if not any(p[0] == label for p in places):
                places.append((label, []))
            next(p for p in places if p[0] == label)[1].append(skill.name)
        if shown:
            words = ["%s (%s%s)" % (label, shown_name(names[0]), ", \u2026" if len(names) > 1 else "")
                     for label, names in places[:1]]
            if len(places) > 1:
                words[0] += " (or %d other rule(s))" % (len(places) - 1)
            if own or not words:
                words.insert(0, "the declaration in %s" % shown_path(self.agent.path))
            return " or ".join(words)
        words = ["%s (%s)" % (label, ", ".join(names)) for label, names in places]
        if own or not words:
            words.insert(0, "the declaration in %s" % display_path(self.agent.path))
        return " or ".join(words)

    def listed(self, skills, problems=True):
        """At most REFUSAL_NAMES of ``skills`` in declaration order, then how many more.

        Every refusal text names its skills through this one method, in every
        harness and for every cause, so each stays bounded however many are
        declared (see REFUSAL_NAMES); the doctor is where the full list is.
        """
        shown = []
        for skill in skills[:REFUSAL_NAMES]:
            text = shown_name(skill.name)
            if problems and skill.problem and skill.problem != "unknown skill":
                # The name says which skill; its path is the doctor's to show.
                problem = skill.problem.replace(" at %s" % skill.path, "") if skill.path else skill.problem
                if is_off(skill):  # its settings file is named in the fix, once
                    problem = problem.replace(" in %s" % display_path(skill.override[2]), "")
                text += " (%s)" % clip(problem, SHOWN_PROBLEM)
            elif problems and skill.problem == "unknown skill" and getattr(skill, "near_pool", None):  # a file has none
                from .near import did_you_mean, near_of  # in the slot of a problem: the refusal's bound holds
                mean = did_you_mean(near_of(skill)[:1])
                text += " (%s)" % clip(mean, SHOWN_PROBLEM) if mean else ""
            shown.append(text)
        text = ", ".join(shown)
        if len(skills) > REFUSAL_NAMES:
            text += ", \u2026 and %d more (`briefing-doctor --show %s` lists them all)" % (
                len(skills) - REFUSAL_NAMES, shown_name(self.agent.name))
        return text

    def problem(self):
        """What is wrong, in words that every refusal text shares (see ``listed``)."""
        if self.file_problems and self.missing:
            # One bounded list for both (see REFUSAL_NAMES), skills first.
            return "unknown skill(s) or undeliverable file(s): %s" % self.listed(self.missing + self.file_problems)
        if self.file_problems:
            return "undeliverable file(s): %s" % self.listed(self.file_problems)
        return self.skill_problem()

    def skill_problem(self):
        if self.missing and all(is_off(s) for s in self.missing):
            return "skill(s) that a setting turned off: %s" % self.listed(self.missing)
        if self.missing and all(self.unrendered(s) for s in self.missing):
            return "skill(s) that cannot be delivered as %s delivers them: %s" % (
                self.harness.label, self.listed(self.missing))
        if self.missing and any(self.unrendered(s) for s in self.missing):
            return "unknown or undeliverable skill(s): %s" % self.listed(self.missing)
        if self.missing:
            return "unknown skill(s): %s" % self.listed(self.missing)
        if self.too_large:
            return "a briefing of %d bytes (%s), %s" % (
                self.total_bytes, self.listed(self.items, problems=False), self.size_limit())
        return ""

    def size_limit(self):
        """Which limit a briefing that is too large exceeds, in words (refusal, abort, pre-flight)."""
        if self.total_bytes <= self.limit_bytes and self.over_output:
            return ("which the hook prints as %d bytes of JSON (each non-ASCII character escaped), more than "
                    "the %d bytes of a hook's output %s reads whole" % (
                        self.printed_bytes, self.harness.output_limit, self.harness.label))
        return "more than the %d bytes %s can deliver whole (%s)" % (
            self.limit_bytes, self.harness.label, self.harness.delivery())

    def reason(self):
        """Why the spawn is refused, in words that say what to change."""
        if not self.denies:
            return ""
        return "briefing: agent '%s' %s" % (shown_name(self.agent.name), self.refusal())

    def input_reason(self, why):
        """Why a spawn whose input the hook cannot pass on is refused (``why``: what about it)."""
        return "briefing: agent '%s' cannot be briefed: %s. Spawn it again with plain arguments." % (
            shown_name(self.agent.name), why)

    def refusal(self):
        """The reason after "agent 'NAME' ": what is wrong and what to change (the pre-flight's line)."""
        if self.blocked and not self.missing:
            return "declares skills in a definition briefing cannot read (%s). Fix it; `briefing-doctor` " \
                   "shows it." % clip(self.agent.error, SHOWN_PROBLEM)
        off = [s.override for s in self.missing if is_off(s)]
        if off:
            override = 'skillOverrides "%s": "off" in %s%s' % (
                shown_name(off[0][0]), shown_path(off[0][2]),
                " (and %d other override(s))" % (len(off) - 1) if len(off) > 1 else "")
        if self.missing and all(is_off(s) for s in self.missing):
            # A person or a policy switched them off (facts/claude-code.md §5.1): never deliver them anyway.
            verb, fix = "declares", "Remove %s or the skill from %s." % (override, self.where(
                self.missing, shown=True))
        elif self.missing and all(self.unrendered(s) for s in self.missing):
            # The harness would run a command, or fill in a value, that a hook cannot (facts/rendering.md).
            verb, fix = "declares", self.fix_of(self.missing[0], shown=True) + "."
        elif self.missing:
            # Turned-off skills among unknown ones carry their problem in the one bounded list.
            verb, fix = "references", "Install the skill(s)%s or fix %s." % (
                ", remove %s," % override if off else "",
                self.where(self.missing + self.file_problems, shown=True))
        elif self.unreachable and not self.too_large:
            return self.unreachable
        elif self.file_problems:
            verb, fix = "declares", "Create or fix the file(s) inside the project, or fix %s." % self.where(
                self.file_problems, shown=True)
        else:
            verb, fix = "needs", "Declare fewer or smaller skills%s in %s." % (
                " or files" if self.delivered_files else "", self.where(self.items, shown=True))
        return "%s %s. %s" % (verb, self.problem(), fix)

    def audit(self):
        # Sizes are those of the text delivered: after the harness's rendering.
        names = ", ".join(s.name for s in self.items)
        line = "briefing: %s \u2190 %s (%.1f kB)" % (self.agent.name, names, self.total_bytes / 1000.0)
        skipped = [s.name for s in self.checked if s.source == "briefing" and s not in self.delivered]
        if skipped and not self.session:
            line += "; preloaded natively: %s" % ", ".join(skipped)
        for rule in self.rules:
            mine = [s.name for s in self.items if s.rule is rule]
            if mine:
                line += "; from %s: %s" % (rule.label(), ", ".join(mine))
        covered = [s for s in self.checked if s.source == "native" and s.skip and not s.problem]
        if covered:
            line += "; delivered because %s skips them: %s" % (
                self.harness.label, "; ".join("%s (%s)" % (s.name, s.skip) for s in covered))
        return line

    def verdict_of(self, skill):
        """Who delivers one declared skill at a subagent spawn, in the doctor's words."""
        verdict = self._verdict_of(skill)
        if skill.passed and not skill.problem:
            # The harness's choice of file: the first it passes over, and why (perhaps a
            # condition only the session knows, such as a paths: skill not yet active).
            where, why = skill.passed[0]
            verdict += "; %s passes over %s for it: %s" % (self.harness.label, where, why)
        elif skill.passed and skill.problem == "unknown skill":
            verdict += " (%s: %s)" % skill.passed[0]  # a file with that name, but not to the harness
        return verdict

    def injects(self, skill):
        """Whether ``skill`` itself is one the hook injects (constant time: a doctor asks for each)."""
        if self._delivered_ids is None:
            self._delivered_ids = {id(s) for s in self.delivered}
        return id(skill) in self._delivered_ids

    def injects_file_of(self, skill):
        """Whether the hook injects ``skill``'s file, as this or another declared name."""
        if self._delivered_real is None:
            self._delivered_real = {real_path(s.path) for s in self.delivered if s.path}
        return bool(skill.path) and real_path(skill.path) in self._delivered_real

    def _verdict_of(self, skill):
        if skill.problem and self.unrendered(skill):
            return "refused: cannot be delivered as %s delivers it: %s" % (self.harness.label, skill.problem)
        if skill.problem:
            return "missing" if skill.problem == "unknown skill" else "missing: %s" % skill.problem
        if skill.source == "native":
            if skill.skip:
                return "native, delivered by briefing: %s" % skill.skip
            if skill.path is None:
                return "native (%s preloads it: %s)" % (self.harness.label, skill.held)
            return "native (%s preloads)" % self.harness.label
        if self.session or self.injects(skill):
            return skill.source  # "briefing", or "rule": briefing injects it
        if self.injects_file_of(skill):
            return "%s (declared twice)" % skill.source
        return "%s, preloaded by %s (also in skills:)" % (skill.source, self.harness.label)


class Refused(Exception):
    """A declared name that refuses the spawn, found by ``build_briefing(until_refused=True)``."""

    def __init__(self, skill):
        Exception.__init__(self, skill.name)
        self.skill = skill


def build_briefing(agent, machine, session=False, rules=None, until_refused=False):
    """Resolve every declared name once; decide which the hook delivers itself.

    The skills of the ``rules`` that apply (default: every rule matching the agent) come
    after the agent's own, rule by rule, each name once: they resolve where the agent's own
    do, and are checked, sized and delivered with them (README "Rules").

    ``until_refused``: stop at the first name that cannot be resolved, with a Briefing that
    holds it alone (it denies, and says nothing else true). For the hook outputs after the
    first, which say nothing when the spawn is refused: with thousands of missing names,
    each of Claude Code's parts 2..8 then resolves one, not all of them.
    """
    harness = HARNESSES[agent.harness]
    if rules is None:
        rules = matching_rules(machine, harness, agent)
    try:
        return _built(harness, agent, machine, session, rules, until_refused)
    except Refused as refused:  # only ever raised until_refused
        return Briefing(agent, [refused.skill], [], session, rules)


def _built(harness, agent, machine, session, rules, until_refused):
    def resolve(name, source):
        skill = resolve_skill(harness, machine, name, source)
        if until_refused and skill.problem:
            raise Refused(skill)
        return skill

    checked, delivered, seen = [], [], set()
    native = [resolve(name, "native") for name in agent.native] if harness.preloads_native else []
    if not session:
        # The harness's own preload skips some entries that exist: briefing delivers those.
        for skill in native:
            if not skill.problem:
                skill.skip = harness.native_skip(machine, skill)
    def key_of(skill):
        # A skill only the harness holds (no file: a built-in) is the same skill by its name.
        return machine.real_path(skill.path) if skill.path else ("held", skill.name)
    preloaded = {key_of(s) for s in native if not s.problem and not s.skip}
    from_rules, named = [], set(agent.skills) | {s.name for s in native}
    for rule in rules:
        for name in rule.skills:
            if name not in named:  # declared by the agent, or by an earlier rule: once is enough
                named.add(name)
                skill = resolve(name, "rule")
                skill.rule = rule
                from_rules.append(skill)
    renderings = {}
    for skill in [resolve(name, "briefing") for name in agent.skills] + from_rules + native:
        checked.append(skill)
        if skill.problem:
            continue
        key = key_of(skill)
        if key in seen:
            continue  # the same skill declared twice, perhaps under two names
        if not session and key in preloaded:
            continue  # the harness preloads it itself in a subagent: never inject it again
        if skill.path is None:
            # Only the harness can deliver it (skill.held says why), and here it will not.
            skill.problem = "%s (%s)" % ((
                "%s skips it here: %s" % (harness.label, skill.skip) if skill.skip else
                "%s preloads nothing into an agent session" % harness.label if session else
                "only %s's own preload delivers it, not briefing" % harness.label), skill.held)
            continue
        seen.add(key)
        # What the hook delivers is what the harness would: rendered (its size, the seal and
        # every part are of this text), or refused when a hook cannot render it so.
        rendering = harness.render_skill(machine, skill)
        if rendering is not None:
            renderings[id(skill)] = rendering
            if rendering.problem:
                skill.problem = render_problem(rendering)
                if skill.source != "native" and harness.preloads_native and not session:
                    rendering.skip = harness.native_skip(machine, skill)  # is preloading it a fix?
                continue
            skill.body, skill.size = rendering.text, rendering.size
        delivered.append(skill)
    entries, files = (), ()
    if agent.files or any(rule.files for rule in rules):
        # Project files (docs/files.md): after the skills, each once, none the harness already loads.
        from .standing import build_entries, resolve_entries
        entries = build_entries(machine, harness, agent, rules)
        files = resolve_entries(machine, entries, lambda path: harness.loads_file(machine, agent, path, session))
    return Briefing(agent, checked, delivered, session, rules, renderings, entries, files,
                    harness.unreachable(machine, agent))


def resolve_skill(harness, machine, name, source):
    """``name`` as ``harness`` resolves it; a bare name it does not know, then in the private folders.

    Private skills (docs/private-skills.md) come after every root of the harness, so that
    no declaration changes meaning. A native ``skills:`` entry never reaches one, because
    the harness itself never looks there: it stays missing, and says where the file is.
    """
    skill = harness.resolve_skill(machine, name, source)
    if skill.problem != "unknown skill" or ":" in name:  # a valid name (it is unknown, not invalid)
        return skill  # of a plugin: never a private skill
    from .private import native_hint, private_skill  # only after a miss: most spawns never load it
    found = private_skill(machine, harness.key, name, source)
    if found is None:
        # Where a near miss is picked from (near.near_of), listed only when a text names this skill:
        # a hook output that says nothing (a refused spawn's parts 2..8) lists nothing.
        skill.near_pool = (harness, machine)
        return skill
    if source == "native":
        skill.passed.insert(0, native_hint(harness, found))
        return skill
    return found


def render_problem(rendering):
    """A Skill's problem for a body the harness renders in a way a hook cannot: the line first,
    so that a refusal, which clips a problem to SHOWN_PROBLEM bytes, still names it."""
    if rendering.line is None:
        return rendering.problem
    number, text = rendering.line
    return "line %d: %s: %s" % (number, clip(text.strip(), 80), rendering.problem)


def is_off(skill):
    """A skill that a setting turned off: refused like a missing one, never delivered."""
    return bool(skill.problem and skill.override and skill.override[1] == "off")


def resolve(harness, machine, agent_type, session=False, agent=None, everything=False, until_refused=False):
    """The Briefing of ``agent_type`` in ``harness``, or None when nothing briefs that agent.

    ``session``: an agent session (``claude --agent``), where the harness offers them;
    ``everything``: deliver every declared skill, native ones included, as in a session
    (a subagent after a compaction that dropped what the harness preloaded).
    ``agent`` is the already found file, so that a caller that looked it up
    does not pay for the lookup twice. An agent without a file (a built-in, or
    one the harness defines elsewhere) is briefed by the rules that match it.
    ``until_refused``: as in ``build_briefing``.
    """
    if agent is None:
        if not isinstance(agent_type, str) or not agent_type:
            return None
        agent = harness.find_agent(machine, agent_type)
        if agent is None:
            if split_plugin_name(agent_type)[1] is None:
                return None  # not a name any agent can have
            # The built-in the harness runs for that spelling: its rules are that built-in's (issue 43).
            agent = Agent(harness.key, harness.builtin_name(machine, agent_type), None)
    rules = matching_rules(machine, harness, agent)
    if not agent.declares and not rules:
        return None
    return build_briefing(agent, machine, (session and harness.session_agents) or everything, rules, until_refused)


def claude_briefing(agent_type, cwd, home, env=None):
    """Convenience for tests and tools: the Claude Code Briefing of ``agent_type``."""
    return resolve(HARNESSES["claude"], Machine(cwd, dict(env or {}, HOME=home)), agent_type)


def copilot_briefing(agent_type, cwd, home, env=None):
    """Convenience for tests and tools: the Copilot CLI Briefing of ``agent_type``."""
    return resolve(HARNESSES["copilot"], Machine(cwd, dict(env or {}, HOME=home)), agent_type)


def codex_briefing(agent_type, cwd, home, env=None):
    """Convenience for tests and tools: the Codex Briefing of ``agent_type``."""
    return resolve(HARNESSES["codex"], Machine(cwd, dict(env or {}, HOME=home)), agent_type)


def not_briefed_message(briefing):
    return "briefing: agent '%s' NOT briefed: %s in %s. Fix the file; `briefing-doctor` shows the details." % (
        briefing.agent.name, briefing.unreadable, display_path(briefing.agent.path))
