"""Refusal is exact (issue 6, item 6): a property over generated layouts.

A spawn is refused exactly when some declared name (``briefing:`` or, for
Claude Code, native ``skills:``) is not present in any root the harness
searches, or when the briefing is too large to deliver whole -- in both
directions, over generated declarations and file system layouts.

The oracle below is written from the contract (where each harness looks, in
what order, which plugins count), not from the hook's code: a name is present
when some root the harness searches holds ``<name>/SKILL.md`` as a regular
file of usable size. Sizes are generated far from the delivery limits (small
skills of at most 400 bytes; "big" ones of 45 kB for Claude Code, "huge" ones
of 300 kB for Codex), so "too large" is exact too: two distinct big skills
delivered by the hook for Claude Code (45 kB fits in the parts, 90 kB does
not), two huge ones for Codex (over its 512 KiB context cap).

Thousands of cases must run in seconds, so the resolver is called in-process,
with one Machine per layout as the doctor uses one per run; a few hundred generated cases
then go through the hook's own ``main()`` (and a tenth of them through a
real process) to pin that the in-process verdict is what the guard prints.

Reproduce a failure with the seed it prints:
``BRIEFING_PROPERTY_SEED=<seed> python -m pytest tests/test_refusal_property.py``.
``BRIEFING_PROPERTY_SCALE=10`` runs ten times as many layouts.
"""
import json
import os
import random
import subprocess
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import HOOK, HOOK_PYTHON, load_hook, registered_command, run_in_process

SEED = int(os.environ.get("BRIEFING_PROPERTY_SEED", "20261130"))
SCALE = float(os.environ.get("BRIEFING_PROPERTY_SCALE", "1"))
LAYOUTS = int(50 * SCALE)  # per harness
DECLARATIONS = 60  # per layout
CROSS_CHECKED_CASES = 100  # per harness: the guard for each, SubagentStart part 1 for a quarter
PROCESS_EVERY = 10  # of those, every tenth also through a real process

BIG = 45000  # Claude Code: one fits in PARTS parts of 10,000 characters, two do not
HUGE = 270000  # Codex: one fits in its 512 KiB context, two do not
OVER_CAP = 1024 * 1024 + 4096  # larger than any SKILL.md the hook may read (a sparse file)




@pytest.fixture(scope="module")
def hook():
    return load_hook()


# --------------------------------------------------------------------------- generation

ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789-_"


def gen_name(rng, taken):
    while True:
        length = rng.randint(1, 10)
        name = "".join(rng.choice(ALPHABET) for _ in range(length))
        if rng.random() < 0.1 and length > 2:
            name = name[0] + "." + name[2:]  # a dot inside is a plain character
        if rng.random() < 0.05:
            name = name.upper()
        if name[0] not in "-_" and name not in taken:
            taken.add(name)
            return name


def body_of(rng, size):
    line = "%s line of skill text\n" % rng.choice(["alpha", "beta", "gamma", "delta"])
    text = (line * (size // len(line) + 1))[:size - 1] + "\n"
    return text


def write(path, data):
    data = data.encode("utf-8") if isinstance(data, str) else data
    try:
        handle = open(path, "wb")
    except FileNotFoundError:  # its folder is not there yet: made only then, for speed
        os.makedirs(os.path.dirname(path), exist_ok=True)
        handle = open(path, "wb")
    with handle:
        handle.write(data)


def skill_text(name, body):
    return "---\nname: %s\ndescription: Use when %s is needed.\n---\n%s" % (name, name, body)


class Entry(object):
    """One thing placed at ``<root>/<name>``: a usable skill or a non-skill."""

    def __init__(self, kind, size=0, real=None):
        self.kind = kind  # "skill", "linked" (skill folder that is a symlink), "over-cap",
        #                   "empty" (a folder without SKILL.md), "file" (a plain file, no folder)
        self.size = size
        self.real = real  # the folder the skill text really lives in


class Layout(object):
    """A generated machine: roots with entries, plugins, agents with declarations."""

    def __init__(self, harness, base, index, rng):
        self.harness, self.base, self.index, self.rng = harness, base, index, rng
        self.home = os.path.join(base, "home")
        self.project = os.path.join(base, "project")
        self.cwd = self.project
        self.roots = []  # [(root path, {name: Entry})], in the harness's precedence order
        self.plugins = {}  # namespace -> [root path, ...] of enabled plugins (Claude: manifest name)
        self.plugin_roots = []  # [(namespace or None, skills folder, {name: Entry}, enabled)]
        self.decoys = []  # places that are not roots, holding skills that must not count
        self.cases = []  # [(agent name, briefing names, native names)]
        self.big = set()  # pool names whose every copy is big
        self.machine = None  # the hook's Machine for this layout, made at the first resolution
        os.makedirs(os.path.join(self.project, ".git"))
        os.makedirs(self.home)

    # -- the oracle -------------------------------------------------------------

    def lookup(self, name):
        """(present, entry) for a declared name, from the contract's search order."""
        # Claude Code: plugins scoped to this project come before user-wide ones
        plugins = [p for p in self.plugin_roots if p[4]] + [p for p in self.plugin_roots if not p[4]]
        if ":" in name:
            plugin, _, skill = name.partition(":")
            if not plain(plugin) or not plain(skill):
                return None
            for namespace, folder, entries, enabled, _ in plugins:
                if enabled and namespace == plugin and usable(entries.get(skill)):
                    return entries[skill]
            return None
        if not plain(name):
            return None
        for _, entries in self.roots:
            if usable(entries.get(name)):
                return entries[name]
        if self.harness == "claude":  # bare names reach enabled Claude Code plugins too
            for namespace, folder, entries, enabled, _ in plugins:
                if enabled and usable(entries.get(name)):
                    return entries[name]
        return None

    def expect(self, skills, native):
        """(missing names, too large) for a declaration.

        A SKILL.md over the hook's read cap is a skill the harness has but the
        hook cannot deliver: it counts as missing (refused, named). The hook
        delivers each briefing skill once, and none that the native field
        already preloads (Claude Code subagents).
        """
        missing, delivered = [], []
        native_real = {e.real for e in map(self.lookup, native) if e is not None and e.kind != "over-cap"}
        for name in list(skills) + list(native):
            entry = self.lookup(name)
            if entry is None or entry.kind == "over-cap":
                missing.append(name)
            elif name in skills and entry.real not in native_real \
                    and entry.real not in [e.real for e in delivered]:
                delivered.append(entry)
        heavy = sum(1 for e in delivered if e.size >= BIG)
        too_large = not missing and heavy >= 2
        return dedupe(missing), too_large


def usable(entry):
    """A folder whose SKILL.md the harness loads (over-cap included: the harness has it)."""
    return entry is not None and entry.kind in ("skill", "linked", "over-cap")


def plain(name):
    return name and "/" not in name and "\\" not in name and name not in (".", "..")


def dedupe(items):
    out = []
    for item in items:
        if item not in out:
            out.append(item)
    return out


def place(layout, root, name, entry_kind, rng, sizes):
    """Create ``<root>/<name>`` of the given kind; returns its Entry."""
    folder = os.path.join(root, name)
    if entry_kind == "empty":
        os.makedirs(folder, exist_ok=True)
        return Entry("empty")
    if entry_kind == "file":
        write(folder, "not a skill folder\n")
        return Entry("file")
    size = sizes()
    if entry_kind == "over-cap":
        write(os.path.join(folder, "SKILL.md"), skill_text(name, "x\n"))
        with open(os.path.join(folder, "SKILL.md"), "r+b") as handle:
            handle.truncate(OVER_CAP)
        return Entry("over-cap", OVER_CAP, os.path.realpath(folder))
    if entry_kind == "linked":
        real = os.path.join(layout.base, "store", "%s-%d" % (name, rng.randrange(10 ** 9)))
        write(os.path.join(real, "SKILL.md"), skill_text(name, body_of(rng, size)))
        os.makedirs(root, exist_ok=True)
        target = real if rng.random() < 0.5 else os.path.relpath(real, root)
        os.symlink(target, folder)
        return Entry("linked", size, os.path.realpath(real))
    write(os.path.join(folder, "SKILL.md"), skill_text(name, body_of(rng, size)))
    return Entry("skill", size, os.path.realpath(folder))


def random_kind(rng, allow_over_cap):
    roll = rng.random()
    if roll < 0.70:
        return "skill"
    if roll < 0.80:
        return "linked"
    if roll < 0.90:
        return "empty"
    if roll < 0.97 or not allow_over_cap:
        return "file"
    return "over-cap"


def size_maker(rng, layout, name):
    """Sizes for the copies of ``name``: a big name is big everywhere, so "too large" is exact."""
    big = name in layout.big

    def sizes():
        if big:
            return BIG if layout.harness == "claude" else HUGE
        return rng.randint(20, 400)
    return sizes


def fill_roots(layout, rng, roots, pool, present=0.8, extra=0.2):
    """Place each pool name: usable in one random root with probability ``present``,
    plus anything (usable, linked, over the cap, or not a skill at all) in others."""
    placed = [dict() for _ in roots]
    for name in pool:
        sizes = size_maker(rng, layout, name)
        home = rng.randrange(len(roots)) if rng.random() < present else None
        for i in range(len(roots)):
            if i == home:
                kind = "skill" if rng.random() < 0.85 else "linked"
            elif rng.random() < extra and name not in layout.big:  # keep the big files few
                kind = random_kind(rng, allow_over_cap=rng.random() < 0.3)
            else:
                continue
            placed[i][name] = place(layout, roots[i], name, kind, rng, sizes)
    return placed


def declared_names(rng, layout, pool, namespaces, count):
    names = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.70:
            names.append(rng.choice(pool))
        elif roll < 0.80 and namespaces:
            names.append("%s:%s" % (rng.choice(namespaces), rng.choice(pool)))
        elif roll < 0.85:
            names.append(gen_name(rng, set(pool)))  # never placed anywhere
        elif roll < 0.90:
            name = rng.choice(pool)
            names.append(name.swapcase() if name.swapcase() != name else name + "x")
        elif roll < 0.95:
            names.append(rng.choice(["../%s", "%s/", "./%s", "sub/../%s", "%s/../%s"]).replace(
                "%s", rng.choice(pool)))
        else:
            names.append(rng.choice(pool))
    return names


# -- Claude Code --------------------------------------------------------------

def make_pool(layout, rng):
    taken = set()
    pool = [gen_name(rng, taken) for _ in range(rng.randint(4, 9))]
    layout.big = {name for name in pool if rng.random() < 0.3}
    return pool


def claude_layout(base, index, rng):
    layout = Layout("claude", base, index, rng)
    pool = make_pool(layout, rng)
    roots = [os.path.join(layout.project, ".claude", "skills"), os.path.join(layout.home, ".claude", "skills")]
    placed = fill_roots(layout, rng, roots, pool)
    layout.roots = list(zip(roots, placed))
    # decoys: folders that look like skill roots but are not searched by Claude Code
    for decoy in (os.path.join(layout.project, "sub", ".claude", "skills"),
                  os.path.join(layout.project, ".claude", "skill"),
                  os.path.join(layout.project, ".codex", "skills"),
                  os.path.join(layout.home, ".agents", "skills"),
                  os.path.join(layout.home, ".claude", "plugins", "cache", "mk", "notinstalled", "1.0.0",
                               "skills")):
        for name in rng.sample(pool, min(len(pool), 2)):
            place(layout, decoy, name, "skill", rng, lambda: 50)
    # plugins: installed or not, enabled or not (merged over three settings files), maybe scoped
    installed, enabled_user, enabled_project, enabled_local = {}, {}, {}, {}
    namespaces = []
    for p in range(rng.randint(0, 3)):
        key_name, market = "pl%d" % p, rng.choice(["mk", "other"])
        key = "%s@%s" % (key_name, market)
        namespace = key_name if rng.random() < 0.7 else "ns%d" % p
        root = os.path.join(layout.home, ".claude", "plugins", "cache", market, key_name, "1.%d.0" % p)
        manifest = {"name": namespace, "version": "1.0.0"}
        extra = rng.random() < 0.3
        if extra:
            manifest["skills"] = ["./extra"]
        write(os.path.join(root, ".claude-plugin", "plugin.json"), json.dumps(manifest))
        folders = [os.path.join(root, "skills")] + ([os.path.join(root, "extra")] if extra else [])
        entries = {}
        for folder in folders:  # skills/ first, then the manifest's paths
            for name, entry in fill_roots(layout, rng, [folder], pool, present=0.3, extra=0.1)[0].items():
                if not usable(entries.get(name)):
                    entries[name] = entry
        roll = rng.random()
        record = {"scope": "user", "installPath": root, "version": "1.0.0"}
        scoped = roll < 0.15
        if scoped:
            record = {"scope": "project", "projectPath": layout.project, "installPath": root, "version": "1.0.0"}
        elif roll < 0.25:
            record = {"scope": "local", "projectPath": os.path.join(base, "elsewhere"), "installPath": root,
                      "version": "1.0.0"}
        counts = not (0.15 <= roll < 0.25)  # an entry scoped to another project does not count here
        is_installed = rng.random() < 0.85
        if is_installed:
            installed[key] = [record]
        for target in (enabled_user, enabled_project, enabled_local):
            r = rng.random()
            if r < 0.5:
                target[key] = r < 0.4  # later settings files win per key
        merged = None
        for target in (enabled_user, enabled_project, enabled_local):
            if key in target:
                merged = target[key]
        enabled = is_installed and counts and merged is True
        layout.plugin_roots.append((namespace, root, entries, enabled, scoped))
        namespaces.append(namespace)
    namespaces.append("nowhere")
    write(os.path.join(layout.home, ".claude", "plugins", "installed_plugins.json"),
          json.dumps({"version": 2, "plugins": installed}))
    for path, data in ((os.path.join(layout.home, ".claude", "settings.json"), enabled_user),
                       (os.path.join(layout.project, ".claude", "settings.json"), enabled_project),
                       (os.path.join(layout.project, ".claude", "settings.local.json"), enabled_local)):
        if data or rng.random() < 0.3:
            write(path, json.dumps({"enabledPlugins": data}))
    # agents
    for i in range(DECLARATIONS):
        agent = "d%d" % i
        skills = declared_names(rng, layout, pool, namespaces, rng.choice([0, 1, 2, 2, 3, 3, 4]))
        native = declared_names(rng, layout, pool, namespaces, rng.randint(1, 2)) if rng.random() < 0.25 else []
        # mostly where the fast path finds it: agent lookup is not what this property is about
        where = weighted(rng, [(0.92, os.path.join(layout.project, ".claude", "agents")),
                               (0.04, os.path.join(layout.project, ".claude", "agents", "team")),
                               (0.04, os.path.join(layout.home, ".claude", "agents"))])
        stem = agent if rng.random() < 0.96 else "file-%s" % agent
        write(os.path.join(where, stem + ".md"), claude_agent_text(rng, agent, skills, native))
        layout.cases.append((agent, skills, native))
    return layout


def weighted(rng, choices):
    roll, acc = rng.random(), 0.0
    for weight, value in choices:
        acc += weight
        if roll < acc:
            return value
    return choices[-1][1]


# Plain scalars YAML reads as null, a boolean or a number are no names: the hook refuses them
# (issue 19, defect 7), so a name that could be one is quoted. No number starts with a letter.
NOT_PLAIN = {"null", "true", "false", "yes", "no", "on", "off"}


def yaml_item(rng, name):
    style = rng.random()
    if style < 0.6 and name[0].isalpha() and name.lower() not in NOT_PLAIN:
        return name
    if style < 0.8:
        return '"%s"' % name
    return "'%s'" % name


def claude_agent_text(rng, agent, skills, native):
    lines = ["---", "name: %s" % agent, "description: generated agent %s" % agent]
    if native:
        if rng.random() < 0.5:
            comma = ", ".join(native)
            # one name alone is a plain scalar like any other (``skills: 6`` is a number in YAML)
            lines.append("skills: %s" % (comma if len(native) > 1 else yaml_item(rng, comma)))
        else:
            lines.append("skills:")
            lines += ["  - %s" % yaml_item(rng, n) for n in native]
    if skills or rng.random() < 0.3:
        lines.append("briefing:")
        if rng.random() < 0.5:
            lines.append("  skills: [%s]%s" % (", ".join(yaml_item(rng, n) for n in skills),
                                               "  # flow" if rng.random() < 0.3 else ""))
        else:
            lines.append("  skills:%s" % ("  # block" if rng.random() < 0.3 else ""))
            lines += ["    - %s%s" % (yaml_item(rng, n), "  # why" if rng.random() < 0.2 else "")
                      for n in skills]
            if not skills:
                lines[-1] = "  skills: []"
    lines.append("---")
    text = "\n".join(lines) + "\nYou are %s.\n" % agent
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    if rng.random() < 0.05:
        text = "\ufeff" + text
    return text


# -- Codex --------------------------------------------------------------------

def codex_layout(base, index, rng):
    layout = Layout("codex", base, index, rng)
    pool = make_pool(layout, rng)
    depth = rng.randint(0, 2)
    folders = [layout.project]
    for d in range(depth):
        folders.append(os.path.join(folders[-1], "sub%d" % d))
    os.makedirs(folders[-1], exist_ok=True)
    layout.cwd = folders[-1]
    codex_home = os.path.join(layout.home, ".codex")
    roots = []
    for folder in reversed(folders):  # from cwd up to the project root
        roots += [os.path.join(folder, ".codex", "skills"), os.path.join(folder, ".agents", "skills")]
    roots += [os.path.join(codex_home, "skills"), os.path.join(layout.home, ".agents", "skills"),
              os.path.join(codex_home, "skills", ".system")]
    placed = fill_roots(layout, rng, roots, pool)
    layout.roots = list(zip(roots, placed))
    for decoy in (os.path.join(base, ".codex", "skills"),  # above the project root
                  os.path.join(base, ".agents", "skills"),
                  os.path.join(layout.cwd, "below", ".codex", "skills"),  # below cwd
                  os.path.join(layout.project, ".claude", "skills"),
                  os.path.join(layout.home, ".claude", "skills")):
        for name in rng.sample(pool, min(len(pool), 2)):
            place(layout, decoy, name, "skill", rng, lambda: 50)
    config = []
    namespaces = []
    for p in range(rng.randint(0, 3)):
        plugin, market = "cp%d" % p, rng.choice(["mk", "other"])
        root = os.path.join(codex_home, "plugins", "cache", market, plugin, "0.%d.0" % p)
        write(os.path.join(root, ".codex-plugin", "plugin.json"),
              json.dumps({"name": plugin, "version": "0.%d.0" % p}))
        entries = fill_roots(layout, rng, [os.path.join(root, "skills")], pool, present=0.4, extra=0.1)[0]
        roll = rng.random()
        if roll < 0.7:
            config.append('[plugins."%s@%s"]\nenabled = true\n' % (plugin, market))
            enabled = True
        elif roll < 0.85:
            config.append('[plugins."%s@%s"]\nenabled = false\n' % (plugin, market))
            enabled = False
        else:
            enabled = False
        layout.plugin_roots.append((plugin, root, entries, enabled, False))
        namespaces.append(plugin)
    namespaces.append("nowhere")
    if config or rng.random() < 0.5:
        write(os.path.join(codex_home, "config.toml"), "model = \"x\"\n\n" + "\n".join(config))
    for i in range(DECLARATIONS):
        agent = "d%d" % i
        skills = declared_names(rng, layout, pool, namespaces, rng.choice([0, 1, 2, 2, 3, 3, 4]))
        where = weighted(rng, [(0.92, os.path.join(layout.project, ".codex", "agents")),
                               (0.04, os.path.join(layout.project, ".codex", "agents", "team")),
                               (0.04, os.path.join(codex_home, "agents"))])
        stem = agent if rng.random() < 0.96 else "file-%s" % agent
        write(os.path.join(where, stem + ".toml"), codex_role_text(rng, agent, skills))
        layout.cases.append((agent, skills, []))
    return layout


def codex_role_text(rng, agent, skills):
    items = ", ".join(json.dumps(s) if rng.random() < 0.8 else "'%s'" % s for s in skills)
    lines = []
    legacy = rng.random() < 0.05 and skills
    if skills and not legacy:
        lines.append("# briefing: skills = [%s]%s" % (items, "  # why" if rng.random() < 0.2 else ""))
    lines += ['name = "%s"' % agent, 'description = "generated role %s"' % agent,
              'developer_instructions = """\nYou are %s.\n# briefing: skills = ["not-a-declaration"]\n"""'
              % agent]
    if legacy:
        lines += ["", "[briefing]", "skills = [%s]" % items]
    text = "\n".join(lines) + "\n"
    if rng.random() < 0.1:
        text = text.replace("\n", "\r\n")
    return text


# --------------------------------------------------------------------------- running

def in_process(hook, layout, agent):
    """The Briefing of ``agent`` as the pre-flight and the doctor resolve a machine's agents: one
    Machine for the whole layout, whose memo (roots, folder indexes, real paths: facts about the
    files, never a Skill) all its agents share. A hook process makes a Machine of its own; the
    cross-check below holds these verdicts to what the hook prints, in-process and as a process."""
    if layout.machine is None:
        layout.machine = hook.Machine(layout.cwd, {"HOME": layout.home})
    return hook.resolve(hook.HARNESSES[layout.harness], layout.machine, agent)


def generate(tmp_path_factory, harness, seed):
    rng = random.Random("%s-%s" % (seed, harness))
    make = claude_layout if harness == "claude" else codex_layout
    base = tmp_path_factory.mktemp("property-%s" % harness)
    return [make(os.path.join(str(base), "L%d" % i), i, rng) for i in range(LAYOUTS)]


@pytest.fixture(scope="module")
def layouts(tmp_path_factory):
    return {harness: generate(tmp_path_factory, harness, SEED) for harness in ("claude", "codex")}


def describe(layout, agent, skills, native, expected, got):
    lines = ["seed %s, %s layout %d (%s), agent %s" % (SEED, layout.harness, layout.index, layout.base, agent),
             "  briefing: %r" % (skills,), "  native:   %r" % (native,),
             "  expected: missing=%r too_large=%r" % expected, "  got:      %s" % got]
    for name in dedupe(list(skills) + list(native)):
        entry = layout.lookup(name)
        lines.append("    %-20r -> %s" % (name, "absent" if entry is None else "%s %d bytes at %s" % (
            entry.kind, entry.size, entry.real)))
    return "\n".join(lines)


def verdict_text(briefing):
    if briefing is None:
        return "None (no declaration)"
    return "denies=%r missing=%r too_large=%r total=%r limit=%r" % (
        briefing.denies, [s.name for s in briefing.missing], briefing.too_large,
        briefing.total_bytes, briefing.limit_bytes)


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_refusal_is_exact(hook, layouts, harness):
    failures, counts = [], {"cases": 0, "deny": 0, "missing": 0, "too_large": 0, "none": 0}
    for layout in layouts[harness]:
        for agent, skills, native in layout.cases:
            counts["cases"] += 1
            missing, too_large = layout.expect(skills, native)
            briefing = in_process(hook, layout, agent)
            if not skills and not native:
                counts["none"] += 1
                ok = briefing is None or not briefing.denies
            else:
                ok = briefing is not None and briefing.unreadable is None \
                    and briefing.denies == bool(missing or too_large) \
                    and dedupe(s.name for s in briefing.missing) == missing \
                    and bool(briefing.too_large) == too_large
            counts["deny"] += bool(missing or too_large)
            counts["missing"] += bool(missing)
            counts["too_large"] += too_large
            if not ok:
                failures.append(describe(layout, agent, skills, native, (missing, too_large),
                                         verdict_text(briefing)))
    print("%s: %r" % (harness, counts))
    # the generator must reach every region of the property, or it proves little
    assert counts["cases"] >= LAYOUTS * DECLARATIONS
    assert counts["missing"] > counts["cases"] // 10 and counts["too_large"] >= 10 * SCALE
    assert counts["cases"] - counts["deny"] > counts["cases"] // 5
    assert not failures, "%d of %d cases wrong:\n\n%s" % (len(failures), counts["cases"],
                                                         "\n\n".join(failures[:15]))


# --------------------------------------------------------------------------- in-process == subprocess

def guard_payload(layout, agent):
    transcript = os.path.join(layout.home, ".claude", "projects", "-p", "s.jsonl")
    base = {"session_id": "s-1", "cwd": layout.cwd, "hook_event_name": "PreToolUse"}
    if layout.harness == "claude":
        return dict(base, transcript_path=transcript, tool_name="Agent", permission_mode="default",
                    tool_use_id="toolu_1",
                    tool_input={"description": "d", "prompt": "p", "subagent_type": agent})
    return dict(base, transcript_path=os.path.join(layout.home, ".codex", "sessions", "r.jsonl"),
                turn_id="t-1", model="m", permission_mode="bypassPermissions", tool_name="spawn_agent",
                tool_use_id="call_1", tool_input={"agent_type": agent, "message": "m"})


def spawn_payload(layout, agent):
    payload = guard_payload(layout, agent)
    for key in ("tool_name", "tool_input", "tool_use_id", "permission_mode"):
        payload.pop(key)
    payload.update(hook_event_name="SubagentStart", agent_id="a1", agent_type=agent)
    return payload


def spawned(agent):
    return int(agent[1:]) % 4 == 0


def run_hook(layout, payload, args=(), as_process=False):
    """What the hook prints for ``payload``: through its own ``main()`` in-process
    (stdio, environment and working directory swapped, as in every unit test),
    or, for ``as_process``, as a real process."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": layout.home, "LANG": "C.UTF-8"}
    stdin = json.dumps(payload).encode()
    if as_process:
        proc = subprocess.run([HOOK_PYTHON] + registered_command(HOOK, env) + list(args), input=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=env, cwd=layout.cwd, timeout=60)
        rc, out, err = proc.returncode, proc.stdout.decode("utf-8", "replace"), proc.stderr.decode("utf-8", "replace")
    else:
        result = run_in_process(HOOK, list(args), stdin, env, layout.cwd, 60)
        rc, out, err = result.rc, result.out, result.err
    assert rc == 0 and "Traceback" not in err, (out, err)
    return json.loads(out) if out.strip() else None


@pytest.mark.parametrize("harness", ["claude", "codex"])
def test_in_process_verdict_is_what_the_hook_prints(hook, layouts, harness, monkeypatch):
    rng = random.Random("%s-cross-%s" % (SEED, harness))
    cases = [(layout, agent) for layout in layouts[harness] for agent, skills, native in layout.cases
             if skills or native]
    # every refused case is interesting; fill up with allowed ones
    picked = rng.sample(cases, min(len(cases), CROSS_CHECKED_CASES))
    jobs = []
    for layout, agent in picked:
        monkeypatch.setenv("HOME", layout.home)  # the reason shows paths relative to ~
        briefing = in_process(hook, layout, agent)
        jobs.append((layout, agent, briefing, briefing.reason() if briefing is not None else ""))
    monkeypatch.undo()

    def one(job, as_process=False):
        layout, agent, briefing, reason = job
        guard = run_hook(layout, guard_payload(layout, agent), (), as_process)
        spawn = (run_hook(layout, spawn_payload(layout, agent), ("--part", "1"), as_process)
                 if spawned(agent) else None)
        return guard, spawn

    # Every case in-process; every PROCESS_EVERY-th also as a real process,
    # which must print exactly the same.
    outputs = [one(job) for job in jobs]
    sample = list(range(0, len(jobs), PROCESS_EVERY))
    with ThreadPoolExecutor(max_workers=4) as pool:
        as_processes = list(pool.map(lambda i: one(jobs[i], as_process=True), sample))
    for i, printed in zip(sample, as_processes):
        assert printed == outputs[i], "layout %d agent %s: in-process %r, as a process %r" % (
            jobs[i][0].index, jobs[i][1], outputs[i], printed)
    failures, denied = [], 0
    for (layout, agent, briefing, reason), (guard, spawn) in zip(jobs, outputs):
        denies = briefing is not None and briefing.unreadable is None and briefing.denies
        denied += denies
        want = {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": reason}} if denies else None
        if guard != want:
            failures.append("%s layout %d agent %s: in-process %r, guard printed %r" % (
                harness, layout.index, agent, want, guard))
        if not spawned(agent):
            continue
        context = ((spawn or {}).get("hookSpecificOutput") or {}).get("additionalContext") or ""
        if denies != context.startswith('<briefing agent="%s" status="abort"' % agent):
            failures.append("%s layout %d agent %s: in-process denies=%r, SubagentStart part 1: %r" % (
                harness, layout.index, agent, denies, context[:300]))
        if briefing is not None and not denies and briefing.delivered and "<skill " not in context:
            failures.append("%s layout %d agent %s: allowed but part 1 carries no skill: %r" % (
                harness, layout.index, agent, spawn))
    assert denied > len(jobs) // 10, "too few refusals among the cross-checked cases"
    assert not failures, "\n".join(failures[:20])


# --------------------------------------------------------------------------- shadowing
# A folder that is not a usable skill in a nearer root must not hide a usable
# skill of the same name in a farther one: the harness skips what it cannot
# load and loads the farther skill, so the name is not missing and refusing
# the spawn would be a false refusal. (The generator above never puts a
# broken entry in front of a usable one; these cases pin that region.)

SHADOWS = [
    ("empty-folder", lambda p: os.makedirs(p)),
    ("skill-md-is-a-folder", lambda p: os.makedirs(os.path.join(p, "SKILL.md"))),
    ("dangling-skill-md", lambda p: (os.makedirs(p), os.symlink("nowhere.md", os.path.join(p, "SKILL.md")))),
    ("dangling-folder-link", lambda p: (os.makedirs(os.path.dirname(p), exist_ok=True),
                                        os.symlink("nowhere", p))),
    ("plain-file", lambda p: write(p, "x")),
]


@pytest.mark.parametrize("harness", ["claude", "codex"])
@pytest.mark.parametrize("shadow,make", SHADOWS, ids=[s[0] for s in SHADOWS])
def test_unusable_nearer_entry_does_not_hide_a_farther_skill(hook, tmp_path, harness, shadow, make):
    home, project = str(tmp_path / "home"), str(tmp_path / "project")
    os.makedirs(os.path.join(project, ".git"))
    if harness == "claude":
        near, far = os.path.join(project, ".claude", "skills"), os.path.join(home, ".claude", "skills")
        write(os.path.join(project, ".claude", "agents", "a.md"),
              "---\nname: a\ndescription: d\nbriefing:\n  skills: [s]\n---\n")
    else:
        near, far = os.path.join(project, ".codex", "skills"), os.path.join(home, ".codex", "skills")
        write(os.path.join(project, ".codex", "agents", "a.toml"), '# briefing: skills = ["s"]\nname = "a"\n')
    make(os.path.join(near, "s"))
    write(os.path.join(far, "s", "SKILL.md"), skill_text("s", "FAR\n"))
    briefing = hook.claude_briefing("a", project, home) if harness == "claude" else \
        hook.codex_briefing("a", project, home)
    assert briefing is not None and not briefing.denies, verdict_text(briefing)
