// briefing for OpenCode and Kilo: a thin plugin that asks the hook (docs/opencode.md).
//
// It decides nothing. At each point where the CLI lets a plugin act, it sends a JSON payload
// to hooks/briefing-preload on stdin (the same hook script every other harness runs) and does
// what the answer says: throw the guard's refusal, keep a briefing for a session, log a
// message. It keeps only which session runs which agent and what the hook answered for it,
// and rebuilds that from the next chat.message of a session it does not know (Kilo runs a
// second instance of every plugin for titles). One hook process per spawn, none per model call.
//
// One dependency-free ES module: Node's and Bun's built-ins only. Its only export is the
// plugin itself, because OpenCode takes every exported function of a plugin module for one.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

// The payload contract's version, sent under the key that names the CLI (opencode_plugin,
// kilo_plugin): the hook's harness records detect OpenCode and Kilo by it.
const CONTRACT = "1";

// hooks/briefing-python's messages, word for word (test/briefing.test.mjs compares them).
const START_MESSAGE = "briefing is not running: no Python 3.8 or newer was found (it tried python3, python and py -3; a Microsoft Store alias does not count). Install Python 3.8+ (the python.org installer or your package manager) and start a new session. Until then, agents start without the skills they declare.";
const SPAWN_MESSAGE = "briefing did not check or brief this agent: no Python 3.8 or newer was found (python3, python, py -3). If the agent declares skills, it starts without them. Install Python 3.8+ and start a new session.";

// How long the guard's answer waits for its child's chat.message (which follows within
// milliseconds): a task call that failed before its child started leaves no stale answer behind.
const PENDING_MS = 60 * 1000;

const VERSION_CHECK = "import sys; sys.exit(sys.version_info < (3, 8))";
const INTERPRETERS = [["python3"], ["python"], ["py", "-3"]];

// The hook beside this file: in a built plugin folder (hooks/ next to it) or in a checkout
// (opencode/ beside hooks/).
function findHook(here) {
  for (const candidate of [join(here, "hooks", "briefing-preload"), join(here, "..", "hooks", "briefing-preload")]) {
    if (existsSync(candidate)) return candidate;
  }
  return null;
}

// Which CLI runs this instance: each sets <NAME>_PID to its own process id (measured: Kilo
// sets OPENCODE too, so the pid decides, not the variable's presence).
function whichCli(env, pid, execPath) {
  if (env.KILO_PID === String(pid)) return "kilo";
  if (env.OPENCODE_PID === String(pid)) return "opencode";
  return /(^|[\\/])kilo(\.exe)?$/.test(execPath || "") ? "kilo" : "opencode";
}

function run(command, args, input, options) {
  return new Promise((resolve) => {
    let child;
    try {
      child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      resolve({ code: null, error, stdout: "", stderr: "" });
      return;
    }
    const out = [], err = [];
    child.stdout.on("data", (chunk) => out.push(chunk));
    child.stderr.on("data", (chunk) => err.push(chunk));
    child.on("error", (error) => resolve({ code: null, error, stdout: "", stderr: "" }));
    child.on("close", (code) => resolve({ code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") }));
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

// Runs the hook with a payload; its answer as an object, or null. The interpreter is chosen
// as hooks/briefing-python chooses it, by whether it runs, never by what the hook answered:
// python3 (or the plugin's "python" option) first; where that did not run the hook, the first
// of python3, python and py -3 that passes the version check; none: the fallback's message.
function hookRunner({ hook, cwd, env, first, log }) {
  let chosen; // undefined: not yet known; null: no usable Python
  const fallback = (payload) => ({
    systemMessage: payload.hook_event_name === "SessionStart" ? START_MESSAGE : SPAWN_MESSAGE,
  });
  const runHook = (interpreter, input) =>
    run(interpreter[0], [...interpreter.slice(1), "-I", "-S", "-B", hook], input, { cwd, env });
  async function usable() {
    for (const interpreter of INTERPRETERS) {
      const check = await run(interpreter[0], [...interpreter.slice(1), "-I", "-S", "-c", VERSION_CHECK], "", { cwd, env });
      if (check.code === 0) return interpreter;
    }
    return null;
  }
  function answerOf(result) {
    if (result.stderr.trim()) log("warn", result.stderr.trim());
    if (result.code !== 0 || !result.stdout.trim()) return null;
    try {
      return JSON.parse(result.stdout);
    } catch {
      log("error", "the hook printed something that is not JSON: " + result.stdout.slice(0, 200));
      return null;
    }
  }
  return async function ask(payload) {
    if (!hook || chosen === null) return fallback(payload);
    const input = JSON.stringify(payload);
    if (chosen) return answerOf(await runHook(chosen, input));
    const tried = first || INTERPRETERS[0];
    const result = await runHook(tried, input);
    if (result.code === 0) {
      chosen = tried;
      return answerOf(result);
    }
    chosen = await usable();
    if (!chosen) return fallback(payload);
    if (chosen.join(" ") === tried.join(" ")) return answerOf(result); // the hook itself failed: its status stands
    return answerOf(await runHook(chosen, input));
  };
}

function subtaskKey(session, agent, prompt) {
  return JSON.stringify([session, agent, prompt]);
}

// What an answer puts into the agent's context (the briefing, or the abort instruction).
function contextOf(answer) {
  const hso = answer && answer.hookSpecificOutput;
  return hso && typeof hso.additionalContext === "string" ? hso.additionalContext : null;
}

function refusalOf(answer) {
  const hso = answer && answer.hookSpecificOutput;
  return hso && hso.permissionDecision === "deny" ? String(hso.permissionDecisionReason || "briefing refused this spawn") : null;
}

async function server(input, options) {
  options = options || {};
  const here = options.here || dirname(fileURLToPath(import.meta.url));
  const env = options.env || process.env;
  const cli = options.cli || whichCli(env, process.pid, process.execPath);
  const cwd = input.directory || process.cwd();
  const client = input.client;

  function log(level, message) {
    if (!message) return;
    if (options.onMessage) options.onMessage(level, message);
    try {
      const sent = client && client.app && client.app.log({ body: { service: "briefing", level, message } });
      if (sent && typeof sent.catch === "function") sent.catch(() => {});
    } catch {}
  }
  function show(message, variant) {
    try {
      const sent = client && client.tui && client.tui.showToast({ body: { title: "briefing", message, variant } });
      if (sent && typeof sent.catch === "function") sent.catch(() => {});
    } catch {}
  }

  // The "python" option (a command, or a command and its arguments) replaces python3 as the first try.
  const first = options.python ? [].concat(options.python).map(String) : null;
  const ask = hookRunner({ hook: findHook(here), cwd, env, first, log });
  const payload = (event, fields) => ({ hook_event_name: event, [cli + "_plugin"]: CONTRACT, cwd, ...fields });
  const report = (answer, level) => { if (answer && answer.systemMessage) log(level || "info", answer.systemMessage); };

  const sessions = new Map(); // session id -> { agent, context }: what the hook answered for it
  const pending = new Map(); // agent -> { answer, count, at }: what the guard answered, for the child
  const now = options.now || Date.now;
  const subtasks = new Set(); // subtask parts not yet started: their task call cannot be refused (docs/opencode.md)
  const compacting = new Set(); // sessions whose summarizer request is being made
  const loaded = new Map(); // session id -> the hook's answer (a promise) for its skills loaded before its compaction

  // The pre-flight, once per instance, without holding up the CLI's start.
  // Shown in the CLI's log, as a toast in the TUI, and on stderr under `opencode run` / `kilo run`,
  // whose terminal shows no toast (argv: the runtime, the bundled script, then the command).
  const headless = options.headless !== undefined ? options.headless : process.argv[2] === "run";
  // The TUI attaches to the server seconds after the plugins start, and a toast sent before it
  // is lost (measured): the toast is shown again at the first message this instance sees.
  let toastAgain = null;
  const preflight = ask(payload("SessionStart", { source: "startup" })).then((answer) => {
    if (answer && answer.systemMessage) {
      log("warn", answer.systemMessage);
      show(answer.systemMessage, "warning");
      if (headless) process.stderr.write(answer.systemMessage + "\n");
      else toastAgain = answer.systemMessage;
    }
  }).catch(() => {});
  if (options.onPreflight) options.onPreflight(preflight);

  return {
    // The child's (or a session's) agent, before its first model request.
    "chat.message": async (inp, out) => {
      if (toastAgain) {
        show(toastAgain, "warning");
        toastAgain = null;
      }
      for (const part of (out && out.parts) || []) {
        if (part && part.type === "subtask") subtasks.add(subtaskKey(inp.sessionID, part.agent, part.prompt));
      }
      const session = inp.sessionID, agent = inp.agent;
      if (!session || typeof agent !== "string" || !agent) return;
      compacting.delete(session); // a new message: any compaction of this session is over
      const known = sessions.get(session);
      if (known && known.agent === agent) return;
      let answer;
      const kept = pending.get(agent);
      if (kept && now() - kept.at <= PENDING_MS) {
        answer = kept.answer;
        if (--kept.count <= 0) pending.delete(agent);
      } else {
        pending.delete(agent);
        answer = await ask(payload("SubagentStart", { agent_type: agent, session_id: session }));
      }
      sessions.set(session, { agent, context: contextOf(answer) });
      report(answer, refusalOf(answer) || (answer && /NOT briefed/.test(answer.systemMessage || "")) ? "warn" : "info");
    },

    // The guard: the model's task call is refused here, with briefing's reason.
    "tool.execute.before": async (inp, out) => {
      if (inp.tool !== "task" || !out || !out.args) return;
      // A command with subtask: true (or an @agent mention) fails the whole turn on a throw
      // (measured): its child is resolved at its chat.message instead, abort instruction and all.
      // Its task call comes with a part id of its own, so the subtask part's agent and prompt,
      // in the same session, say which call it is.
      const key = subtaskKey(inp.sessionID, out.args.subagent_type, out.args.prompt);
      if (subtasks.delete(key)) return;
      const answer = await ask(payload("PreToolUse", { tool_name: "task", tool_input: out.args, session_id: inp.sessionID }));
      const refusal = refusalOf(answer);
      if (refusal) {
        log("warn", refusal);
        throw new Error(refusal);
      }
      const agent = out.args.subagent_type;
      if (typeof agent === "string") {
        const kept = pending.get(agent);
        pending.set(agent, { answer, count: (kept ? kept.count : 0) + 1, at: now() });
      }
    },

    // Every request of a briefed session carries its briefing whole, as one more system entry;
    // the summarizer's request never does.
    "experimental.chat.system.transform": async (inp, out) => {
      const known = sessions.get(inp.sessionID);
      if (compacting.has(inp.sessionID) || !out || !Array.isArray(out.system)) return;
      if (known && known.context) out.system.push(known.context);
      // Issue 45: the skills it loaded before its compaction, on every request after it (docs/loaded-skills.md).
      const again = loaded.has(inp.sessionID) ? contextOf(await loaded.get(inp.sessionID)) : null;
      if (again) out.system.push(again);
    },

    // briefing: in an agent's frontmatter reaches the provider as a body field unless removed.
    "chat.params": async (inp, out) => {
      if (out && out.options && typeof out.options === "object") delete out.options.briefing;
    },

    "experimental.session.compacting": async (inp) => {
      if (inp && inp.sessionID) compacting.add(inp.sessionID);
    },
    "experimental.compaction.autocontinue": async (inp) => {
      if (inp && inp.sessionID) compacting.delete(inp.sessionID);
    },
    event: async (input) => {
      const event = (input && input.event) || {};
      const props = event.properties || {};
      if (event.type === "session.compacted" && props.sessionID) {
        compacting.delete(props.sessionID);
        const known = sessions.get(props.sessionID);
        const asked = ask(payload("SessionStart", { source: "compact", session_id: props.sessionID, agent: known && known.agent }))
          .catch(() => null);
        loaded.set(props.sessionID, asked);
        asked.then((answer) => report(answer));
      }
      if (event.type === "session.deleted" && props.info) {
        sessions.delete(props.info.id);
        loaded.delete(props.info.id);
      }
    },
  };
}

export default { id: "briefing", server };
