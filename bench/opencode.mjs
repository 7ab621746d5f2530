#!/usr/bin/env node
// The OpenCode/Kilo plugin's added cost per spawn (issue 39), against a bare interpreter start.
//
//   node bench/opencode.mjs [--runs N] [--python PATH]
//
// Rows, each timed N times from this process (OpenCode runs the plugin in Bun; spawning a
// process from it costs what it costs from node, shared/facts/opencode.md §4):
//   floor          python -I -S -c pass, spawned and awaited: a bare interpreter start
//   floor + json   python -I -S -c 'import json': the hook suite's usual floor
//   hook guard     the hook alone on the guard's payload (a typical declaring agent, one skill)
//   plugin spawn   everything the plugin does for one spawn: tool.execute.before (one hook
//                  process), the child's chat.message (no process: it keeps the guard's answer)
//                  and one system.transform
//   plugin turn    one more model request of a briefed child: system.transform alone
// Medians, min-max, and ratios to the floor; written to bench/results/opencode.json.
// python defaults to the real interpreter behind python3 (a pyenv shim would add its own start).
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, mkdirSync, writeFileSync, rmSync } from "node:fs";
import { tmpdir, cpus, loadavg } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import plugin from "../opencode/briefing.js";

const REPO = join(dirname(fileURLToPath(import.meta.url)), "..");
const args = process.argv.slice(2);
const opt = (name, fallback) => (args.includes(name) ? args[args.indexOf(name) + 1] : fallback);
const RUNS = Number(opt("--runs", "30"));
const PYTHON = opt("--python", spawnSync("python3", ["-c", "import sys; print(sys.executable)"], { encoding: "utf8" }).stdout.trim());

function project() {
  const root = mkdtempSync(join(tmpdir(), "briefing-bench-oc-"));
  const proj = join(root, "proj");
  const put = (rel, text) => { mkdirSync(dirname(join(proj, rel)), { recursive: true }); writeFileSync(join(proj, rel), text); };
  mkdirSync(join(proj, ".git"), { recursive: true });
  put(".opencode/agents/reviewer.md", "---\ndescription: reviews\nmode: subagent\nbriefing:\n  skills: [style]\n---\nReview.\n");
  for (let i = 0; i < 20; i++) put(`.opencode/agents/other-${i}.md`, `---\ndescription: other ${i}\n---\nbody\n`);
  put(".opencode/skills/style/SKILL.md", "---\nname: style\ndescription: the style\n---\n" + "Style rule line.\n".repeat(250));
  for (let i = 0; i < 10; i++) put(`.opencode/skills/s${i}/SKILL.md`, `---\nname: s${i}\ndescription: d\n---\nbody\n`);
  return { root, proj };
}

function run(argv, input) {
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0], argv.slice(1), { stdio: ["pipe", "pipe", "inherit"] });
    const out = [];
    child.stdout.on("data", (c) => out.push(c));
    child.on("error", reject);
    child.on("close", (code) => (code === 0 ? resolve(Buffer.concat(out).toString()) : reject(new Error(`${argv.join(" ")}: ${code}`))));
    child.stdin.end(input || "");
  });
}

async function time(fn) {
  await fn(); // warm-up
  const ms = [];
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    await fn(i);
    ms.push(performance.now() - start);
  }
  ms.sort((a, b) => a - b);
  return { median: ms[ms.length >> 1], min: ms[0], max: ms[ms.length - 1] };
}

const { root, proj } = project();
try {
  const env = { ...process.env, HOME: join(root, "home"), XDG_CONFIG_HOME: join(root, "home", ".config") };
  const guard = JSON.stringify({ hook_event_name: "PreToolUse", opencode_plugin: "1", cwd: proj, session_id: "P", tool_name: "task", tool_input: { subagent_type: "reviewer", description: "d", prompt: "p" } });
  const hooks = await plugin.server({ directory: proj }, { env, python: PYTHON, onPreflight: () => {} });
  const rows = {};
  rows["floor: python -I -S -c pass"] = await time(() => run([PYTHON, "-I", "-S", "-c", "pass"]));
  rows["python -I -S -c 'import json'"] = await time(() => run([PYTHON, "-I", "-S", "-c", "import json"]));
  rows["hook guard alone (one process)"] = await time(async () => {
    const out = await run([PYTHON, "-I", "-S", "-B", join(REPO, "hooks", "briefing-preload")], guard);
    if (!out.includes("additionalContext")) throw new Error("the guard did not brief: " + out);
  });
  rows["plugin spawn (guard + chat.message + system.transform)"] = await time(async (i) => {
    const argsOf = { subagent_type: "reviewer", description: "d", prompt: "p" };
    await hooks["tool.execute.before"]({ tool: "task", sessionID: "P", callID: `c${i}` }, { args: argsOf });
    await hooks["chat.message"]({ sessionID: `C${i}`, agent: "reviewer" }, { message: {}, parts: [] });
    const out = { system: ["prompt"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: `C${i}` }, out);
    if (out.system.length !== 2) throw new Error("not briefed");
  });
  rows["plugin turn (system.transform alone)"] = await time(async () => {
    const out = { system: ["prompt"] };
    await hooks["experimental.chat.system.transform"]({ sessionID: "C0" }, out);
  });
  const floor = rows["floor: python -I -S -c pass"].median;
  const version = spawnSync(PYTHON, ["-V"], { encoding: "utf8" }).stdout.trim();
  console.log(`node ${process.version}, ${version} (${PYTHON}), ${cpus().length} cores, load ${loadavg()[0].toFixed(1)}, ${RUNS} runs a row`);
  console.log("| row | median ms | x floor | min-max ms |\n|---|---:|---:|---:|");
  for (const [name, r] of Object.entries(rows)) {
    console.log(`| ${name} | ${r.median.toFixed(1)} | ${(r.median / floor).toFixed(2)} | ${r.min.toFixed(1)}-${r.max.toFixed(1)} |`);
  }
  mkdirSync(join(REPO, "bench", "results"), { recursive: true });
  writeFileSync(join(REPO, "bench", "results", "opencode.json"), JSON.stringify({ python: version, runs: RUNS, rows }, null, 2) + "\n");
} finally {
  rmSync(root, { recursive: true, force: true });
}
