"""End-to-end, issue 44: the doctor's ``installed`` check against each real CLI's own install.

For each of the seven CLIs, in a fresh home: before the install command of README.md's Install
section, ``briefing-doctor --harness H --json`` (the doctor of a clean clone) has an
``installed`` check that says "not installed"; after it, ``ok``. A broken install (the Qwen
Code extension's source folder installed as it is, an OpenCode or Kilo ``plugin`` path with a
typo) is a FAIL and exit 1. No model runs: only the CLIs' own install commands.
"""
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import opencode_runner
import qwen_runner
from copilot_runner import Copilot
from runners import REPO, Claude, Codex, git_init, run_process, tracked_copy, write_tree

pytestmark = pytest.mark.e2e


class NoServer:
    """No model is asked: the CLIs only install."""
    url = "http://127.0.0.1:9"


@pytest.fixture(scope="module")
def clone(clis, tmp_path_factory):
    """A clean clone of this checkout: what the install commands name, and whose doctor runs."""
    return tracked_copy(REPO, tmp_path_factory.mktemp("installed") / "briefing")


def installed(clone, harness, env, cwd):
    """(the one installed check, the doctor's exit code) of ``--harness harness``."""
    proc = run_process([sys.executable, str(clone / "bin" / "briefing-doctor"), "--harness", harness, "--json",
                        "--cwd", str(cwd)], env, cwd, 60)
    assert "Traceback" not in proc.stderr, proc
    checks = [c for c in json.loads(proc.stdout)["checks"] if c["name"] == "installed"]
    assert len(checks) == 1 and checks[0]["harness"] == harness, proc
    return checks[0], proc.rc


def assert_not_installed(clone, harness, env, cwd):
    check, rc = installed(clone, harness, env, cwd)
    assert check["status"] in ("WARN", "FAIL") and "not installed" in check["detail"], check
    return check


def assert_ok(clone, harness, env, cwd):
    check, rc = installed(clone, harness, env, cwd)
    assert check["status"] == "ok" and "installed and enabled" in check["detail"] and rc == 0, check
    return check


def test_claude_code(clone, tmp_path):
    claude = Claude(tmp_path, NoServer)
    assert_not_installed(clone, "claude", claude.env(), claude.project)
    added = claude.cli("plugin", "marketplace", "add", str(clone))
    assert added.rc == 0, added
    done = claude.cli("plugin", "install", "briefing@briefing")
    assert done.rc == 0, done
    assert_ok(clone, "claude", claude.env(), claude.project)
    off = claude.cli("plugin", "disable", "briefing@briefing")
    assert off.rc == 0, off
    check, rc = installed(clone, "claude", claude.env(), claude.project)
    assert check["status"] == "WARN" and "not enabled" in check["detail"] and rc == 0, check


def test_codex(clone, tmp_path):
    codex = Codex(tmp_path, NoServer)
    assert_not_installed(clone, "codex", codex.env(), codex.project)
    codex.install(clone)
    # Added and enabled, and Codex skips its hooks until they are trusted: said, not ok.
    check, rc = installed(clone, "codex", codex.env(), codex.project)
    assert check["status"] == "WARN" and "not trusted" in check["detail"] and rc == 0, check
    # Trust as interactive codex's /hooks does it: the hashes `codex` itself lists, into config.toml.
    hooks = [h for entry in codex.hooks_list()["data"] for h in entry["hooks"] if h["source"] == "plugin"]
    with (codex.codex_home / "config.toml").open("a", encoding="utf-8") as f:
        for h in hooks:
            handler, content = h["currentHash"].split("/")
            f.write('\n[hooks.state."%s"]\ntrusted_hash = "%s"\ntrusted_content_hash = "%s"\n'
                    % (h["key"], handler, content))
    assert_ok(clone, "codex", codex.env(), codex.project)


def test_copilot_cli(clone, tmp_path, tmp_path_factory):
    copilot = Copilot(tmp_path, NoServer, tmp_path_factory.mktemp("copilot-cache"))
    assert_not_installed(clone, "copilot", copilot.env(), copilot.project)
    copilot.install(clone)
    assert_ok(clone, "copilot", copilot.env(), copilot.project)


def test_gemini_cli(clone, tmp_path):
    from test_gemini import SETTINGS, build_extension, gemini, gemini_env
    home, project = tmp_path / "home", tmp_path / "project"
    write_tree(home, {".gemini/settings.json": json.dumps(SETTINGS)})
    git_init(project)
    env = gemini_env(home)
    assert_not_installed(clone, "gemini", env, project)
    folder, _ = build_extension(clone, tmp_path / "out")
    done = gemini(home, "extensions", "install", str(folder), "--consent", cwd=project)
    assert done.rc == 0, done
    assert_ok(clone, "gemini", env, project)


@pytest.mark.parametrize("source", ["built", "source-folder", "older-source-folder"])
def test_qwen_code(clone, tmp_path, source):
    qwen = qwen_runner.qwen_cli()
    run = qwen_runner.QwenRun(tmp_path, installed=False)
    env = qwen_runner.base_env(run.home)
    assert_not_installed(clone, "qwen", env, run.project)
    if source == "built":
        subprocess.run([sys.executable, str(clone / "scripts" / "build-qwen-extension"), str(tmp_path / "out")],
                       check=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        folder = tmp_path / "out" / "briefing"
    elif source == "source-folder":
        folder = clone / "qwen"  # the extension's source: its manifest's name makes Qwen Code refuse it
    else:
        # The source folder as an older briefing shipped it (named "briefing"), which Qwen Code
        # installed without a word: installed copies of it are still out there.
        folder = tmp_path / "qwen"
        shutil.copytree(str(clone / "qwen"), str(folder))
        manifest = folder / "qwen-extension.json"
        manifest.write_text(json.dumps(dict(json.loads(manifest.read_text()), name="briefing")))
    done = run_process(["node", qwen, "extensions", "install", str(folder), "--consent"], env, run.home, 120)
    if source == "source-folder":
        assert done.rc != 0 and "build-qwen-extension" in done.stdout + done.stderr, done
        assert_not_installed(clone, "qwen", env, run.project)
        return
    assert done.rc == 0, done
    if source == "built":
        assert_ok(clone, "qwen", env, run.project)
        return
    check, rc = installed(clone, "qwen", env, run.project)
    assert check["status"] == "FAIL" and "source folder" in check["detail"] and rc == 1, check
    assert "build-qwen-extension" in check["detail"], check


@pytest.mark.parametrize("cli", ["opencode", "kilo"])
def test_opencode_and_kilo(clone, tmp_path, cli):
    machine = opencode_runner.OpenCodeMachine(tmp_path, NoServer, cli, "unused")
    (machine.project / opencode_runner.CLIS[cli]["config"]).unlink()  # the runner's own install
    env = machine.env()
    assert_not_installed(clone, cli, env, machine.project)
    built = Path(opencode_runner.build_plugin(tmp_path / "out"))
    # The CLI's own install: `<cli> plugin <folder>` writes it into the project's config.
    done = run_process([machine.binary, "plugin", str(built)], env, machine.project, 120)
    assert done.rc == 0, done
    assert_ok(clone, cli, env, machine.project)
    # A typo in a plugin path: the CLI loads nothing and says nothing; the doctor FAILs.
    write_tree(machine.project, {opencode_runner.CLIS[cli]["config"]: json.dumps(
        {"plugin": [str(built) + "-typo"]})})
    for config in machine.project.glob(".*/*.json*"):  # kilo plugin writes .kilo/opencode.json
        config.unlink()
    check, rc = installed(clone, cli, env, machine.project)
    assert check["status"] == "FAIL" and "does not exist" in check["detail"] and rc == 1, check
