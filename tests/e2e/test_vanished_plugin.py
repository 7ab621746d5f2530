"""End-to-end: the plugin folder vanishes between session start and a spawn (issue 36, item 7).

An update or uninstall removes the folder a session registered briefing's hooks from (or a
Gemini CLI extension's folder is deleted); the harness keeps running the commands it read at
session start. The commands themselves then refuse every agent spawn with one line naming
briefing, the folder and the fix (docs/windows.md, "A vanished plugin folder"): the model
gets it as the refusal's reason, the human as the hook's systemMessage, and the agent never
starts. Here the fake model deletes the folder while it answers the main agent's first
request, whose answer is the spawn. Claude Code 2.1.328 runs no command of a plugin whose
whole folder is gone (measured here): its own error, and the spawn runs.
"""
import json
import shutil

import pytest

from kit import Skill, claude_denial, markers_of, tool_results, verdict
from fakes import spawn
from runners import REPO, tracked_copy
from test_claude import agent_md as claude_agent_md, machine as claude_machine, project_skills  # noqa: F401
from test_gemini import (agent_md as gemini_agent_md, agent_results, built, installed_home, machine,  # noqa: F401
                         ok, spawner)

pytestmark = pytest.mark.e2e


def gone_message(folder):
    return ("briefing cannot run: its folder %s is gone (updated or removed while this session ran), so every "
            "agent spawn is refused. Restart the session; if this goes on, reinstall briefing." % folder)


def incomplete_message(folder):
    """The folder is there, its hook is not (issue 44): never "gone"."""
    return ("briefing cannot run: its folder %s has no hooks/briefing-preload, so every agent spawn is refused. "
            "If it is the repository's qwen/ or gemini/ source folder, install a built copy instead "
            "(scripts/build-qwen-extension, scripts/build-gemini-extension); if briefing was updated while this "
            "session ran, restart the session; otherwise reinstall briefing." % folder)


def claude_run(claude_machine, tmp_path, remove):
    """Claude Code with briefing loaded from a copy; ``remove(copy)`` runs while the fake model
    answers the main agent's first request with a spawn of a declaring agent."""
    plugin = tracked_copy(REPO, tmp_path / "plugins" / "briefing")
    alpha = Skill("alpha")
    markers = markers_of([alpha])
    removed = []

    def script(r):
        if not r.has_tools:
            return "ok"
        if r.is_subagent:
            return "Report: " + verdict(r.all_text, markers)
        if not tool_results(r):
            if not removed:
                remove(plugin)  # after session start, before the spawn's hooks
                removed.append(True)
            return [spawn("reviewer", prompt="Do the e2e task and report.")]
        return "All done."

    claude = claude_machine(script)
    claude.write(project_skills([alpha]))
    claude.write({"project/.claude/agents/reviewer.md": claude_agent_md("reviewer", ["alpha"])})
    result = claude.run("Review the change.", plugin_dirs=[plugin])
    assert result.rc == 0 and not result.timed_out, result
    assert removed
    return claude, result, plugin, alpha


def test_claude_code_hook_files_gone_refuses_the_spawn_and_says_why(claude_machine, tmp_path):
    """The folder is still there, its files are not (a removal under way, an update that has
    not finished): Claude Code runs the command, and the command refuses the spawn."""
    claude, result, plugin, alpha = claude_run(claude_machine, tmp_path,
                                               lambda folder: shutil.rmtree(str(folder / "hooks")))
    message = incomplete_message(plugin)
    # The model: the refusal's reason, and no agent started.
    text = claude_denial(claude.server, "briefing's files are gone")
    assert text == "PreToolUse:Agent hook error: " + message, text
    # The human: the guard's systemMessage.
    outs = [json.loads(h["stdout"]) for h in result.hook_responses("PreToolUse") if h.get("stdout", "").strip()]
    assert [o.get("systemMessage") for o in outs] == [message], outs
    assert not any(m in r.all_text for r in claude.server.log for m in alpha.markers)


def test_claude_code_whole_folder_gone_is_claude_codes_own_error(claude_machine, tmp_path):
    """The whole folder is gone: Claude Code 2.1.328 does not run any of its commands; it reports
    "Plugin directory does not exist" as a non-blocking hook error, and the spawn runs without
    its briefing. briefing cannot act there (docs/windows.md, "A vanished plugin folder")."""
    claude, result, plugin, alpha = claude_run(claude_machine, tmp_path, lambda folder: shutil.rmtree(str(folder)))
    guard = [h for h in result.hook_responses("PreToolUse")]
    assert len(guard) == 1 and guard[0]["exit_code"] == 1 and guard[0]["outcome"] == "error", guard
    assert guard[0]["stderr"].startswith("Failed to run: Plugin directory does not exist: %s " % plugin), guard
    assert "run /plugin to reinstall" in guard[0]["stderr"]
    assert claude.server.subagent_requests(), "Claude Code refused the spawn: the documented outcome changed"
    assert not any(m in r.all_text for r in claude.server.log for m in alpha.markers)


def test_gemini_cli_refuses_the_spawn_and_says_why(machine):
    alpha = Skill("alpha")
    markers = markers_of([alpha])
    folders = []
    script = spawner(["reviewer"], markers)

    def deleting(r):
        if not r.is_subagent and not r.responses() and folders and folders[0].exists():
            shutil.rmtree(str(folders[0]))  # after session start, before the spawn's hooks
        return script(r)

    m = machine(deleting)
    installed = m.home / ".gemini" / "extensions" / "briefing"
    assert (installed / "hooks" / "briefing-preload").is_file()
    folders.append(installed)
    m.write({"home/.gemini/skills/alpha/SKILL.md": alpha.md(),
             "home/.gemini/agents/reviewer.md": gemini_agent_md("reviewer", ["alpha"])})
    result = ok(m.run())
    assert not installed.exists()
    message = gone_message(installed)
    assert m.server.subagent_requests() == [], "the agent started although briefing could not check it"
    response, = agent_results(m.server)
    assert response == {"error": "Tool execution blocked: " + message}, response
    assert message in result.stderr, result  # the systemMessage, shown to the human
