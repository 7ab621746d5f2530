"""The ``briefing-doctor`` command of the installed distribution (pyproject.toml ``[project.scripts]``).

It runs the plugin's own ``bin/briefing-doctor``, of the plugin that ``plugin_path()`` names
(an installed wheel's copy, ``briefing_sdk/plugin/``; an editable install's checkout), as if
that script had been started: the doctor finds the plugin it belongs to (its version, its
hooks files) through the path it was started by, so that path must be the plugin's.
"""
import os
import runpy
import sys


def main(argv=None):
    from . import plugin_path
    script = os.path.join(plugin_path(), "bin", "briefing-doctor")
    sys.argv = [script] + (sys.argv[1:] if argv is None else list(argv))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as done:
        code = done.code
        if code is None or isinstance(code, int):
            return code or 0
        print(code, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
