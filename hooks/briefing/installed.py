"""The doctor's ``installed`` check (issue 44, docs/doctor.md "Installed"): is briefing installed
and enabled where a harness loads it from, for this home and project, and can that copy work.

Where each harness keeps its plugins is its own module's business (``installed_check`` in
``harnesses/<key>.py``, reading what the spawn paths and the audit already read); what is
judged the same way for every harness, once a copy is found, is here. Doctor mode only.
"""
import os

from .files import display_path, is_dir, is_file, plugin_root, read_json

# The manifests a copy of briefing carries its version in, whichever harness it was built for.
VERSION_FILES = (os.path.join(".claude-plugin", "plugin.json"), "gemini-extension.json", "qwen-extension.json",
                 "package.json")


def result(key, status, detail):
    """One ``installed`` check (the JSON shape of every doctor check, plus the harness)."""
    return {"name": "installed", "harness": key, "status": status, "detail": detail}


def not_installed(key, label, command, note=""):
    """briefing is nowhere this harness loads it from: the one command that installs it."""
    return result(key, "WARN", "briefing is not installed in %s for this home and project%s; install it: %s" % (
        label, note, command))


def checkout():
    """The folder an install command names: this copy when it is a checkout (it has the build
    scripts), else a placeholder for one."""
    root = plugin_root()
    return root if is_dir(os.path.join(root, "scripts")) else "/path/to/briefing"


def copy_version(root):
    """The briefing version of the copy at ``root``, or None."""
    for manifest in VERSION_FILES:
        data = read_json(os.path.join(root, manifest))
        if isinstance(data, dict) and isinstance(data.get("version"), str):
            return data["version"]
    return None


def judge_copy(key, label, root, hooks_check, fix, where=None):
    """The verdict on the copy ``label`` loads from ``root``: there, a copy that runs (its hook
    beside it, not a source folder), its hooks file as that harness reads it, not older than
    this doctor's copy. ``fix`` is the command that installs it again; ``where`` says how it
    is installed (default: the folder)."""
    where = where or display_path(root)
    if not is_dir(root):
        return result(key, "FAIL", "%s loads briefing from %s, which is gone: it loads nothing of it; %s" % (
            label, where, fix))
    if not is_file(os.path.join(root, "hooks", "briefing-preload")):
        return result(key, "FAIL", "%s loads briefing from %s, which has no hooks/briefing-preload: it is a "
                      "source folder of the repository, not a built copy, so every hook fails; %s" % (
                          label, where, fix))
    check = hooks_check(root) if hooks_check else None
    if check and check["status"] == "FAIL":
        return result(key, "FAIL", "the copy %s loads (%s) cannot work: %s; %s" % (label, where, check["detail"], fix))
    from .audit import version_key  # the audit's comparison of an installed copy with this one
    theirs, mine = copy_version(root), copy_version(plugin_root())
    if version_key(theirs) and version_key(mine) and version_key(theirs) < version_key(mine):
        return result(key, "FAIL", "the copy %s loads (%s) is version %s, older than this doctor's %s: update it; %s"
                      % (label, where, theirs, mine, fix))
    if check and check["status"] == "WARN":
        return result(key, "WARN", "installed (%s): %s" % (where, check["detail"]))
    return result(key, "ok", "installed and enabled: %s%s" % (where, " (version %s)" % theirs if theirs else ""))


def extension_installed(machine, key, label, enabled, base, manifest, hooks_check, fix, command):
    """The ``installed`` check of an extension (Gemini CLI, Qwen Code): ``enabled`` [(name, root)]
    are the extensions on for this project, ``base`` the folder each is installed in."""
    for name, root in enabled:
        if name == "briefing":
            return judge_copy(key, label, root, hooks_check, "%s extensions uninstall briefing, then %s" % (
                command, fix))
    try:
        folders = sorted(e.path for e in os.scandir(base) if e.is_dir())
    except OSError:
        folders = []
    for folder in folders:
        data = read_json(os.path.join(folder, manifest))
        if isinstance(data, dict) and data.get("name") == "briefing":
            return result(key, "WARN", "briefing is installed in %s (%s) but not enabled for this project: "
                          "%s extensions enable briefing" % (label, display_path(folder), command))
    return not_installed(key, label, fix)
