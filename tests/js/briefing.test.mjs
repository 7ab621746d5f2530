// The OpenCode/Kilo plugin (opencode/briefing.js), driven as the CLIs drive it, against the real
// hook in a temporary project: node --test tests/js (scripts/test runs it).
import { test } from "node:test";
import assert from "node:assert/strict";
import { mkdtempSync, mkdirSync, writeFileSync, readFileSync, rmSync, chmodSync, cpSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { spawnSync } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import plugin from "../../opencode/briefing.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const PLUGIN_DIR = join(REPO, "opencode");

function project(files) {
  const root = mkdtempSync(join(tmpdir(), "briefing-js-"));
  const home = join(root, "home"), proj = join(root, "proj");
  mkdirSync(join(proj, ".git"), { recursive: true });
  mkdirSync(home, { recursive: true });
  for (const [rel, text] of Object.entries(files)) {
    const path = join(proj, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  return { root, home, proj };
}

const AGENTS = {
  ".opencode/agents/briefed.md": "---\ndescription: b\nmode: subagent\nbriefing:\n  skills: [demo-magic]\n---\nYou are briefed.\n",
  ".opencode/agents/broken.md": "---\ndescription: x\nbriefing:\n  skills: [nope]\n---\nbody\n",
  ".opencode/agents/plain.md": "---\ndescription: p\n---\nplain\n",
  ".opencode/skills/demo-magic/SKILL.md": "---\nname: demo-magic\ndescription: d\n---\nMAGIC-PHRASE-42\n",
};

async function start(files, extra = {}) {
  const p = project(files);
  const messages = [];
  let preflight;
  const env = { ...process.env, HOME: p.home, XDG_CONFIG_HOME: join(p.home, ".config") };
  delete env.KILO_PID;
  delete env.OPENCODE_PID;
  const hooks = await plugin.server(
    { directory: p.proj, client: undefined },
    { here: PLUGIN_DIR, env, onMessage: (level, message) => messages.push({ level, message }), onPreflight: (x) => (preflight = x), ...extra },
  );
  await preflight;
  return { p, hooks, messages, cleanup: () => rmSync(p.root, { recursive: true, force: true }) };
}

// Runs ``fn`` with a started plugin, and removes the project after it.
async function withPlugin(files, extra, fn) {
  if (typeof extra === "function") [extra, fn] = [{}, extra];
  const started = await start(files, extra);
  try {
    await fn(started);
  } finally {
    started.cleanup();
  }
}

async function system(hooks, sessionID) {
  const out = { system: ["agent prompt"] };
  await hooks["experimental.chat.system.transform"]({ sessionID, model: {} }, out);
  return out.system.slice(1);
}

test("the only export is the plugin ({id, server})", async () => {
  const module = await import("../../opencode/briefing.js");
  assert.deepEqual(Object.keys(module), ["default"]);
  assert.equal(module.default.id, "briefing");
  assert.equal(typeof module.default.server, "function");
});

test("the no-Python messages are hooks/briefing-python's, word for word", () => {
  const js = readFileSync(join(PLUGIN_DIR, "briefing.js"), "utf8");
  const sh = readFileSync(join(REPO, "hooks", "briefing-python"), "utf8");
  for (const name of ["start_message", "spawn_message"]) {
    const text = sh.match(new RegExp(`^${name}='([^']*)'`, "m"))[1];
    assert.ok(js.includes(JSON.stringify(text)), `${name} differs`);
  }
});

test("a guarded spawn: one hook process, the briefing in every request of the child, whole", async () => {
  await withPlugin(AGENTS, async ({ hooks, messages }) => {
  const args = { subagent_type: "briefed", description: "d", prompt: "go" };
  await hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: "call_1" }, { args });
  await hooks["chat.message"]({ sessionID: "C", agent: "briefed" }, { message: {}, parts: [] });
  const first = await system(hooks, "C");
  assert.equal(first.length, 1);
  assert.match(first[0], /^<briefing agent="briefed"/);
  assert.ok(first[0].includes("MAGIC-PHRASE-42"));
  assert.deepEqual(await system(hooks, "C"), first, "every request carries it again");
  assert.deepEqual(await system(hooks, "P"), [], "the parent gets nothing");
  assert.ok(messages.some((m) => m.message.startsWith("briefing: briefed")), JSON.stringify(messages));
  });
});

test("a missing skill: the task call throws briefing's reason, and no briefing is kept", async () => {
  await withPlugin(AGENTS, async ({ hooks }) => {
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: "call_2" }, { args: { subagent_type: "broken", prompt: "x" } }),
    (error) => error.message.startsWith("briefing: agent 'broken' references unknown skill(s): nope"),
  );
  });
});

test("a subtask (command or @mention) is not refused at the call: its child gets the abort instruction", async () => {
  await withPlugin(AGENTS, async ({ hooks }) => {
  await hooks["chat.message"]({ sessionID: "P", agent: "build" }, { message: {}, parts: [{ type: "subtask", id: "prt_1", agent: "broken", prompt: "x" }] });
  // The task call has a part id of its own (measured): the agent and prompt tell it apart.
  await hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: "prt_2" }, { args: { subagent_type: "broken", prompt: "x", command: "c" } });
  await hooks["chat.message"]({ sessionID: "C2", agent: "broken" }, { message: {}, parts: [] });
  const [abort] = await system(hooks, "C2");
  assert.match(abort, /status="abort"/);
  assert.match(abort, /STOP\. Do not attempt the task/);
  assert.ok(!abort.includes("<skill"));
  });
});

test("an unguarded child (an @agent mention) is resolved at its chat.message", async () => {
  await withPlugin(AGENTS, async ({ hooks }) => {
  await hooks["chat.message"]({ sessionID: "C3", agent: "briefed" }, { message: {}, parts: [] });
  const [briefing] = await system(hooks, "C3");
  assert.ok(briefing.includes("MAGIC-PHRASE-42"));
  });
});

test("compaction: the summarizer's request gets nothing, the next request the briefing again, once", async () => {
  await withPlugin(AGENTS, async ({ hooks }) => {
  await hooks["chat.message"]({ sessionID: "C", agent: "briefed" }, { message: {}, parts: [] });
  const before = await system(hooks, "C");
  await hooks["experimental.session.compacting"]({ sessionID: "C" }, { context: [] });
  assert.deepEqual(await system(hooks, "C"), [], "the summarizer's request");
  await hooks["experimental.compaction.autocontinue"]({ sessionID: "C", agent: "briefed" }, { enabled: true });
  await hooks.event({ event: { type: "session.compacted", properties: { sessionID: "C" } } });
  assert.deepEqual(await system(hooks, "C"), before, "after the compaction");
  // Without autocontinue (a manual compaction): the event ends it as well.
  await hooks["experimental.session.compacting"]({ sessionID: "C" }, { context: [] });
  await hooks.event({ event: { type: "session.compacted", properties: { sessionID: "C" } } });
  assert.deepEqual(await system(hooks, "C"), before);
  });
});

test("compaction: a skill the session loaded before it comes back on every later request (issue 45)", async () => {
  await withPlugin(AGENTS, async ({ hooks, p }) => {
    // OpenCode's database as it records a skill tool call and then a compaction (docs/loaded-skills.md)
    const db = join(p.home, ".local", "share", "opencode", "opencode.db");
    mkdirSync(dirname(db), { recursive: true });
    const parts = [
      { type: "tool", tool: "skill", state: { status: "completed", input: { name: "demo-magic" }, output: "LOADED-MAGIC-7", metadata: {} } },
      { type: "compaction", auto: true, overflow: false },
    ];
    const made = spawnSync("python3", ["-c", `import json, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("CREATE TABLE part (id TEXT, session_id TEXT, time_created INTEGER, data TEXT)")
for n, data in enumerate(json.loads(sys.argv[2])):
    db.execute("INSERT INTO part VALUES (?, ?, ?, ?)", ("prt_%d" % n, "ses_M", n + 1, json.dumps(data)))
db.commit()`, db, JSON.stringify(parts)]);
    assert.equal(made.status, 0, String(made.stderr));
    await hooks["chat.message"]({ sessionID: "ses_M", agent: "plain" }, { message: {}, parts: [] });
    assert.deepEqual(await system(hooks, "ses_M"), []);
    await hooks["experimental.session.compacting"]({ sessionID: "ses_M" }, { context: [] });
    await hooks.event({ event: { type: "session.compacted", properties: { sessionID: "ses_M" } } });
    for (const request of [1, 2]) {
      const added = await system(hooks, "ses_M");
      assert.equal(added.length, 1, "request " + request);
      assert.ok(added[0].includes("LOADED-MAGIC-7") && added[0].startsWith('<briefing agent="plain"'), added[0]);
    }
    assert.deepEqual(await system(hooks, "other"), []);
  });
});

test("chat.params removes the briefing declaration from the provider options", async () => {
  await withPlugin(AGENTS, async ({ hooks }) => {
  const out = { options: { briefing: { skills: ["demo-magic"] }, reasoningEffort: "low" } };
  await hooks["chat.params"]({ sessionID: "C", agent: "briefed" }, out);
  assert.deepEqual(out.options, { reasoningEffort: "low" });
  });
});

test("an agent that declares nothing: no briefing, and its session is not asked about again", async () => {
  await withPlugin(AGENTS, async ({ hooks }) => {
  await hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: "c" }, { args: { subagent_type: "plain", prompt: "x" } });
  await hooks["chat.message"]({ sessionID: "C", agent: "plain" }, { message: {}, parts: [] });
  assert.deepEqual(await system(hooks, "C"), []);
  });
});

test("the pre-flight goes to the log", async () => {
  await withPlugin(AGENTS, async ({ messages }) => {
  const line = messages.find((m) => m.message.startsWith("briefing pre-flight"));
  assert.ok(line, JSON.stringify(messages));
  assert.equal(line.level, "warn");
  assert.match(line.message, /OpenCode agent 'broken'/);
  });
});

test("Kilo: the payload names Kilo, which reads .kilo/", async () => {
  const files = {};
  for (const [rel, text] of Object.entries(AGENTS)) files[rel.replace(".opencode/", ".kilo/")] = text;
  await withPlugin(files, { cli: "kilo" }, async ({ hooks, messages }) => {
  assert.match(messages.find((m) => m.message.startsWith("briefing pre-flight")).message, /Kilo agent 'broken'/);
  await hooks["chat.message"]({ sessionID: "K", agent: "briefed" }, { message: {}, parts: [] });
  assert.ok((await system(hooks, "K"))[0].includes("MAGIC-PHRASE-42"));
  });
});

test("no Python 3.8+: the spawn goes on, and the fallback's message says why", async () => {
  const bin = mkdtempSync(join(tmpdir(), "briefing-nopy-"));
  try {
    await withPlugin(AGENTS, { env: { PATH: bin, HOME: bin } }, async ({ hooks, messages }) => {
      assert.ok(messages.some((m) => m.message.startsWith("briefing is not running: no Python 3.8")), JSON.stringify(messages));
      await hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: "c" }, { args: { subagent_type: "broken", prompt: "x" } });
      await hooks["chat.message"]({ sessionID: "C", agent: "briefed" }, { message: {}, parts: [] });
      assert.ok(messages.some((m) => m.message.startsWith("briefing did not check or brief this agent")));
    });
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});

test("a python3 older than 3.8 is passed over for the next interpreter", async () => {
  const bin = mkdtempSync(join(tmpdir(), "briefing-oldpy-"));
  try {
    // python3 here is a stand-in that fails like an old interpreter; python is the real one.
    writeFileSync(join(bin, "python3"), "#!/bin/sh\nexit 1\n");
    chmodSync(join(bin, "python3"), 0o755);
    const real = spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).stdout.trim();
    writeFileSync(join(bin, "python"), `#!/bin/sh\nexec ${real} "$@"\n`);
    chmodSync(join(bin, "python"), 0o755);
    await withPlugin(AGENTS, { env: { ...process.env, PATH: `${bin}:/usr/bin:/bin`, HOME: bin } }, async ({ hooks }) => {
      await hooks["chat.message"]({ sessionID: "C", agent: "briefed" }, { message: {}, parts: [] });
      assert.ok((await system(hooks, "C"))[0].includes("MAGIC-PHRASE-42"));
    });
  } finally {
    rmSync(bin, { recursive: true, force: true });
  }
});

test("the guard's answer is the child's only while it is fresh; an old one is asked again", async () => {
  let clock = 1000;
  await withPlugin(AGENTS, { now: () => clock }, async ({ p, hooks }) => {
  await hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: "c1" }, { args: { subagent_type: "briefed", prompt: "x" } });
  // The skill changes after a task call whose child never started.
  writeFileSync(join(p.proj, ".opencode/skills/demo-magic/SKILL.md"), "---\nname: demo-magic\ndescription: d\n---\nNEW-PHRASE-7\n");
  clock += 61 * 1000;
  await hooks["chat.message"]({ sessionID: "C", agent: "briefed" }, { message: {}, parts: [] });
  const [briefing] = await system(hooks, "C");
  assert.ok(briefing.includes("NEW-PHRASE-7") && !briefing.includes("MAGIC-PHRASE-42"));
  });
});

test("a model's task call is refused even when a subtask of the same agent is pending with another prompt", async () => {
  await withPlugin(AGENTS, async ({ hooks }) => {
  await hooks["chat.message"]({ sessionID: "P", agent: "build" }, { message: {}, parts: [{ type: "subtask", id: "prt_1", agent: "broken", prompt: "one" }] });
  await assert.rejects(
    hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: "call_9" }, { args: { subagent_type: "broken", prompt: "other" } }),
    /references unknown skill\(s\): nope/,
  );
  });
});

test("an instance that never saw a session's chat.message adds nothing (Kilo's title instance)", async () => {
  await withPlugin(AGENTS, async ({ hooks }) => {
  await hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: "c" }, { args: { subagent_type: "briefed", prompt: "x" } });
  assert.deepEqual(await system(hooks, "P"), []);
  assert.deepEqual(await system(hooks, "unknown-session"), []);
  });
});

test("the pre-flight toast is shown at start and again at the first message (the TUI attaches late)", async () => {
  const toasts = [], logs = [];
  const client = {
    app: { log: async ({ body }) => logs.push(body) },
    tui: { showToast: async ({ body }) => toasts.push(body) },
  };
  const p = project(AGENTS);
  try {
    let preflight;
    const env = { ...process.env, HOME: p.home, XDG_CONFIG_HOME: join(p.home, ".config") };
    const hooks = await plugin.server({ directory: p.proj, client }, { here: PLUGIN_DIR, env, headless: false, onPreflight: (x) => (preflight = x) });
    await preflight;
    assert.equal(toasts.length, 1);
    assert.match(toasts[0].message, /^briefing pre-flight/);
    assert.equal(toasts[0].variant, "warning");
    assert.ok(logs.some((b) => b.service === "briefing" && b.level === "warn" && /pre-flight/.test(b.message)));
    await hooks["chat.message"]({ sessionID: "P", agent: "build" }, { message: {}, parts: [] });
    await hooks["chat.message"]({ sessionID: "P", agent: "build" }, { message: {}, parts: [] });
    assert.equal(toasts.length, 2, "once more, at the first message only");
  } finally {
    rmSync(p.root, { recursive: true, force: true });
  }
});

// ---------------------------------------------------------------------------------------------
// A hook run that cannot happen, crashes, times out or answers garbage (issue 43, item 2): never
// "nothing to say". A spawn is refused (or, a subtask's child, told to abort) with a message that
// names briefing and the cause; a session's own agent hears it; the pre-flight says it.
// ---------------------------------------------------------------------------------------------

// A plugin folder of its own: briefing.js and hooks/ as the build lays them out, or with a
// stand-in hook (a Python script) that fails one way.
function pluginFolder(hook) {
  const folder = mkdtempSync(join(tmpdir(), "briefing-plugin-"));
  cpSync(join(PLUGIN_DIR, "briefing.js"), join(folder, "briefing.js"));
  if (hook === undefined) cpSync(join(REPO, "hooks"), join(folder, "hooks"), { recursive: true });
  else if (hook !== null) {
    mkdirSync(join(folder, "hooks"));
    writeFileSync(join(folder, "hooks", "briefing-preload"), hook);
  }
  return folder;
}

const FAILING = {
  "crashes": { hook: "import sys\nsys.stdin.read()\nsys.stderr.write('Traceback: boom\\n')\nsys.exit(1)\n", cause: /its hook exited with status 1 \(Traceback: boom\)/ },
  "is killed": { hook: "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n", cause: /its hook was killed \(SIGKILL\)/ },
  "times out": { hook: "import os, sys, time\nopen(os.environ['PID_FILE'], 'a').write('%d\\n' % os.getpid())\ntime.sleep(120)\n", cause: /its hook did not answer within 1 s \(it was stopped\)/ },
  "answers garbage": { hook: "print('hello there')\n", cause: /its hook answered something that is not a JSON object \(hello there\)/ },
  "answers cut-off JSON": { hook: "print('{\"hookSpecificOutput\": {\"permissionDecision\": \"de')\n", cause: /not a JSON object \(\{"hookSpecificOutput/ },
  "answers a JSON array": { hook: "print('[1, 2]')\n", cause: /not a JSON object \(\[1, 2\]\)/ },
};

// The three places a failed run shows, after ``spoil()`` (run once the pre-flight is done):
// the model's task call, a subtask's child, and a session's own agent.
async function failingRuns(folder, spoil, extra = {}) {
  const p = project(AGENTS);
  const messages = [];
  let preflight;
  const env = { ...process.env, HOME: p.home, XDG_CONFIG_HOME: join(p.home, ".config"), ...(extra.env || {}) };
  try {
    const hooks = await plugin.server(
      { directory: p.proj, client: undefined },
      // A short timeout only where the test is about it: a real hook run under a loaded CI
      // machine (the end-to-end suite beside it) can take more than a second.
      { here: folder, env, timeout: extra.timeout || 30000, onMessage: (level, message) => messages.push({ level, message }), onPreflight: (x) => (preflight = x) },
    );
    await preflight;
    const atStart = messages.splice(0);
    spoil();
    let refusal = null;
    await hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: "c" }, { args: { subagent_type: "plain", prompt: "x" } })
      .catch((error) => (refusal = error.message));
    await hooks["chat.message"]({ sessionID: "P", agent: "build" }, { message: {}, parts: [{ type: "subtask", id: "prt_1", agent: "briefed", prompt: "y" }] });
    const own = { system: await system(hooks, "P"), messages: messages.splice(0) };
    await hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: "prt_2" }, { args: { subagent_type: "briefed", prompt: "y", command: "c" } });
    await hooks["chat.message"]({ sessionID: "C", agent: "briefed" }, { message: {}, parts: [] });
    const child = { system: await system(hooks, "C"), messages: messages.splice(0) };
    return { atStart, refusal, own, child };
  } finally {
    rmSync(p.root, { recursive: true, force: true });
  }
}

function assertRefusedEverywhere(runs, cause) {
  assert.ok(runs.refusal, "the task call went through");
  assert.match(runs.refusal, /^briefing /);
  assert.match(runs.refusal, cause);
  const [abort] = runs.child.system;
  assert.equal(runs.child.system.length, 1, "the subtask's child got nothing");
  assert.match(abort, /^<briefing agent="briefed" status="abort">\nSTOP\. Do not attempt the task/);
  assert.match(abort, cause);
  assert.ok(runs.child.messages.some((m) => m.level === "warn" && m.message.startsWith("briefing: NOT briefed, told to abort: agent 'briefed': ")));
  // The session's own agent is not a spawn: it goes on, and hears why nothing was checked.
  assert.deepEqual(runs.own.system, []);
  assert.ok(runs.own.messages.some((m) => m.level === "warn" && /^briefing /.test(m.message) && cause.test(m.message)), JSON.stringify(runs.own.messages));
}

for (const [name, { hook, cause }] of Object.entries(FAILING)) {
  test(`a hook that ${name}: the pre-flight says so, a spawn is refused with the cause`, { timeout: 60000 }, async () => {
    const folder = pluginFolder(hook);
    const pids = join(folder, "pids");
    try {
      const runs = await failingRuns(folder, () => {}, { env: { PID_FILE: pids }, timeout: name === "times out" ? 1000 : undefined });
      assert.ok(runs.atStart.some((m) => m.level === "warn" && m.message.startsWith("briefing could not run its pre-flight: ") && cause.test(m.message)),
        JSON.stringify(runs.atStart));
      assert.match(runs.refusal, /^briefing could not check this spawn, so it is refused: /);
      assertRefusedEverywhere(runs, cause);
      if (name === "times out") {
        // Every run it started was killed, none is left behind.
        // (Under load a run may be stopped before its interpreter got to write its pid: those
        // count too, through the refusals above; the ones that wrote must all be gone.)
        const started = existsSync(pids) ? readFileSync(pids, "utf8").trim().split("\n").filter(Boolean).map(Number) : [];
        for (const pid of started) {
          for (let i = 0; i < 50 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
          assert.ok(!alive(pid), `pid ${pid} still runs`);
        }
      }
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

test("the folder-gone message is scripts/hook-commands' GONE, word for word", () => {
  const js = readFileSync(join(PLUGIN_DIR, "briefing.js"), "utf8");
  const py = readFileSync(join(REPO, "scripts", "hook-commands"), "utf8");
  const gone = py.match(/^GONE = \(([\s\S]*?)\)$/m)[1].match(/"([^"]*)"/g).map((s) => s.slice(1, -1)).join("");
  assert.ok(js.includes(JSON.stringify(gone)), "GONE differs");
});

test("the plugin folder removed while the CLI runs: every spawn is refused, naming the folder", { timeout: 60000 }, async () => {
  const folder = pluginFolder(undefined);
  try {
    const runs = await failingRuns(folder, () => rmSync(folder, { recursive: true, force: true }));
    assert.ok(runs.atStart.some((m) => m.message.startsWith("briefing pre-flight")), "the hook ran at start");
    const gone = `briefing cannot run: its folder ${folder} is gone (updated or removed while this session ran), so every agent spawn is refused. Restart the session; if this goes on, reinstall briefing.`;
    assert.equal(runs.refusal, gone);
    assertRefusedEverywhere(runs, new RegExp(`its folder ${folder.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is gone`));
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});

test("no Python, and then the folder gone: the folder's line wins, as in the hooks files' commands", { timeout: 60000 }, async () => {
  const folder = pluginFolder(undefined);
  const bin = mkdtempSync(join(tmpdir(), "briefing-nopy-"));
  try {
    const runs = await failingRuns(folder, () => rmSync(folder, { recursive: true, force: true }), { env: { PATH: bin } });
    assert.ok(runs.atStart.some((m) => m.message.startsWith("briefing is not running: no Python 3.8")), JSON.stringify(runs.atStart));
    assertRefusedEverywhere(runs, /briefing cannot run: its folder .* is gone/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
    rmSync(bin, { recursive: true, force: true });
  }
});

test("briefing.js copied on its own: it says the hook is missing beside it, not Python, and refuses spawns", { timeout: 60000 }, async () => {
  const folder = pluginFolder(null);
  try {
    const runs = await failingRuns(folder, () => {});
    const alone = `briefing cannot run: the hook it runs, hooks/briefing-preload, is not beside briefing.js in ${folder} (the file was installed without its folder), so every agent spawn is refused. Install the whole plugin folder (docs/opencode.md) and start a new session.`;
    assert.deepEqual(runs.atStart.map((m) => [m.level, m.message]), [["warn", alone]]);
    assert.ok(!JSON.stringify(runs).includes("no Python"));
    assert.equal(runs.refusal, alone);
    assertRefusedEverywhere(runs, /hooks\/briefing-preload, is not beside briefing\.js/);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
});
