"""The build backend of the Python distribution ``briefing`` (PEP 517, standard library only).

``pip install <checkout or archive>`` builds a wheel with this file and nothing
else (``pyproject.toml``: ``requires = []``), offline. The wheel holds the module
``briefing_sdk`` and, in ``briefing_sdk/plugin/``, the Claude Code plugin exactly
as the repository root holds it (the files ``PLUGIN_FILES`` names, bytecode
included), so that ``briefing_sdk.plugin_path()`` is a plugin folder. The
version is the one written in ``.claude-plugin/plugin.json``.
"""
import base64
import hashlib
import io
import json
import os
import tarfile
import time
import zipfile

NAME = "briefing"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# What the plugin is under Claude Code (and the Agent SDK): the manifest, its hooks file and
# the hook, the doctor, the skill it ships. Codex, Copilot and Gemini files stay out.
PLUGIN_FILES = (".claude-plugin/plugin.json", "hooks/hooks.json", "hooks/briefing-preload",
                "hooks/briefing-python", "hooks/briefing", "bin/briefing-doctor", "skills", "LICENSE",
                "README.md")
EXECUTABLE = ("hooks/briefing-preload", "hooks/briefing-python", "bin/briefing-doctor")
SDIST_FILES = PLUGIN_FILES + ("pyproject.toml", "sdk/briefing_sdk", "sdk/build_backend.py")
SUMMARY = "briefing: declared skills delivered whole to subagents (Claude Code plugin + Agent SDK helper)"


def version():
    with open(os.path.join(ROOT, ".claude-plugin", "plugin.json"), encoding="utf-8") as handle:
        return json.load(handle)["version"]


def files_of(entries):
    """Every regular file under ``entries`` (relative paths), sorted; caches of other runs left out."""
    out = []
    for entry in entries:
        path = os.path.join(ROOT, entry)
        if os.path.isfile(path):
            out.append(entry)
            continue
        for folder, dirs, names in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "node_modules")
            for name in sorted(names):
                rel = os.path.relpath(os.path.join(folder, name), ROOT).replace(os.sep, "/")
                if "__pycache__" in rel and not rel.startswith("hooks/briefing"):
                    continue  # only the hook's checked bytecode is shipped
                out.append(rel)
    return out


def metadata():
    return ("Metadata-Version: 2.1\nName: %s\nVersion: %s\nSummary: %s\nLicense: MIT\n"
            "Requires-Python: >=3.8\n" % (NAME, version(), SUMMARY))


def _digest(data):
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _add(archive, records, arcname, data, mode=0o644):
    info = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
    info.external_attr = (0o100000 | mode) << 16
    info.compress_type = zipfile.ZIP_DEFLATED
    archive.writestr(info, data)
    records.append("%s,%s,%d" % (arcname, _digest(data), len(data)))


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    tag = "py3-none-any"
    dist_info = "%s-%s.dist-info" % (NAME, version())
    filename = "%s-%s-%s.whl" % (NAME, version(), tag)
    records = []
    with zipfile.ZipFile(os.path.join(wheel_directory, filename), "w") as archive:
        for rel in files_of(["sdk/briefing_sdk"]):
            with open(os.path.join(ROOT, rel), "rb") as handle:
                _add(archive, records, rel[len("sdk/"):], handle.read())
        for rel in files_of(PLUGIN_FILES):
            with open(os.path.join(ROOT, rel), "rb") as handle:
                _add(archive, records, "briefing_sdk/plugin/" + rel, handle.read(),
                     0o755 if rel in EXECUTABLE else 0o644)
        _add(archive, records, dist_info + "/METADATA", metadata().encode())
        _add(archive, records, dist_info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: briefing build_backend\n"
                                                      "Root-Is-Purelib: true\nTag: %s\n" % tag).encode())
        records.append(dist_info + "/RECORD,,")
        info = zipfile.ZipInfo(dist_info + "/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        archive.writestr(info, "\n".join(records) + "\n")
    return filename


def build_sdist(sdist_directory, config_settings=None):
    base = "%s-%s" % (NAME, version())
    filename = base + ".tar.gz"
    with tarfile.open(os.path.join(sdist_directory, filename), "w:gz", format=tarfile.PAX_FORMAT) as archive:
        for rel in files_of(SDIST_FILES):
            archive.add(os.path.join(ROOT, rel), arcname="%s/%s" % (base, rel), recursive=False)
        data = metadata().encode()
        info = tarfile.TarInfo("%s/PKG-INFO" % base)
        info.size, info.mtime = len(data), int(time.time())
        archive.addfile(info, io.BytesIO(data))
    return filename


def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []
