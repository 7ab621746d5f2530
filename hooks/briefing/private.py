"""Private skills (docs/private-skills.md): skill folders that no harness reads.

``.briefing/skills/<name>/SKILL.md`` in every folder the harness treats as the
project, nearest first, then ``$XDG_CONFIG_HOME/briefing/skills/<name>/SKILL.md``
(default ``~/.config/briefing/skills``): beside the rules files, in folders of
briefing's own, so that no harness lists them to anyone. Only the agents that
declare one receive it, whole, from the hook.

A declared bare name reaches these folders only after the harness's own roots
missed it (``resolution.resolve_skill``), so no existing declaration changes
meaning; a native ``skills:`` entry never does, because the harness itself does
not look here. Imported only when a name missed (and by the doctor): a spawn
whose skills the harness holds never loads this module.
"""
import os

from .files import display_path, is_inside, path_kind, real_path
from .harnesses import HARNESSES
from .lookup import load_skill
from .names import valid_skill_name
from .records import PRIVATE_ORIGIN, Skill
from .yaml_subset import meta_value


PRIVATE_SKILLS = "skills"  # in each folder that holds a rules file: <project>/.briefing/, ~/.config/briefing/


def private_roots(machine, key):
    """[(scope, folder)] of harness ``key``'s private skill folders.

    Precedence: each project folder's ``.briefing/skills``, nearest first, then the
    user's: the folders of the rules files (``Machine.rules_files``), found the same way.
    """
    return [(scope, os.path.join(os.path.dirname(path), PRIVATE_SKILLS))
            for scope, path in machine.rules_files(key)]


def live_private_roots(machine, key):
    return machine.live(("private skills", key), lambda: private_roots(machine, key))


def private_candidate(machine, root, name, source):
    """(Skill, usable) for ``<root>/<name>/SKILL.md``, or (None, False) when nothing is there.

    The rules of every other root (docs/private-skills.md "Security"): ``name`` is one
    folder name (the caller checked ``valid_skill_name``), the file is read through
    ``read_text`` (a regular file under the size cap, no special files), and nothing
    is read that a link takes outside the private folder. A candidate that is not a
    regular file inside it is not usable, and the next folder is tried, as a harness
    passes over a broken entry; a regular file stops the search, with its problem if
    it has one.
    """
    path = os.path.join(root, name, "SKILL.md")
    kind = path_kind(path)
    if kind is None:
        return None, False
    real = real_path(path)
    if not is_inside(real, machine.real_path(root)):
        return Skill(name, source, path=path, origin=PRIVATE_ORIGIN, problem=(
            "SKILL.md at %s leads outside %s (to %s): briefing reads nothing outside its private "
            "folders" % (path, display_path(root), display_path(real)))), False
    if kind != "file":
        return Skill(name, source, path=path, origin=PRIVATE_ORIGIN,
                     problem="SKILL.md at %s is not a regular file" % path), False
    skill = load_skill(name, source, path, PRIVATE_ORIGIN)
    declared = skill.meta.get("name")
    if not skill.problem and declared is not None and declared.strip() and meta_value(declared) != name:
        # A private skill is named by its folder: a frontmatter that says otherwise is a mistake
        # (a copied folder, a rename half done), and guessing which was meant could deliver the wrong text.
        skill.problem = ("its frontmatter name '%s' differs from its folder '%s' (SKILL.md at %s): a private "
                         "skill is named by its folder; make them agree" % (meta_value(declared) or declared,
                                                                          name, path))
    return skill, True


def private_skill(machine, key, name, source):
    """The private skill ``name`` for harness ``key`` (a Skill, origin PRIVATE_ORIGIN), or None.

    The first usable candidate in ``private_roots`` order; when none is usable, the first
    unusable one, which says why; None when no private folder holds the name.
    """
    if not valid_skill_name(name):
        return None
    unusable = None
    loads = HARNESSES[key].loads_scope
    for scope, root in live_private_roots(machine, key):
        if source != "briefing" and not loads(machine, scope):
            continue  # a rule brings nothing of a scope the session is isolated from (docs/agent-sdk.md)
        skill, usable = private_candidate(machine, root, name, source)
        if usable:
            return skill
        if unusable is None:
            unusable = skill
    return unusable


def native_hint(harness, skill):
    """Why a native ``skills:`` entry does not reach the private skill of its name, and what to do."""
    return (display_path(skill.path), "a private skill, which %s never reads: move the entry from skills: "
            "to briefing:" % harness.label)


# -- the doctor -------------------------------------------------------------------------------

def private_entries(machine, key):
    """[(scope, root, name)] of the skill folders in harness ``key``'s private folders, in order."""
    entries = []
    for scope, root in live_private_roots(machine, key):
        try:
            names = sorted(e.name for e in os.scandir(root) if not e.name.startswith("."))
        except OSError:
            continue
        entries += [(scope, root, name) for name in names if machine.is_dir(os.path.join(root, name))]
    return entries


def private_report(machine, harnesses, rows, rules):
    """One record per private skill folder that ``harnesses`` can reach (the doctor's list).

    ``rows`` and ``rules`` are the doctor's agent rows and rule records (their skill
    records carry ``origin`` and ``path``): who uses each private skill, per harness;
    a private skill that a harness skill of the same name shadows, or that nothing
    declares, is a ``WARN``.
    """
    from .harnesses import HARNESSES
    records, by_path = [], {}
    for key in harnesses:
        harness = HARNESSES[key]
        for scope, root, name in private_entries(machine, key):
            path = os.path.join(root, name, "SKILL.md")
            record = by_path.get(path)
            if record is None:
                skill = problem = None
                if not valid_skill_name(name):
                    problem = "not a valid skill name: no declaration can name it"
                else:
                    skill = private_candidate(machine, root, name, "briefing")[0]
                    problem = skill.problem if skill else "holds no SKILL.md"
                record = by_path[path] = {"name": name, "file": path, "scope": scope, "status": "ok",
                                          "bytes": skill.size if skill else None, "problem": problem,
                                          "warnings": [], "harnesses": {}}
                records.append(record)
            detail = {"agents": [], "rules": [], "shadowed_by": None, "overridden_by": None, "native": [],
                      "shown_by": harness.shows_path(machine, path)}
            record["harnesses"][key] = detail
            if not valid_skill_name(name):
                continue
            winner = private_skill(machine, key, name, "briefing")
            if winner is not None and winner.path != path:
                detail["overridden_by"] = winner.path
            own = harness.resolve_skill(machine, name, "briefing")
            if own.problem != "unknown skill":
                detail["shadowed_by"] = own.path or own.origin
            detail["agents"] = [row["agent"] for row in rows if row["harness"] == key and any(
                s["origin"] == PRIVATE_ORIGIN and s["path"] == path for s in row["skills"])]
            # A native skills: entry of that name: the harness never reads this folder for it.
            detail["native"] = [row["agent"] for row in rows if row["harness"] == key and any(
                s["source"] == "native" and s["name"] == name and s["status"] == "missing"
                for s in row["skills"])]
            detail["rules"] = [{"agents": rule["agents"], "file": rule["file"], "index": rule["index"]}
                               for rule in rules if any(
                                   s["origin"] == PRIVATE_ORIGIN and s["path"] == path
                                   for s in rule["harnesses"].get(key, {}).get("skills", ()))]
    for record in records:
        judge(record)
    return records


def judge(record):
    """A private skill's status and warnings, from what every harness found for it."""
    from .harnesses import HARNESSES
    details = record["harnesses"]
    warnings = record["warnings"]
    if record["problem"]:
        warnings.append("cannot be delivered: %s" % record["problem"])
    for key, detail in details.items():
        where = detail["shadowed_by"]
        if where:
            label = HARNESSES[key].label
            warnings.append("shadowed in %s: its own skill %s has the same name, so a declaration of '%s' "
                            "gets that one, never %s (%s looks first); rename one of them" % (
                                label, display_path(where) if os.path.isabs(where) else "(%s)" % where,
                                record["name"], display_path(record["file"]), label))
        if detail["shown_by"]:
            warnings.append("its name is shown: %s" % detail["shown_by"])
    used = any(d["agents"] or d["rules"] for d in details.values())
    overridden = all(d["overridden_by"] for d in details.values())
    native = [(HARNESSES[k].label, agent) for k, d in details.items() for agent in d["native"]]
    if not used and not overridden and not record["problem"] and native:
        warnings.append("only a native skills: entry names it (%s), and the harness never looks in the "
                        "private folders: move the entry under briefing:" % ", ".join(
                            "%s agent %s" % pair for pair in native))
    elif not used and not overridden and not record["problem"]:
        warnings.append("nothing declares it: no agent's declaration and no rule names '%s' (%s)" % (
            record["name"], ", ".join(HARNESSES[k].label for k in details)))
    record["status"] = "WARN" if warnings else "ok"
