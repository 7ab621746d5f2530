// briefing for OpenCode and Kilo: a thin plugin that asks the hook (docs/opencode.md).
//
// It decides nothing. At each point where the CLI lets a plugin act, it sends a JSON payload
// to hooks/briefing-preload on stdin (the same hook script every other harness runs) and does
// what the answer says: throw the guard's refusal, keep a briefing for a session, log a
// message. It keeps only which session runs which agent and what the hook answered for it,
// and rebuilds that from the next chat.message of a session it does not know (Kilo runs a
// second instance of every plugin for titles). One hook process per spawn, none per model call.
// A hook run that could not happen (the folder gone, briefing.js alone), crashed, timed out or
// answered something that is not JSON is not "nothing to say": it refuses the spawn, naming
// briefing and the cause, as the command-hook harnesses do (docs/opencode.md, "When the hook
// cannot run").
//
// One dependency-free ES module: Node's and Bun's built-ins only. Its only export is the
// plugin itself, because OpenCode takes every exported function of a plugin module for one.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

// The payload contract's version, sent under the key that names the CLI (opencode_plugin,
// kilo_plugin): the hook's harness records detect OpenCode and Kilo by it.
const CONTRACT = "1";

// hooks/briefing-python's messages, word for word (test/briefing.test.mjs compares them).
const START_MESSAGE = "briefing is not running: no Python 3.8 or newer was found (it tried python3, python and py -3; a Microsoft Store alias does not count). Install Python 3.8+ (the python.org installer or your package manager) and start a new session. Until then, agents start without the skills they declare.";
const SPAWN_MESSAGE = "briefing did not check or brief this agent: no Python 3.8 or newer was found (python3, python, py -3). If the agent declares skills, it starts without them. Install Python 3.8+ and start a new session.";

// scripts/hook-commands' GONE, word for word (tests/js compares them): what every command-hook
// harness says, and does, when briefing's folder went away while the CLI ran.
const GONE_MESSAGE = "briefing cannot run: its folder {folder} is gone (updated or removed while this session ran), so every agent spawn is refused. Restart the session; if this goes on, reinstall briefing.";
// briefing.js alone (copied into a plugin folder without the hook package it runs).
const ALONE_MESSAGE = "briefing cannot run: the hook it runs, hooks/briefing-preload, is not beside briefing.js in {folder} (the file was installed without its folder), so every agent spawn is refused. Install the whole plugin folder (docs/opencode.md) and start a new session.";

// How long the guard's answer waits for its child's chat.message (which follows within
// milliseconds): a task call that failed before its child started leaves no stale answer behind.
const PENDING_MS = 60 * 1000;
// How long a hook run may take, the pre-flight's included (the hooks files give Claude Code's
// hooks 30 s), and an interpreter's version check; past it the process is killed and the run has
// failed. And the most a hook may print (a briefing is at most 256 KiB of skills, framed).
const HOOK_TIMEOUT_MS = 30 * 1000;
const CHECK_TIMEOUT_MS = 10 * 1000;
const OUTPUT_LIMIT = 16 * 1024 * 1024;

const VERSION_CHECK = "import sys; sys.exit(sys.version_info < (3, 8))";
const INTERPRETERS = [["python3"], ["python"], ["py", "-3"]];

// The hook beside this file: in a built plugin folder (hooks/ next to it) or in a checkout
// (opencode/ beside hooks/).
function findHook(here) {
  for (const candidate of [join(here, "hooks", "briefing-preload"), join(here, "..", "hooks", "briefing-preload")]) {
    if (existsSync(candidate)) return resolve(candidate);
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

// One process: {code, signal, stdout, stderr}, or {error} (it did not start), {timedOut} (killed
// after options.timeout ms) or {overflow} (killed past OUTPUT_LIMIT). It always settles.
function run(command, args, input, options) {
  return new Promise((settle) => {
    let child, timer, done = false, size = 0;
    const out = [], err = [];
    const text = (chunks) => Buffer.concat(chunks).toString("utf8");
    const finish = (result) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      settle({ code: null, stdout: "", stderr: text(err), ...result });
    };
    const stop = (result) => {
      try {
        child.kill("SIGKILL");
      } catch {}
      finish(result);
    };
    try {
      child = spawn(command, args, { cwd: options.cwd, env: options.env, stdio: ["pipe", "pipe", "pipe"] });
    } catch (error) {
      finish({ error });
      return;
    }
    timer = setTimeout(() => stop({ timedOut: true }), options.timeout);
    if (timer.unref) timer.unref();
    const collect = (chunks) => (chunk) => {
      size += chunk.length;
      if (size > OUTPUT_LIMIT) stop({ overflow: true });
      else chunks.push(chunk);
    };
    child.stdout.on("data", collect(out));
    child.stderr.on("data", collect(err));
    child.on("error", (error) => finish({ error }));
    child.on("close", (code, signal) => finish({ code, signal, stdout: text(out) }));
    child.stdin.on("error", () => {});
    child.stdin.end(input);
  });
}

// Record text shown to people and models: one line, no control characters, clipped.
function shown(text, limit = 300) {
  const line = String(text).replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, " ").trim();
  return line.length > limit ? line.slice(0, limit) + "…" : line;
}

// What a failed hook run answers, per event, naming briefing and the cause: a spawn is refused
// (the task call throws it), a session start says it, and a session's agent is flagged
// ``unchecked`` (chat.message tells a spawned child to abort with it).
function unanswered(payload, text) {
  const event = payload.hook_event_name;
  if (event === "PreToolUse") {
    return { systemMessage: text, hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: text } };
  }
  return event === "SubagentStart" ? { systemMessage: text, unchecked: text } : { systemMessage: text };
}

function failedRun(payload, cause) {
  const event = payload.hook_event_name;
  const hint = " If this goes on, run briefing-doctor.";
  if (event === "PreToolUse") return unanswered(payload, `briefing could not check this spawn, so it is refused: its hook ${cause}.${hint}`);
  if (event === "SubagentStart") {
    return unanswered(payload, `briefing could not check agent '${shown(payload.agent_type, 100)}': its hook ${cause}. If it declares skills, it starts without them.${hint}`);
  }
  return unanswered(payload, `briefing could not run its pre-flight: its hook ${cause}.${hint}`);
}

// Runs the hook with a payload; its answer as an object, or null (it had nothing to say). The
// interpreter is chosen as hooks/briefing-python chooses it, by whether it runs, never by what
// the hook answered: python3 (or the plugin's "python" option) first; where that did not run
// the hook, the first of python3, python and py -3 that passes the version check; none: the
// fallback's message. A run that could not happen, crashed, timed out or answered something
// that is not a JSON object is never "nothing to say": its answer names briefing and the cause,
// and refuses a spawn (unanswered); a hook that is gone answers as the hooks files' commands do.
function hookRunner({ hook, here, cwd, env, first, log, timeout }) {
  let chosen; // undefined: not yet known; null: no usable Python
  const limit = timeout || HOOK_TIMEOUT_MS;
  const fallback = (payload) => ({
    systemMessage: payload.hook_event_name === "SessionStart" ? START_MESSAGE : SPAWN_MESSAGE,
  });
  const gone = (payload) => unanswered(payload, GONE_MESSAGE.replace("{folder}", dirname(dirname(hook))));
  const runHook = (interpreter, input) =>
    run(interpreter[0], [...interpreter.slice(1), "-I", "-S", "-B", hook], input, { cwd, env, timeout: limit });
  async function usable() {
    for (const interpreter of INTERPRETERS) {
      const check = await run(interpreter[0], [...interpreter.slice(1), "-I", "-S", "-c", VERSION_CHECK], "",
        { cwd, env, timeout: Math.min(limit, CHECK_TIMEOUT_MS) });
      if (check.code === 0) return interpreter;
    }
    return null;
  }
  function answerOf(payload, result) {
    if (result.stderr.trim()) log("warn", shown(result.stderr, 2000));
    if (result.timedOut) return failedRun(payload, `did not answer within ${limit / 1000} s (it was stopped)`);
    if (result.overflow) return failedRun(payload, `printed more than ${OUTPUT_LIMIT} bytes (it was stopped)`);
    if (result.error) return failedRun(payload, `could not be started (${shown(result.error.code || result.error.message, 100)})`);
    if (result.code !== 0) {
      if (!existsSync(hook)) return gone(payload);
      const last = shown(result.stderr.trim().split("\n").pop() || "", 200);
      return failedRun(payload, (result.signal ? `was killed (${result.signal})` : `exited with status ${result.code}`) + (last ? ` (${last})` : ""));
    }
    const text = result.stdout.trim();
    if (!text) return null;
    let answer;
    try {
      answer = JSON.parse(text);
    } catch {}
    if (!answer || typeof answer !== "object" || Array.isArray(answer)) {
      return failedRun(payload, `answered something that is not a JSON object (${shown(text, 100)})`);
    }
    return answer;
  }
  return async function ask(payload) {
    if (!hook) return unanswered(payload, ALONE_MESSAGE.replace("{folder}", here));
    if (chosen === null) return existsSync(hook) ? fallback(payload) : gone(payload);
    const input = JSON.stringify(payload);
    if (chosen) return answerOf(payload, await runHook(chosen, input));
    const tried = first || INTERPRETERS[0];
    const result = await runHook(tried, input);
    if (result.code === 0) chosen = tried;
    if (result.code === 0 || result.timedOut || result.overflow) return answerOf(payload, result);
    if (!existsSync(hook)) return gone(payload);
    chosen = await usable();
    if (!chosen) return fallback(payload);
    if (chosen.join(" ") === tried.join(" ")) return answerOf(payload, result); // the hook itself failed: its status stands
    return answerOf(payload, await runHook(chosen, input));
  };
}

// The instruction a spawned child gets instead of a briefing when the hook could not run for it
// (a subtask's child, which cannot be refused at its task call): logged as the hook logs its own
// abort, so that the audit counts the child as refused.
function abortOf(agent, why) {
  return `<briefing agent="${shown(agent, 100).replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}" status="abort">\n` +
    `STOP. Do not attempt the task you were given. This agent may need skills that could not be loaded: ${why} ` +
    "Working without them is exactly what it must not do. Reply only with a short failure report: say that " +
    "briefing could not run for you, and why.\n</briefing>";
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
  const ask = hookRunner({ hook: findHook(here), here, cwd, env, first, log, timeout: options.timeout });
  const payload = (event, fields) => ({ hook_event_name: event, [cli + "_plugin"]: CONTRACT, cwd, ...fields });
  const report = (answer, level) => { if (answer && answer.systemMessage) log(level || "info", answer.systemMessage); };

  const sessions = new Map(); // session id -> { agent, context }: what the hook answered for it
  const pending = new Map(); // agent -> { answer, count, at }: what the guard answered, for the child
  const unguarded = new Map(); // agent -> count: children of subtasks, started without the guard
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
      // A spawned child: a guarded task call's (its answer kept, even a stale one) or a subtask's.
      const spawned = Boolean(kept) || Boolean(unguarded.get(agent));
      if (unguarded.get(agent)) unguarded.set(agent, unguarded.get(agent) - 1);
      if (kept && now() - kept.at <= PENDING_MS) {
        answer = kept.answer;
        if (--kept.count <= 0) pending.delete(agent);
      } else {
        pending.delete(agent);
        answer = await ask(payload("SubagentStart", { agent_type: agent, session_id: session }));
      }
      if (answer && answer.unchecked && spawned) {
        // The hook could not run for a child that cannot be refused any more: it is told to abort.
        sessions.set(session, { agent, context: abortOf(agent, answer.unchecked) });
        log("warn", `briefing: NOT briefed, told to abort: agent '${shown(agent, 100)}': ${answer.unchecked}`);
        return;
      }
      sessions.set(session, { agent, context: contextOf(answer) });
      if (answer && answer.unchecked) show(answer.systemMessage, "warning");
      report(answer, refusalOf(answer) || (answer && (answer.unchecked || /NOT briefed/.test(answer.systemMessage || ""))) ? "warn" : "info");
    },

    // The guard: the model's task call is refused here, with briefing's reason.
    "tool.execute.before": async (inp, out) => {
      if (inp.tool !== "task" || !out || !out.args) return;
      // A command with subtask: true (or an @agent mention) fails the whole turn on a throw
      // (measured): its child is resolved at its chat.message instead, abort instruction and all.
      // Its task call comes with a part id of its own, so the subtask part's agent and prompt,
      // in the same session, say which call it is.
      const key = subtaskKey(inp.sessionID, out.args.subagent_type, out.args.prompt);
      if (subtasks.delete(key)) {
        const agent = out.args.subagent_type;
        if (typeof agent === "string") unguarded.set(agent, (unguarded.get(agent) || 0) + 1);
        return;
      }
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
