"""End-to-end: briefing inside the real Gemini CLI 0.61.0, offline, against a scripted model.

The extension is installed the way a user would: built from a clean copy of the
checkout by ``scripts/build-gemini-extension``, installed with ``gemini extensions
install <built folder> --consent`` once per session into a template home that
every test copies, and the clone and the built folder are deleted before any
test spawns an agent (issue 28: the installed copy stands on its own). Each test
still gets a fresh HOME and project. Every run is headless (``gemini -p``) against the fake Gemini
API of ``fake_gemini.py`` on 127.0.0.1 and asserts on the logged model requests.
"""
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from fake_gemini import FakeGemini, complete_task, invoke_agent
from framing import PART_OPEN, rebuild
from kit import BRIEFED, UNBRIEFED, Skill, assert_briefing, markers_of, verdict
from runners import REPO, _base_env, binaries, git_init, run_process, tracked_copy, write_tree

pytestmark = pytest.mark.e2e

SETTINGS = {
    # Without it the env-derived auth type is rejected, exit 41 (facts/gemini-cli.md §20).
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "model": {"name": "gemini-2.5-flash"},
}


def gemini_env(home, url=None):
    env = _base_env()
    env.update({"HOME": str(home), "GEMINI_CLI_HOME": str(home), "GEMINI_API_KEY": "dummy",
                # Headless runs refuse an untrusted folder (exit 55, §22).
                "GEMINI_CLI_TRUST_WORKSPACE": "true", "NO_COLOR": "1", "TMPDIR": str(Path(home).parent / "tmp"),
                # Gemini CLI starts a second node with a larger heap and the same flag set, and that
                # child does the work and runs the hooks: starting it directly saves a whole CLI
                # start (about 1.5 CPU seconds here) per run, with the same environment for the hooks.
                "GEMINI_CLI_NO_RELAUNCH": "true"})
    if url:
        env["GOOGLE_GEMINI_BASE_URL"] = url
    (Path(home).parent / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def gemini(home, *args, cwd, url=None, timeout=120):
    return run_process(["node", binaries()[3]] + list(args), gemini_env(home, url), cwd, timeout)


def build_extension(clone, out):
    """``scripts/build-gemini-extension OUT`` of the clone: (the folder, the release archive)."""
    proc = subprocess.run([sys.executable, str(clone / "scripts" / "build-gemini-extension"), str(out)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc
    version = json.loads((clone / ".claude-plugin" / "plugin.json").read_text())["version"]
    return out / "briefing", out / ("briefing-gemini-%s.tar.gz" % version)


def install(home, source, project):
    result = gemini(home, "extensions", "install", str(source), "--consent", cwd=project)
    assert result.rc == 0 and 'Extension "briefing" installed successfully' in result.stdout + result.stderr, result
    return result


@pytest.fixture(scope="session")
def built(clis, tmp_path_factory):
    """The extension built from a clean clone: the folder and the archive, and the clone (kept for link)."""
    base = tmp_path_factory.mktemp("gemini-build")
    clone = tracked_copy(REPO, base / "clone")
    folder, archive = build_extension(clone, base / "out")
    return {"clone": clone, "folder": folder, "archive": archive}


@pytest.fixture(scope="session")
def installed_home(clis, tmp_path_factory):
    """A home with briefing installed by ``gemini extensions install`` from a folder built from a
    clean clone; the clone and the folder are gone before any test runs an agent."""
    base = tmp_path_factory.mktemp("gemini-template")
    clone = tracked_copy(REPO, base / "clone")
    folder, _ = build_extension(clone, base / "out")
    home = base / "home"
    write_tree(home, {".gemini/settings.json": json.dumps(SETTINGS)})
    project = base / "project"
    git_init(project)
    result = install(home, folder, project)
    shutil.rmtree(str(clone))
    shutil.rmtree(str(base / "out"))
    installed = home / ".gemini" / "extensions" / "briefing"
    return {"home": home, "installed": installed, "install": result, "source": folder}


class Machine:
    """A fresh home (a copy of the installed one, or an empty one), a git project, and a fake Gemini API."""

    def __init__(self, root, template, script):
        self.root = Path(root)
        self.home = self.root / "home"
        if template is None:
            write_tree(self.home, {".gemini/settings.json": json.dumps(SETTINGS)})
        else:
            shutil.copytree(str(template["home"]), str(self.home), symlinks=True)
        self.project = self.root / "project"
        git_init(self.project)
        self.server = FakeGemini(script).start()

    def write(self, files):
        write_tree(self.root, files)
        return self

    def acknowledge(self, *names):
        """What the interactive UI stores when the user accepts a project agent (§5)."""
        acks = {str(self.project): {
            name: hashlib.sha256((self.project / ".gemini" / "agents" / ("%s.md" % name)).read_text(
                encoding="utf-8").encode("utf-8")).hexdigest() for name in names}}
        self.write({"home/.gemini/acknowledgments/agents.json": json.dumps(acks)})

    def run(self, prompt="Do the work.", timeout=120):
        return gemini(self.home, "-p", prompt, "--output-format", "json", cwd=self.project,
                      url=self.server.url, timeout=timeout)


@pytest.fixture
def machine(installed_home, tmp_path):
    made = []

    def make(script, template=installed_home):
        m = Machine(tmp_path, template, script)
        made.append(m)
        return m

    yield make
    for n, m in enumerate(made):
        m.server.stop()
        m.server.dump(tmp_path / ("requests-%d.jsonl" % n))  # kept by pytest for post-mortems
        assert not m.server.errors, "fake model script failed:\n" + "\n".join(m.server.errors)
        assert not m.server.other, m.server.other


def agent_md(name, skills=None):
    text = "---\nname: %s\ndescription: e2e agent %s\n---\nYou are an e2e test agent. Do the task and report.\n" % (
        name, name)
    if skills is not None:
        text += "<!-- briefing: skills = [%s] -->\n" % ", ".join(json.dumps(s) for s in skills)
    return text


def task(n):
    return "ORIGINAL-PROMPT-FROM-MAIN: do the e2e task #%d and report." % n


def spawner(agents, markers):
    """The main agent spawns each agent in turn, one per turn; every subagent reports from its own request."""
    def script(r):
        if r.is_subagent:
            return [complete_task("Report: " + verdict(r.all_text, markers))]
        done = len(r.responses())
        if done < len(agents):
            return [invoke_agent(agents[done], task(done + 1))]
        return "All done."
    return script


def ok(result):
    assert result.rc == 0 and not result.timed_out, result
    return result


def first_request(server, n):
    """The first request of the subagent spawned for task #n."""
    for request in server.subagent_requests():
        if request.first_text().endswith(task(n)):
            return request
    raise AssertionError("no subagent request for task #%d" % n)


def split_prompt(prompt):
    head = PART_OPEN.match(prompt)
    assert head, prompt[:300]
    close = '</briefing seal="%s">' % head.group("seal")
    end = prompt.index(close) + len(close)
    return prompt[:end], prompt[end:]


def agent_results(server):
    """What the main agent was told each invoke_agent call returned, in order (from its last request)."""
    return [r["response"] for r in server.main_requests()[-1].responses() if r.get("name") == "invoke_agent"]


# ---------------------------------------------------------------------------

def test_the_extension_is_installed_with_gemini_extensions_install(installed_home, tmp_path):
    installed = installed_home["installed"]
    assert json.loads((installed / ".gemini-extension-install.json").read_text())["type"] == "local"
    assert not installed_home["source"].exists(), "the built folder must be gone"
    hooks = json.loads((installed / "hooks" / "hooks.json").read_text())["hooks"]
    assert [g["matcher"] for g in hooks["BeforeTool"]] == ["^invoke_agent$"]
    # Real files only: nothing in the installed copy points anywhere else.
    assert not [p for p in installed.rglob("*") if p.is_symlink()]
    for rel in ("hooks/briefing-preload", "hooks/briefing-python", "hooks/briefing/main.py",
                "skills/briefing/SKILL.md"):
        assert (installed / rel).is_file(), rel
    git_init(tmp_path / "p")
    listed = gemini(installed_home["home"], "extensions", "list", cwd=tmp_path / "p")
    assert listed.rc == 0 and "briefing (0." in listed.stdout + listed.stderr, listed
    assert "briefing" in (listed.stdout + listed.stderr).split("Agent skills:")[-1], listed


def test_brief_and_control(machine):
    alpha, beta = Skill("alpha"), Skill("beta")
    markers = markers_of([alpha, beta])
    m = machine(spawner(["reviewer", "plain"], markers))
    m.write({"project/.gemini/skills/alpha/SKILL.md": alpha.md(), "home/.agents/skills/beta/SKILL.md": beta.md(),
             "project/.gemini/agents/reviewer.md": agent_md("reviewer", ["alpha", "beta"]),
             "project/.gemini/agents/plain.md": agent_md("plain")})
    m.acknowledge("reviewer", "plain")

    result = ok(m.run())
    server = m.server

    briefed = first_request(server, 1)
    part, rest = split_prompt(briefed.first_text())
    assert rest == "\n\n" + task(1), "the original prompt must follow the briefing"
    assert_briefing([part], "reviewer", [alpha, beta], dirs={
        "alpha": m.project / ".gemini" / "skills" / "alpha", "beta": m.home / ".agents" / "skills" / "beta"})
    assert all(mark in briefed.first_text() for mark in markers)

    control = first_request(server, 2)
    assert control.first_text() == task(2), "the control agent's prompt must be untouched"
    assert not any(mark in r.all_text for r in server.subagent_requests()
                   if r.first_text().endswith(task(2)) for mark in markers)

    # The parent's history keeps the original prompts and never sees a skill body.
    for request in server.main_requests():
        assert not any(mark in request.all_text for mark in markers)
    calls = [c for c in server.main_requests()[-1].calls() if c["name"] == "invoke_agent"]
    assert [c["args"] for c in calls] == [{"agent_name": "reviewer", "prompt": task(1)},
                                          {"agent_name": "plain", "prompt": task(2)}]
    outputs = [r.get("output", "") for r in agent_results(server)]
    assert BRIEFED in outputs[0] and UNBRIEFED in outputs[1], outputs
    assert "briefing: reviewer \u2190 alpha, beta" in result.stderr, "the audit line reaches the user"


def test_missing_skill_is_denied_and_the_model_sees_why(machine):
    alpha = Skill("alpha")
    m = machine(spawner(["broken"], markers_of([alpha])))
    m.write({"home/.gemini/skills/alpha/SKILL.md": alpha.md(),
             "home/.gemini/agents/broken.md": agent_md("broken", ["alpha", "ghost-skill"])})

    result = ok(m.run())
    server = m.server
    assert server.subagent_requests() == [], "the subagent started although a skill is missing"
    response, = agent_results(server)
    assert set(response) == {"error"}, response
    assert response["error"].startswith("Tool execution blocked: briefing: agent 'broken' references "
                                        "unknown skill(s): ghost-skill."), response
    assert "~/.gemini/agents/broken.md" in response["error"]
    # The pre-flight told the user at session start (stderr), and never the model.
    assert "briefing pre-flight" in result.stderr and "ghost-skill" in result.stderr, result
    assert not any("briefing pre-flight" in r.all_text for r in server.log)


def test_a_briefing_over_64_kib_arrives_whole(machine):
    skills = [Skill("big-one", size=24000), Skill("big-two", size=24000), Skill("big-three", size=24000)]
    m = machine(spawner(["archivist"], markers_of(skills)))
    m.write({"home/.gemini/skills/%s/SKILL.md" % s.name: s.md() for s in skills})
    m.write({"home/.gemini/agents/archivist.md": agent_md("archivist", [s.name for s in skills])})

    ok(m.run())
    first = first_request(m.server, 1)
    part, rest = split_prompt(first.first_text())
    assert len(part.encode("utf-8")) > 64 * 1024
    assert rest == "\n\n" + task(1)
    rebuilt = assert_briefing([part], "archivist", skills)
    assert sum(len(b) for b in rebuilt.skills.values()) > 64 * 1024
    assert BRIEFED in agent_results(m.server)[0].get("output", "")


def test_the_release_archive_installs_and_stands_on_its_own(machine, built, tmp_path):
    """What Gemini CLI does with a release asset: extract the archive (the manifest at its root)
    into a folder and install that; then the archive and the folder are deleted, and it briefs."""
    alpha = Skill("alpha")
    m = machine(spawner(["reviewer", "broken"], markers_of([alpha])), template=None)
    m.write({"home/.gemini/skills/alpha/SKILL.md": alpha.md(),
             "home/.gemini/agents/reviewer.md": agent_md("reviewer", ["alpha"]),
             "home/.gemini/agents/broken.md": agent_md("broken", ["alpha", "ghost-skill"])})
    archive = tmp_path / built["archive"].name
    shutil.copy2(str(built["archive"]), str(archive))
    extracted = tmp_path / "extracted"
    with tarfile.open(str(archive)) as tar:
        assert tar.getnames()[0] == "gemini-extension.json"
        tar.extractall(str(extracted), **({"filter": "data"} if hasattr(tarfile, "data_filter") else {}))
    install(m.home, extracted, m.project)
    archive.unlink()
    shutil.rmtree(str(extracted))

    ok(m.run())
    part, rest = split_prompt(first_request(m.server, 1).first_text())
    assert rest == "\n\n" + task(1)
    assert_briefing([part], "reviewer", [alpha])
    denial = agent_results(m.server)[1]
    assert denial["error"].startswith("Tool execution blocked: briefing: agent 'broken' references "
                                      "unknown skill(s): ghost-skill."), denial


def test_a_linked_build_briefs_too(machine, built):
    """The development flow: ``gemini extensions link`` on a built folder runs it in place."""
    alpha = Skill("alpha")
    m = machine(spawner(["reviewer"], markers_of([alpha])), template=None)
    m.write({"home/.gemini/skills/alpha/SKILL.md": alpha.md(),
             "home/.gemini/agents/reviewer.md": agent_md("reviewer", ["alpha"])})
    linked = gemini(m.home, "extensions", "link", str(built["folder"]), "--consent", cwd=m.project)
    assert linked.rc == 0 and 'Extension "briefing" linked successfully' in linked.stdout + linked.stderr, linked

    ok(m.run())
    part, rest = split_prompt(first_request(m.server, 1).first_text())
    assert rest == "\n\n" + task(1)
    assert_briefing([part], "reviewer", [alpha])


def test_an_unacknowledged_project_agent_never_reaches_the_hook(machine):
    """What users trip over (facts/gemini-cli.md §5): Gemini CLI does not load a project agent the
    user has not acknowledged, so its spawn fails before any hook; the pre-flight says what to do."""
    alpha = Skill("alpha")
    m = machine(spawner(["reviewer"], markers_of([alpha])))
    m.write({"project/.gemini/skills/alpha/SKILL.md": alpha.md(),
             "project/.gemini/agents/reviewer.md": agent_md("reviewer", ["alpha"])})

    result = ok(m.run())
    assert m.server.subagent_requests() == []
    response, = agent_results(m.server)
    assert "Subagent 'reviewer' not found" in json.dumps(response), response
    assert "has not been acknowledged" in result.stderr and "Start `gemini` in" in result.stderr, result


def no_python_path(root):
    """A PATH like this machine's with no Python under any name, and python3 the Microsoft Store
    alias (exits 49, prints nothing): a Windows machine without Python, as far as the hooks see."""
    bin_dir = Path(root) / "no-python-bin"
    bin_dir.mkdir()
    for folder in ("/usr/local/bin", "/usr/bin", "/bin"):
        for entry in sorted(Path(folder).iterdir()) if Path(folder).is_dir() else []:
            target = bin_dir / entry.name
            if entry.name.startswith(("python", "py")) or target.exists() or not entry.is_file():
                continue
            target.symlink_to(entry)
    alias = bin_dir / "python3"
    alias.write_text("#!/bin/sh\nexit 49\n")
    alias.chmod(0o755)
    return str(bin_dir)


def test_without_python_the_user_is_told_and_spawns_go_on_unbriefed(machine):
    """No usable Python: the session start says what to install, each spawn that it went unchecked,
    and the spawn runs, unbriefed (README, "Without Python"): briefing cannot tell a declaring
    agent from any other without running."""
    alpha = Skill("alpha")
    m = machine(spawner(["reviewer"], markers_of([alpha])))
    m.write({"home/.gemini/skills/alpha/SKILL.md": alpha.md(),
             "home/.gemini/agents/reviewer.md": agent_md("reviewer", ["alpha"])})
    env = gemini_env(m.home, m.server.url)
    env["PATH"] = no_python_path(m.root)
    result = ok(run_process(["node", binaries()[3], "-p", "Do the work.", "--output-format", "json"], env,
                            m.project, 120))
    fallback = (REPO / "hooks" / "briefing-python").read_text()
    start = fallback.split("start_message='", 1)[1].split("'", 1)[0]
    spawn = fallback.split("spawn_message='", 1)[1].split("'", 1)[0]
    assert start in result.stderr and spawn in result.stderr, result
    request = first_request(m.server, 1)
    assert request.first_text() == task(1), "no briefing can have been delivered"
    assert UNBRIEFED in agent_results(m.server)[0].get("output", "")


def test_arguments_too_deep_to_pass_on_refuse_a_declaring_spawn(machine):
    """Issue 36, hole 2: the guard passes the spawn's arguments on whole or not at all. An
    ``invoke_agent`` call with an extra argument nested 500 levels deep (more than
    SPAWN_INPUT_DEPTH, 64; before the fix the hook's output raised RecursionError, printed
    nothing, and the agent ran unbriefed) must never start the declaring agent; one that
    declares nothing runs as it is."""
    alpha = Skill("alpha")
    deep = "LEAF"
    for _ in range(500):
        deep = {"k": deep}

    def script(r):
        if r.is_subagent:
            return [complete_task("Report: " + verdict(r.all_text, markers_of([alpha])))]
        done = len(r.responses())
        if done < 2:
            call = invoke_agent(["reviewer", "plain"][done], task(done + 1))
            call["functionCall"]["args"]["extra"] = deep
            return [call]
        return "All done."

    m = machine(script)
    m.write({"home/.gemini/skills/alpha/SKILL.md": alpha.md(),
             "home/.gemini/agents/reviewer.md": agent_md("reviewer", ["alpha"]),
             "home/.gemini/agents/plain.md": agent_md("plain")})
    ok(m.run())
    server = m.server
    assert not any(r.first_text().endswith(task(1)) for r in server.subagent_requests()), \
        "the declaring agent started although its arguments could not be passed on whole"
    first, second = agent_results(server)
    assert "error" in first, first
    assert ("briefing: agent 'reviewer' cannot be briefed: its spawn's arguments nest more than 64 "
            "levels deep") in first["error"], first
    assert UNBRIEFED in second.get("output", ""), second  # declares nothing: untouched


def test_a_different_spelling_starts_no_agent(machine):
    """Issue 43: Gemini CLI finds an agent by its exact name (AgentRegistry.getDefinition, a Map;
    measured here): no other spelling reaches an agent whose declaration would have to be folded."""
    alpha = Skill("alpha")
    plan = ["BROKEN", "Bro_ken", "Generalist"]
    m = machine(spawner(plan, markers_of([alpha])))
    m.write({"home/.gemini/skills/alpha/SKILL.md": alpha.md(),
             "home/.gemini/agents/broken.md": agent_md("broken", ["alpha", "ghost-skill"])})
    ok(m.run())
    assert m.server.subagent_requests() == []
    errors = [r.get("error", "") for r in agent_results(m.server)]
    assert errors == ["Subagent '%s' not found." % name for name in plan], errors


def test_a_large_non_latin_briefing_arrives_whole(machine):
    """Issue 43: 500 kB of emoji (under the 512 KiB of skill text) print as 1.5 MB of escaped JSON.
    Measured: Gemini CLI reads a hook's output whole at that size (HookRunner has no cap), and the
    subagent's prompt holds every emoji."""
    skill = Skill("emoji")
    skill.body = "First line: %s\n%s\nLast line: %s\n" % (skill.start, "\U0001F600" * 125000, skill.end)
    m = machine(spawner(["archivist"], markers_of([skill])))
    m.write({"home/.gemini/skills/emoji/SKILL.md": skill.md(),
             "home/.gemini/agents/archivist.md": agent_md("archivist", ["emoji"])})
    ok(m.run())
    part, rest = split_prompt(first_request(m.server, 1).first_text())
    assert rest == "\n\n" + task(1) and part.count("\U0001F600") == 125000
    assert_briefing([part], "archivist", [skill])
    assert BRIEFED in agent_results(m.server)[0].get("output", "")
