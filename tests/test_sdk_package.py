"""The Python distribution ``briefing-skills`` (pyproject.toml, built by hatchling; docs/agent-sdk.md).

The wheel carries ``briefing_sdk`` and the Claude Code plugin under ``briefing_sdk/plugin/``, and
the ``briefing-doctor`` command. The builds here are offline: hatchling comes from the test
venv (requirements-test.txt) and pip runs with ``--no-build-isolation --no-index``; a user's
``pip install`` fetches it as a build dependency. The repository root stays the plugin root for
every harness.
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

VERSION = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["version"]
DIST = "briefing-skills"
STEM = "briefing_skills-%s" % VERSION
OFFLINE = ["--quiet", "--no-deps", "--no-index", "--no-build-isolation", "--disable-pip-version-check"]


def pip(python, *args, env=None):
    """``python -m pip ARGS``; a venv without pip of its own borrows this interpreter's pip and
    hatchling through PYTHONPATH (as a build venv would hold them)."""
    proc = subprocess.run([str(python), "-m", "pip"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=300, env=env)
    assert proc.returncode == 0, proc
    return proc


def borrowed_site_env():
    import hatchling
    import pip as pip_module
    found = [os.path.dirname(os.path.dirname(m.__file__)) for m in (pip_module, hatchling)]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(dict.fromkeys(found)), PIP_NO_INPUT="1")


def hatchling_build(kind, project, out):
    """hatchling's PEP 517 hook ``build_<kind>``, in this process (as pip calls it in one of its
    own, less the seconds of starting pip): the project is the working directory."""
    import hatchling.build
    here = os.getcwd()
    os.chdir(str(project))
    try:
        return out / getattr(hatchling.build, "build_" + kind)(str(out))
    finally:
        os.chdir(here)


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    return hatchling_build("wheel", REPO, tmp_path_factory.mktemp("wheel"))


def test_the_wheel_holds_the_module_the_claude_plugin_and_the_command(wheel):
    with zipfile.ZipFile(str(wheel)) as archive:
        names = set(archive.namelist())
        plugin = "briefing_sdk/plugin/"
        for rel in (".claude-plugin/plugin.json", "hooks/hooks.json", "hooks/briefing-preload",
                    "hooks/briefing-python", "hooks/briefing/main.py", "hooks/briefing/harnesses/claude.py",
                    "bin/briefing-doctor", "skills/briefing/SKILL.md", "LICENSE"):
            assert plugin + rel in names, rel
        assert wheel.name == "%s-py3-none-any.whl" % STEM
        assert {"briefing_sdk/__init__.py", "briefing_sdk/doctor.py"} <= names
        # the hook's checked bytecode, every file of it, as scripts/build-bytecode wrote it
        shipped = {n[len(plugin):] for n in names if n.endswith(".pyc")}
        checked = {p.relative_to(REPO).as_posix() for p in (REPO / "hooks" / "briefing").rglob("__pycache__/*.pyc")}
        assert shipped == checked and checked
        assert not any(n.startswith(plugin + p) for n in names for p in ("tests/", "gemini/", "qwen/", "opencode/",
                                                                          ".codex-plugin/", "hooks/hooks.codex.json",
                                                                          "sdk/"))
        for rel in ("bin/briefing-doctor", "hooks/briefing-preload", "hooks/briefing-python"):
            mode = archive.getinfo(plugin + rel).external_attr >> 16
            assert mode & 0o111, (rel, oct(mode))
        meta = archive.read("%s.dist-info/METADATA" % STEM).decode()
        assert "Name: %s\n" % DIST in meta and "Version: %s\n" % VERSION in meta and "Requires-Dist" not in meta
        entry_points = archive.read("%s.dist-info/entry_points.txt" % STEM).decode()
        assert "briefing-doctor = briefing_sdk.doctor:main" in entry_points
        record = archive.read("%s.dist-info/RECORD" % STEM).decode().splitlines()
        for line in record:
            name, digest, size = line.rsplit(",", 2)
            if not digest:
                continue
            data = archive.read(name)
            expected = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
            assert (digest, int(size)) == ("sha256=" + expected, len(data)), name
        assert {line.rsplit(",", 2)[0] for line in record} == names
        for rel in (".claude-plugin/plugin.json", "hooks/hooks.json", "hooks/briefing/main.py"):
            assert archive.read(plugin + rel) == (REPO / rel).read_bytes()


def test_the_sdist_builds_again_into_the_same_wheel(wheel, tmp_path):
    sdist = hatchling_build("sdist", REPO, tmp_path)
    assert sdist.name == STEM + ".tar.gz"
    with tarfile.open(str(sdist)) as archive:
        # the archive is ours; "data" (3.12+, and later patch releases) keeps modes, as a build needs
        extract = {"filter": "data"} if hasattr(tarfile, "data_filter") else {}
        archive.extractall(str(tmp_path / "src"), **extract)
    (tmp_path / "rebuilt").mkdir()
    rebuilt = hatchling_build("wheel", tmp_path / "src" / STEM, tmp_path / "rebuilt")
    with zipfile.ZipFile(str(rebuilt)) as again, zipfile.ZipFile(str(wheel)) as first:
        assert sorted(again.namelist()) == sorted(first.namelist())


def fresh_venv(path):
    """A new venv, as a user makes one (without pip: pip comes borrowed, see ``pip``)."""
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True)
    return path / ("Scripts" if os.name == "nt" else "bin")


@pytest.mark.parametrize("editable", [False, True], ids=["pip install", "pip install -e"])
def test_pip_install_puts_a_working_briefing_doctor_on_the_venvs_path(tmp_path, editable):
    bin_dir = fresh_venv(tmp_path / "venv")
    pip(bin_dir / "python", "install", *(OFFLINE + (["-e"] if editable else []) + [str(REPO)]),
        env=borrowed_site_env())
    home = tmp_path / "home"
    home.mkdir()
    env = {"PATH": os.pathsep.join([str(bin_dir), os.environ.get("PATH", "")]), "HOME": str(home)}

    def doctor(*args):
        return subprocess.run(["briefing-doctor"] + list(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, cwd=str(tmp_path), env=env, timeout=60)

    version = doctor("--version")
    assert (version.returncode, version.stdout) == (0, "briefing-doctor %s\n" % VERSION), version
    checked = doctor("--harness", "claude", "--json")
    assert checked.returncode == 0, checked
    checks = {c["name"]: c["status"] for c in json.loads(checked.stdout)["checks"]}
    assert checks["hooks.json"] == "ok", checks
    assert doctor("--no-such-flag").returncode == 2
    probe = subprocess.run([str(bin_dir / "python"), "-c", "import briefing_sdk; print(briefing_sdk.plugin_path())"],
                           stdout=subprocess.PIPE, universal_newlines=True, cwd=str(tmp_path), env=env, check=True)
    plugin = probe.stdout.strip()
    if editable:  # the checkout itself is the plugin
        assert os.path.samefile(plugin, str(REPO))
    else:  # the copy in the wheel, standing on its own
        assert plugin.startswith(str(tmp_path / "venv")) and plugin.endswith(os.path.join("briefing_sdk", "plugin"))


def test_the_repository_root_stays_the_plugin_root():
    sys.path.insert(0, str(REPO / "sdk"))
    import briefing_sdk
    assert os.path.samefile(briefing_sdk.plugin_path(), str(REPO))
    manifest = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())
    assert "hooks" not in manifest  # Claude Code finds hooks/hooks.json by itself (CLAUDE.md)


def test_the_distribution_is_not_named_briefing():
    """``briefing`` on the package index is an unrelated project: never publish or depend on it."""
    text = (REPO / "pyproject.toml").read_text()
    assert '\nname = "%s"\n' % DIST in text and 'name = "briefing"' not in text
