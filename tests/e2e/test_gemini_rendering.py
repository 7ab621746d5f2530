"""End-to-end, issue 27: an extension's skill, as the real Gemini CLI 0.61.0 hands it over.

Gemini CLI fills ``${…}`` into the skills of an extension (docs/gemini-cli.md).
One run: the main agent activates the skill itself (``activate_skill``, which
needs ``--approval-mode yolo``), then spawns an agent that declares it; the text
briefing puts in front of the spawn's prompt is the text Gemini CLI's own tool
returned (which Gemini CLI also trims). A second skill uses a key of the
project's ``.env``, whose value briefing never copies: that spawn is refused.
"""
import json

import pytest

from fake_gemini import call, complete_task, invoke_agent
from framing import rebuild
from kit import marker
from test_gemini import gemini, installed_home, machine, ok, split_prompt  # noqa: F401  (fixtures)

pytestmark = pytest.mark.e2e

TOKENS = ("ext=[${extensionPath}] ws=[${workspacePath}] sep=[${/}] [${pathSeparator}] proto=[${toString}]\n"
          "kept=[${nope}] [${CLAUDE_SKILL_DIR}] [$ARGUMENTS] [{{args}}] [!{echo x}] [!`echo y`]\n")


def agent(name, skills):
    return ("---\nname: %s\ndescription: e2e agent %s\n---\nYou are an e2e test agent.\n"
            "<!-- briefing: skills = [%s] -->\n" % (name, name, ", ".join(json.dumps(s) for s in skills)))


def test_briefing_delivers_an_extension_skill_as_gemini_cli_does(machine, tmp_path):
    start = marker("ext-start")
    body = "First line: %s\n%s" % (start, TOKENS)

    def script(r):
        if r.is_subagent:
            return [complete_task("done")]
        done = [x.get("name") for x in r.responses()]
        if "activate_skill" not in done:
            return [call("activate_skill", {"name": "extskill"})]
        if done.count("invoke_agent") == 0:
            return [invoke_agent("ext-user", "TASK-ONE")]
        if done.count("invoke_agent") == 1:
            return [invoke_agent("env-user", "TASK-TWO")]
        return "All done."

    m = machine(script)
    ext = tmp_path / "src" / "probe-ext"
    m.write({
        "src/probe-ext/gemini-extension.json": json.dumps({"name": "probe-ext", "version": "1.0.0"}),
        "src/probe-ext/skills/extskill/SKILL.md": "---\nname: extskill\ndescription: ext probe\n---\n" + body,
        "src/probe-ext/skills/envskill/SKILL.md": "---\nname: envskill\ndescription: env probe\n---\n"
                                                  "Region:\nuse ${E2E_REGION}\n",
        "project/.env": "E2E_REGION=secret-region-value\n",
        "home/.gemini/agents/ext-user.md": agent("ext-user", ["probe-ext:extskill"]),
        "home/.gemini/agents/env-user.md": agent("env-user", ["probe-ext:envskill"]),
    })
    linked = gemini(m.home, "extensions", "link", str(ext), "--consent", cwd=m.project)
    assert linked.rc == 0, linked
    ok(gemini(m.home, "-p", "Do the work.", "--approval-mode", "yolo", "--output-format", "json",
              cwd=m.project, url=m.server.url, timeout=180))
    server = m.server

    responses = server.main_requests()[-1].responses()
    (own,) = [x["response"]["output"] for x in responses if x.get("name") == "activate_skill"]
    instructions = own.split("<instructions>\n", 1)[1].split("\n  </instructions>", 1)[0].strip()
    assert str(ext) in instructions and "[${nope}]" in instructions, own  # Gemini CLI did fill it in

    (spawned,) = [r for r in server.subagent_requests() if r.first_text().endswith("TASK-ONE")][:1]
    part, _ = split_prompt(spawned.first_text())
    (delivered,) = rebuild([part]).skills.values()
    assert delivered.strip() == instructions  # Gemini CLI trims the body; briefing keeps it whole
    assert delivered == body.replace("${extensionPath}", str(ext)).replace(
        "${workspacePath}", str(m.project)).replace("${/}", "/").replace("${pathSeparator}", "/").replace(
        "${toString}", "function toString() { [native code] }")

    blocked = [x["response"] for x in responses if x.get("name") == "invoke_agent"][1]
    text = json.dumps(blocked)
    assert "Tool execution blocked" in text and "${E2E_REGION}" in text and "line 6" in text, text
    assert not [r for r in server.subagent_requests() if r.first_text().endswith("TASK-TWO")]
    assert all("secret-region-value" not in r.all_text for r in server.log if r.is_subagent)
