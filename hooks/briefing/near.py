"""Near misses (issue 44): the existing names closest to one that does not exist, for every text
that names an unknown skill or agent ("did you mean demo-magic?").

Only ever computed after a miss (a spawn about to be refused, a doctor's FAIL), over at most
NEAR_CANDIDATES names, with a bounded edit distance of its own: difflib would bring heapq's
import into a refusal for a question this small (docs/doctor.md "Near misses").
"""
import os

NEAR_CANDIDATES = 500  # names compared at most, however many skills or agents exist
NEAR_SHOWN = 3


def fold(name):
    """Case and ``_``/``-`` do not count: ``demo_briefed`` is ``demo-briefed`` misspelt."""
    return name.lower().replace("_", "-")


def distance(a, b, cap):
    """The edit distance of ``a`` and ``b`` (two swapped neighbours are one edit: ``cladue``), or
    ``cap + 1`` as soon as it is certainly past ``cap``."""
    if abs(len(a) - len(b)) > cap:
        return cap + 1
    before, previous = None, list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            cost = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb))
            if before is not None and j > 1 and ca == b[j - 2] and a[i - 2] == cb:
                cost = min(cost, before[j - 2] + 1)
            current.append(cost)
        if min(current) > cap:
            return cap + 1
        before, previous = previous, current
    return previous[-1]


def near(name, candidates):
    """Up to NEAR_SHOWN of ``candidates`` closest to ``name``, closest first: none farther than a
    quarter of its length in edits (see ``cap``), never ``name`` itself."""
    if not isinstance(name, str) or not name:
        return []
    want = fold(name)
    # A quarter of the name in edits, at least one, at most three; a name of one to three
    # characters is one edit from almost anything: only its case or a _/- may differ.
    cap = 0 if len(want) < 4 else max(1, min(3, len(want) // 4))
    scored = set()
    for count, other in enumerate(candidates):
        if count >= NEAR_CANDIDATES:
            break
        if isinstance(other, str) and other and other != name:
            found = distance(want, fold(other), cap)
            if found <= cap:
                scored.add((found, other))
    return [other for _, other in sorted(scored)[:NEAR_SHOWN]]


def folder_names(roots):
    """The names in the folders ``roots`` (a skill is its folder), at most NEAR_CANDIDATES in all."""
    out = []
    for root in roots:
        try:
            entries = os.scandir(root)
        except (OSError, ValueError):
            continue
        with entries:
            for entry in entries:
                if len(out) >= NEAR_CANDIDATES:
                    return out
                if not entry.name.startswith("."):
                    out.append(entry.name)
    return out


def near_skills(harness, machine):
    """The names a near miss of a skill is picked from: the entries of the folders ``harness``
    finds skills in (its ``skill_roots``), at most NEAR_CANDIDATES."""
    if harness.skill_roots is None:
        return []
    try:
        return folder_names([root for _, root in harness.skill_roots(machine)])
    except Exception:  # a hint: never the reason a refusal fails
        return []


def near_of(skill):
    """The closest names to a missing skill, once per Skill: a text asks for it only for the skills
    it names (a refusal: REFUSAL_NAMES at most), so a spawn of thousands of missing names costs a
    few lookups (about 7 ms each over 500 names, measured), not thousands."""
    if skill.near is None:
        skill.near = near(skill.name, pool(*skill.near_pool)) if skill.near_pool else []
    return skill.near


def pool(harness, machine):
    """``near_skills``, once per harness and payload: a refusal asks for several names' near misses."""
    key = ("near pool", harness.key)
    if key not in machine.state:
        machine.state[key] = near_skills(harness, machine)
    return machine.state[key]


def near_agents(harness, machine, name):
    """The agent names closest to ``name`` that ``harness`` knows here (the doctor's --show)."""
    if harness.agent_names is not None:
        names = harness.agent_names(machine)
    else:
        names = [agent.name for agent, _ in harness.all_agents(machine) if agent is not None]
    # (Claude Code's agent_names gives its Agents themselves.)
    names = [getattr(n, "name", n) for n in list(names)[:NEAR_CANDIDATES]]
    return near(name, names + sorted(harness.builtin_agents))


def did_you_mean(names):
    """The words for people: '' without a near miss."""
    from .text import shown_name
    return "did you mean %s?" % " or ".join(shown_name(n) for n in names) if names else ""
