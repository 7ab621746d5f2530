"""The Python distribution ``briefing`` (pyproject.toml, sdk/build_backend.py; docs/agent-sdk.md).

The wheel carries ``briefing_sdk`` and the Claude Code plugin under ``briefing_sdk/plugin/``,
built offline by the standard-library backend; ``pip install <checkout>`` needs no index.
The repository root stays the plugin root for every harness.
"""
import base64
import hashlib
import json
import os
import subprocess
import sys
import tarfile
import zipfile

import pytest

from conftest import REPO

sys.path.insert(0, str(REPO / "sdk"))
import build_backend  # noqa: E402

VERSION = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("wheel")
    return out / build_backend.build_wheel(str(out))


def test_the_wheel_holds_the_module_and_the_claude_plugin(wheel):
    assert wheel.name == "briefing-%s-py3-none-any.whl" % VERSION
    with zipfile.ZipFile(str(wheel)) as archive:
        names = set(archive.namelist())
        plugin = "briefing_sdk/plugin/"
        for rel in (".claude-plugin/plugin.json", "hooks/hooks.json", "hooks/briefing-preload",
                    "hooks/briefing-python", "hooks/briefing/main.py", "hooks/briefing/harnesses/claude.py",
                    "bin/briefing-doctor", "skills/briefing/SKILL.md", "LICENSE"):
            assert plugin + rel in names, rel
        assert "briefing_sdk/__init__.py" in names
        assert any(n.startswith(plugin + "hooks/briefing/__pycache__/") and n.endswith(".pyc") for n in names)
        assert not any(n.startswith(plugin + p) for n in names for p in ("tests/", "gemini/", ".codex-plugin/",
                                                                          "hooks/hooks.codex.json", "sdk/"))
        mode = archive.getinfo(plugin + "bin/briefing-doctor").external_attr >> 16
        assert mode & 0o111, oct(mode)
        meta = archive.read("briefing-%s.dist-info/METADATA" % VERSION).decode()
        assert "Name: briefing\n" in meta and "Version: %s\n" % VERSION in meta and "Requires-Dist" not in meta
        record = archive.read("briefing-%s.dist-info/RECORD" % VERSION).decode().splitlines()
        for line in record:
            name, digest, size = line.rsplit(",", 2)
            if not digest:
                continue
            data = archive.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == ("sha256=" + expected, len(data)), name
        assert {line.rsplit(",", 2)[0] for line in record} == names
        for rel in (".claude-plugin/plugin.json", "hooks/hooks.json"):
            assert archive.read(plugin + rel) == (REPO / rel).read_bytes()


def test_the_sdist_builds_again_into_the_same_wheel(tmp_path):
    name = build_backend.build_sdist(str(tmp_path))
    with tarfile.open(str(tmp_path / name)) as archive:
        names = archive.getnames()
    base = "briefing-%s/" % VERSION
    for rel in ("pyproject.toml", "sdk/build_backend.py", "sdk/briefing_sdk/__init__.py", "PKG-INFO",
                "hooks/briefing-preload", ".claude-plugin/plugin.json"):
        assert base + rel in names, rel


def test_pip_installs_the_checkout_offline_and_the_installed_copy_is_a_plugin(tmp_path):
    site = tmp_path / "site"
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index",
                           "--disable-pip-version-check", "--target", str(site), str(REPO)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    if proc.returncode != 0 and "No module named pip" in proc.stderr:
        pytest.skip("no pip in this interpreter")
    assert proc.returncode == 0, proc
    probe = subprocess.run([sys.executable, "-c", "import briefing_sdk; print(briefing_sdk.plugin_path())"],
                           stdout=subprocess.PIPE, universal_newlines=True, cwd=str(tmp_path),
                           env=dict(os.environ, PYTHONPATH=str(site)), check=True)
    plugin = probe.stdout.strip()
    assert plugin == str(site / "briefing_sdk" / "plugin")
    doctor = subprocess.run([sys.executable, os.path.join(plugin, "bin", "briefing-doctor"), "--harness", "claude",
                             "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                            cwd=str(tmp_path), env={"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path)})
    assert doctor.returncode == 0, doctor
    checks = {c["name"]: c["status"] for c in json.loads(doctor.stdout)["checks"]}
    assert checks["hooks.json"] == "ok", checks


def test_the_repository_root_stays_the_plugin_root():
    import briefing_sdk
    assert os.path.samefile(briefing_sdk.plugin_path(), str(REPO))
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert "hooks" not in manifest  # Claude Code finds hooks/hooks.json by itself (CLAUDE.md)
