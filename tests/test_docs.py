"""The documentation's links and counts (issue 44): every relative link and anchor in README.md,
CLAUDE.md and docs/*.md resolves inside the repository; the counts the docs state (hooks a
user must trust, harnesses, CLIs) are the code's; no doc states a number of tests; README.md
stays a storefront (at most 160 lines) whose test command is the one CI runs."""
import json
import re

import pytest

from conftest import REPO, hook_package

DOCS = ["README.md", "CLAUDE.md"] + sorted("docs/" + p.name for p in (REPO / "docs").glob("*.md"))
LINK = re.compile(r"(?<!\!)\[[^\]\n]*\]\(([^)\s]+)\)")
WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]


def prose(rel):
    """The file's text outside fenced code blocks (whose brackets and # lines are not Markdown)."""
    out, fence = [], False
    for line in (REPO / rel).read_text(encoding="utf-8").splitlines():
        if line.lstrip().startswith("```"):
            fence = not fence
        elif not fence:
            out.append(line)
    return "\n".join(out)


def anchors(rel):
    """The anchors GitHub gives the headings of ``rel``: lower case, punctuation but - and _
    dropped, spaces to dashes, a repeated slug numbered -1, -2, …"""
    seen, out = {}, set()
    for line in prose(rel).splitlines():
        m = re.match(r"#{1,6} (.*)", line)
        if not m:
            continue
        text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", m.group(1).strip())
        slug = re.sub(r"[^\w\- ]", "", text.replace("`", "").lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else "%s-%d" % (slug, n))
    return out


def links(rel):
    """The relative link targets of ``rel`` (not http:, mailto:, …)."""
    return [t for t in LINK.findall(prose(rel)) if not re.match(r"[a-z][a-z+.-]*:", t)]


def broken(rel, target):
    """Why ``target``, a link in ``rel``, does not resolve inside the repository, or None."""
    path, _, anchor = target.partition("#")
    resolved = ((REPO / rel).parent / path if path else REPO / rel).resolve()
    if resolved != REPO and REPO not in resolved.parents:
        return "links out of the repository"
    if not resolved.exists():
        return "no such file"
    if anchor and (resolved.suffix != ".md" or anchor not in anchors(str(resolved.relative_to(REPO)))):
        return "no heading for #%s in %s" % (anchor, resolved.relative_to(REPO))
    return None


@pytest.mark.parametrize("rel", DOCS)
def test_every_relative_link_and_anchor_resolves_inside_the_repository(rel):
    found = [(target, broken(rel, target)) for target in links(rel)]
    assert not [f for f in found if f[1]], [f for f in found if f[1]]


def test_the_link_check_sees_links_and_anchors():
    """The check above is not vacuous: it finds README's links, anchors included."""
    found = links("README.md")
    assert any("#" in t for t in found) and len(found) > 20, found
    assert "--audit-proof-of-delivery" in anchors("docs/doctor.md")
    assert broken("README.md", "docs/doctor.md#no-such-heading") and broken("README.md", "../outside.md")
    assert broken("README.md", "docs/nothing.md") and broken("README.md", "docs/doctor.md#--json") is None


@pytest.mark.parametrize("rel", [r for r in DOCS if r != "CLAUDE.md"])
def test_user_docs_cite_no_notes_outside_the_repository(rel):
    """The shared facts/ notes are the developers', not in the repository: a user's page names
    what is (a doc, a test) instead."""
    assert not re.search(r"\bfacts/[\w-]+\.md", (REPO / rel).read_text(encoding="utf-8")), rel


def number(word):
    return int(word) if word.isdigit() else WORDS.index(word.lower())


def stated(pattern, rels=DOCS):
    """[(file, number)] of every place whose text matches ``pattern`` (its group 1 a number)."""
    out = []
    for rel in rels:
        text = re.sub(r"\s+", " ", (REPO / rel).read_text(encoding="utf-8"))
        out += [(rel, number(m.group(1))) for m in re.finditer(pattern, text, re.I)]
    return out


NUMBER = r"\b(\d+|%s)" % "|".join(WORDS)


def codex_hooks():
    return len(json.loads((REPO / "hooks" / "hooks.codex.json").read_text())["hooks"])


def test_the_codex_hooks_to_trust_are_counted_from_the_hooks_file():
    """A user who trusts fewer hooks than hooks.codex.json registers loses what the others do
    (re-delivery after compaction): every "N hooks" the docs say is the file's count."""
    found = stated(NUMBER + r" (?:of its |of briefing's )?hooks\b")
    assert ("docs/codex.md", codex_hooks()) in found and ("README.md", codex_hooks()) in found, found
    assert all(n == codex_hooks() for _, n in found), (codex_hooks(), found)


def test_harness_counts_are_the_registrys():
    harnesses = hook_package().harnesses.HARNESSES
    found = stated(NUMBER + r" (?:harnesses|CLIs and the SDK)\b") + stated(r"\bin all (\w+) CLIs\b")
    assert all(n == len(harnesses) for _, n in found), (len(harnesses), found)
    # README names every harness of the registry
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    missing = [h.label for h in harnesses.values() if h.label not in readme]
    assert not missing, missing


def test_the_private_skill_cli_count_is_the_tests():
    tested = len(list((REPO / "tests" / "e2e").glob("test_private_*.py")))
    found = stated(r"in each of the " + NUMBER + r" CLIs \(`tests/e2e/test_private_")
    assert found and all(n == tested for _, n in found), (tested, found)


def test_no_doc_states_a_number_of_tests():
    """A count of tests is stale the day a test is added: the docs say how to count instead."""
    found = [(rel, m.group(0)) for rel in DOCS
             for m in re.finditer(r"\b\d[\d,]* (?:unit |end-to-end )?tests\b", (REPO / rel).read_text(encoding="utf-8"))]
    assert not found, found


def test_the_readme_is_a_storefront_whose_test_command_ci_runs():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 160
    assert "<owner>" not in readme
    ci = (REPO / ".ci" / "run").read_text(encoding="utf-8")
    command = re.search(r"^exec (.+)$", ci, re.M).group(1).strip()
    assert re.search(r"^%s\s+# " % re.escape(command), readme, re.M), command
    header = readme.index("| Harness |")
    table = readme[header:readme.index("\n\n", header)].splitlines()
    assert table[0].count("|") == 5 and all(row.count("`") >= 2 for row in table[2:]), table


def test_the_audits_harnesses_are_the_registrys():
    """The troubleshooting page's audit paragraph names the records of every harness the audit reads."""
    text = re.sub(r"\s+", " ", (REPO / "docs" / "troubleshooting.md").read_text(encoding="utf-8"))
    paragraph = text[text.index("Then ask what really happened"):text.index("```")]
    missing = [h.label for h in hook_package().harnesses.HARNESSES.values() if h.label not in paragraph]
    assert not missing, missing
