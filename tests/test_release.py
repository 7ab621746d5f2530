"""One version, written once: the manifests, the changelog and `briefing-doctor --version` agree."""
import json
import re

import pytest

from conftest import REPO

PLUGIN = REPO / ".claude-plugin" / "plugin.json"


def version():
    return json.loads(PLUGIN.read_text())["version"]


def manifest_versions():
    """Every manifest that states a version, with the version it states."""
    found = {}
    for path in sorted(REPO.glob("**/*.json")):
        rel = path.relative_to(REPO)
        if rel.parts[0] in (".git", ".venv", ".e2e", "tests", "examples", "bench"):
            continue
        data = json.loads(path.read_text())
        if isinstance(data, dict) and "version" in data:
            found[str(rel)] = data["version"]
        for plugin in data.get("plugins", []) if isinstance(data, dict) else []:
            if isinstance(plugin, dict) and "version" in plugin:
                found["%s:%s" % (rel, plugin.get("name"))] = plugin["version"]
    return found


def test_every_manifest_states_the_same_version():
    versions = manifest_versions()
    assert str(PLUGIN.relative_to(REPO)) in versions
    assert set(versions.values()) == {version()}, versions


def test_changelog_starts_with_this_version():
    text = (REPO / "CHANGELOG.md").read_text()
    first = re.search(r"^## \[?(\d+\.\d+\.\d+)\]?", text, re.M)
    assert first and first.group(1) == version(), first


def test_license_is_the_one_the_manifest_names():
    manifest = json.loads(PLUGIN.read_text())
    assert manifest["license"] == "MIT"
    assert (REPO / "LICENSE").read_text().startswith("MIT License")


@pytest.mark.parametrize("via_link", [False, True])
def test_doctor_prints_the_version(sandbox, via_link):
    sb = sandbox({})
    result = sb.doctor("--version", via_link=via_link)
    assert result.rc == 0, result
    assert result.out == "briefing-doctor %s\n" % version(), result


def test_no_version_is_kept_in_the_hook():
    assert not re.search(r"^VERSION\s*=", (REPO / "hooks" / "briefing-preload").read_text(), re.M)
