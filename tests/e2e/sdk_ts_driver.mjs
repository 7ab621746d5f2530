// The TypeScript setup of docs/agent-sdk.md, as plain JavaScript, run with the real
// @anthropic-ai/claude-agent-sdk: node sdk_ts_driver.mjs SPEC.json OUT.json
// SPEC: {prompt, cwd, env, pluginPath, claudeBin, sdk (the SDK's sdk.mjs), agents, briefing}.
// OUT: every message. The SDK is imported by its path (a user writes
// `import { query } from "@anthropic-ai/claude-agent-sdk"`), so the driver runs from anywhere.
import { readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

const spec = JSON.parse(readFileSync(process.argv[2], "utf-8"));
const { query } = await import(pathToFileURL(spec.sdk).href);
const { agents, briefing, pluginPath } = spec;

// --- as in docs/agent-sdk.md "TypeScript" ---
const contract = { version: 1, agents: {} };
for (const [name, definition] of Object.entries(agents)) {
  contract.agents[name] = { defined: true, skills: definition.skills ?? [],
                            ...(briefing[name] ? { briefing: briefing[name] } : {}) };
}
const options = {
  agents,
  plugins: [{ type: "local", path: pluginPath }],
  env: { ...process.env, ...spec.env, BRIEFING_SDK_AGENTS: JSON.stringify(contract) },
  // --- for the test: the loopback project and the Claude Code the Python SDK carries ---
  cwd: spec.cwd, includeHookEvents: true, pathToClaudeCodeExecutable: spec.claudeBin,
};
const messages = [];
for await (const message of query({ prompt: spec.prompt, options })) messages.push(message);
writeFileSync(process.argv[3], JSON.stringify({ messages }));
