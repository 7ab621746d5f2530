"""The Machine: where the harnesses look on this machine, for one payload.

One Machine per hook run (or doctor run). It holds what every harness module
needs: the environment, the home folders the harnesses keep their files in
(detection reads these too), one memo per payload for lookups that thousands
of names repeat, and each harness's answer to "where is the project". What a
harness reads beyond that (its plugins, settings, layers) its own module
computes, keeping it in ``state`` for the rest of the run.
"""
import os

from .files import is_dir, real_path
from .harnesses import HARNESSES
from .lookup import frontmatter_names_below, plugin_skill_dirs
from .rules import RULES_FILE, USER_RULES_FILE, read_rules


class Machine(object):
    """Where the harnesses look on this machine, for one payload cwd.

    Reads are lazy and cached: a spawn that needs no plugin never reads the
    plugin registry. Each harness decides once where its project is
    (``project``); every project-level lookup of that harness starts there.
    """

    def __init__(self, cwd, env=None, transcript=None, session=None):
        env = os.environ if env is None else env
        self.env = env
        self.cwd = os.path.abspath(cwd)
        self.transcript = transcript if isinstance(transcript, str) else None
        self.session = session if isinstance(session, str) else None  # the payload's session id
        self.home = env.get("HOME") or os.path.expanduser("~")
        # Where each harness keeps its files: detection compares transcript paths with these.
        self.claude_dir = env.get("CLAUDE_CONFIG_DIR") or os.path.join(self.home, ".claude")
        self.codex_home = env.get("CODEX_HOME") or os.path.join(self.home, ".codex")
        # Gemini CLI's home: GEMINI_CLI_HOME replaces the home folder for ~/.gemini and ~/.agents alike.
        self.gemini_home = env.get("GEMINI_CLI_HOME") or self.home
        self.gemini_dir = os.path.join(self.gemini_home, ".gemini")
        self.copilot_home = env.get("COPILOT_HOME") or os.path.join(self.home, ".copilot")
        self.own_plugin_root = env.get("CLAUDE_PLUGIN_ROOT")
        self.state = {}  # what a harness module read once for this run: its plugins, settings, ...
        self._projects = {}
        self._memo = {}  # see memo(): roots that exist, folder listings, real paths, per payload
        self._rules = {}
        config = env.get("XDG_CONFIG_HOME")
        config = config if config and os.path.isabs(config) else os.path.join(self.home, ".config")
        self.user_rules_file = os.path.join(config, USER_RULES_FILE)

    def live(self, key, roots_of):
        """The (origin, folder) skill roots ``roots_of()`` lists that exist, decided once per payload.

        A declaration of thousands of skills is resolved against the same few
        roots: the list is built once, and a root that is not there is dropped.
        """
        memo_key = ("live roots", key)
        roots = self._memo.get(memo_key)  # no memo() call, no closure: this runs once per name
        if roots is None:
            roots = self._memo[memo_key] = [(o, root) for o, root in roots_of() if is_dir(root)]
        return roots

    def memo(self, key, compute):
        """``compute()``, once per payload for each ``key``: lookups that thousands of names repeat."""
        if key not in self._memo:
            self._memo[key] = compute()
        return self._memo[key]

    def known(self, key):
        """(True, the value) when ``memo`` has computed ``key`` already, else (False, None)."""
        if key in self._memo:
            return True, self._memo[key]
        return False, None

    def is_dir(self, path):
        return self.memo(("is_dir", path), lambda: is_dir(path))

    def real_path(self, path):
        """``os.path.realpath(path)``, with the folders above ``path`` resolved once per payload.

        A briefing of thousands of skills in one root would otherwise resolve
        that root's every component again for each skill. Exact: a folder is
        resolved fully, then only the last component can still be a link. A loop,
        not a recursion per component: a path of any depth costs no stack (issue 36).
        """
        below = []  # (a path, its last component), from ``path`` up to the nearest folder known
        while True:
            parent, leaf = os.path.split(path)
            if not parent or parent == path or leaf in ("", ".", ".."):
                real = real_path(path)
                break
            below.append((path, leaf))
            real = self._memo.get(("real path", parent))
            if real is not None:
                break
            path = parent
        for index in range(len(below) - 1, -1, -1):
            path, leaf = below[index]
            joined = os.path.join(real, leaf)
            real = real_path(joined) if os.path.islink(joined) else joined
            if index:
                self._memo[("real path", path)] = real  # the parent of the next one down
        return real

    def plugin_skill_dirs(self, root, manifest_dir=".claude-plugin"):
        """``plugin_skill_dirs`` as a list, read once per payload (and warned about once)."""
        return self.memo(("plugin skill dirs", root, manifest_dir),
                         lambda: list(plugin_skill_dirs(root, manifest_dir)))

    def frontmatter_names(self, folder):
        """``frontmatter_names_below(folder)``, read once per payload."""
        return self.memo(("frontmatter names", folder), lambda: frontmatter_names_below(folder))

    def project(self, key):
        """The Project of harness ``key``, decided once, by that harness's record."""
        if key not in self._projects:
            self._projects[key] = HARNESSES[key].find_project(self)
        return self._projects[key]

    def rules_files(self, key):
        """[(scope, path)] of the rules files harness ``key`` reads.

        Precedence: the project folders' files, nearest first (the folders the harness reads
        its own project config from), then the user's.
        """
        files = [("project", os.path.join(f, RULES_FILE)) for f in self.project(key).folders]
        return files + [("user", self.user_rules_file)]

    def rules(self, key):
        """(every Rule of harness ``key``'s rules files, [(path, why)] of unusable files), read once.

        Only the files of the scopes the harness loads in this session (``Harness.loads_scope``:
        ``claude --setting-sources``): a session isolated from the project reads no project rules.
        """
        if key not in self._rules:
            harness = HARNESSES[key]
            self._rules[key] = read_rules([(scope, path) for scope, path in self.rules_files(key)
                                           if harness.loads_scope(self, scope)])
        return self._rules[key]
