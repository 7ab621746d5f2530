"""End-to-end: project files in the Codex, Copilot CLI and Gemini CLI declaration forms (issue 30),
and what each CLI already loads into its agents itself (the measurements in docs/files.md).

A marker lives only in a project file a declaration names; another only in the harness's own
instruction file. The subagent answers from its own request alone.
"""
import pytest

from kit import BRIEFED, codex_spawner, marker, ok, verdict
from framing import rebuild
from test_codex import child_requests, machine as codex_machine, plugin_source, role_toml, wait_reports  # noqa: F401
from test_copilot import (agent_md as copilot_agent_md, briefings, checkout, copilot_cache, delegate,  # noqa: F401
                          first_subagent_request, machine as copilot_machine, reports)
from test_gemini import (agent_md as gemini_agent_md, first_request, installed_home, machine as gemini_machine,  # noqa: F401
                         ok as gemini_ok, spawner)
from test_copilot import BRIEFING

pytestmark = pytest.mark.e2e

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md", "GEMINI.md", ".github/copilot-instructions.md", ".gemini/GEMINI.md")


def instruction_files():
    """{project path: marker} for every harness's instruction file, each with a marker of its own."""
    return {f: marker("doc%d" % i) for i, f in enumerate(INSTRUCTION_FILES)}


def written(marks):
    return {"project/" + f: "# %s\n\nMarker: %s\n" % (f, m) for f, m in marks.items()}


def seen(request, marks):
    return sorted(f for f, m in marks.items() if m in request.all_text)


def notes(secret):
    return "# Team notes\n\nThe code word is %s.\n" % secret


def test_codex_role_files_comment_and_agents_md_in_every_agent(codex_machine):
    secret, marks = marker("notes"), instruction_files()
    codex = codex_machine(codex_spawner(["rev", "worker"], [secret]))
    codex.write(written(marks))
    codex.write({"project/docs/notes.md": notes(secret), "project/.codex/agents/rev.toml":
                 '# briefing: files = ["docs/notes.md", "AGENTS.md"]\n' + role_toml("rev")})

    ok(codex.run("Get it done."))
    children = child_requests(codex.server)
    briefed = [r for r in children if r.briefing_parts()]
    assert len(briefed) == 1
    # AGENTS.md is declared too, but Codex 0.169.0 gives it to every agent itself: not sent again.
    assert rebuild(briefed[0].briefing_parts()).files == {"docs/notes.md": notes(secret)}
    firsts = {}
    for request in children:
        firsts.setdefault(request.thread_id, request)
    assert len(firsts) == 2
    for request in firsts.values():  # the measurement: AGENTS.md, and no other harness's file
        assert seen(request, marks) == ["AGENTS.md"], seen(request, marks)
        assert request.all_text.count(marks["AGENTS.md"]) == 1
    assert sum(BRIEFED in r for r in wait_reports(codex.server)) == 1, wait_reports(codex.server)


@pytest.mark.parametrize("agent, loads", [("rev", []), ("explore", []), (
    "general-purpose", ["AGENTS.md", "CLAUDE.md", ".github/copilot-instructions.md", "GEMINI.md"])])
def test_copilot_which_agents_get_the_instruction_files(copilot_machine, checkout, agent, loads):
    secret, marks = marker("notes"), instruction_files()
    copilot = copilot_machine(delegate(agent, [secret]))
    copilot.write(written(marks))
    copilot.write({"project/docs/notes.md": notes(secret), "project/.github/agents/rev.agent.md":
                   copilot_agent_md("rev").replace("---\nYou", "briefing:\n  files: [docs/notes.md, AGENTS.md]\n---\nYou")})
    if agent != "rev":
        copilot.write({"project/.briefing/rules.json":
                       '{"rules": [{"agents": "%s", "files": ["docs/notes.md", "AGENTS.md"]}]}' % agent})

    ok(copilot.run("Look around.", plugin_dirs=[checkout]))
    first = first_subagent_request(copilot.server)
    assert seen(first, {f: m for f, m in marks.items() if f != "AGENTS.md"}) == sorted(
        f for f in loads if f != "AGENTS.md")  # the measurement (Copilot CLI 1.0.102)
    expected = {"docs/notes.md": notes(secret)}
    if "AGENTS.md" not in loads:
        expected["AGENTS.md"] = "# AGENTS.md\n\nMarker: %s\n" % marks["AGENTS.md"]
    (part,) = briefings(first)
    assert rebuild([part]).files == expected
    assert first.all_text.count(marks["AGENTS.md"]) == 1, "never twice"
    assert any(BRIEFED in r for r in reports(copilot.server)), reports(copilot.server)


def test_gemini_body_comment_files_and_gemini_md_in_every_agent(gemini_machine):
    secret, marks = marker("notes"), instruction_files()
    m = gemini_machine(spawner(["rev", "generalist"], [secret]))
    m.write(written(marks))
    m.write({"project/docs/notes.md": notes(secret), "project/.gemini/agents/rev.md":
             gemini_agent_md("rev") + '<!-- briefing: files = ["docs/notes.md", "GEMINI.md"] -->\n'})
    m.acknowledge("rev")

    gemini_ok(m.run())
    briefed, control = first_request(m.server, 1), first_request(m.server, 2)
    # Gemini CLI puts its loaded context first; the briefing stands in front of the prompt.
    (part,) = [p.group(0) for p in BRIEFING.finditer(briefed.all_text)]
    assert rebuild([part]).files == {"docs/notes.md": notes(secret)}  # GEMINI.md: Gemini CLI's own
    for request in (briefed, control):  # the measurement (Gemini CLI 0.61.0)
        assert seen(request, marks) == ["GEMINI.md"], seen(request, marks)
    assert verdict(briefed.all_text, [secret]) == BRIEFED and secret not in control.all_text
