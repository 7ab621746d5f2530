"""Runs one Claude Agent SDK query, as an SDK user's program would (run by the SDK venv's Python).

    python sdk_driver.py SPEC.json OUT.json

SPEC: {"prompt", "cwd", "env", "plugins": [paths], "agents": {name: AgentDefinition fields},
"setting_sources", "extra_args", "include_hook_events", "with_briefing": null or the ``briefing``
mapping (then ``briefing_sdk.with_briefing`` adds the plugin and the contract, and ``plugins`` is
left empty)}. OUT: every message as {"class", "data"}, plus "options_env" (the env the SDK got).
"""
import asyncio
import dataclasses
import json
import sys


def as_data(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: as_data(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): as_data(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [as_data(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)


async def main(spec_path, out_path):
    from claude_agent_sdk import AgentDefinition, ClaudeAgentOptions, query
    with open(spec_path, encoding="utf-8") as handle:
        spec = json.load(handle)
    agents = {name: AgentDefinition(**fields) for name, fields in (spec.get("agents") or {}).items()}
    options = ClaudeAgentOptions(
        cwd=spec["cwd"], env=spec.get("env") or {}, agents=agents or None,
        plugins=[{"type": "local", "path": p} for p in spec.get("plugins") or ()],
        setting_sources=spec.get("setting_sources"), extra_args=spec.get("extra_args") or {},
        include_hook_events=bool(spec.get("include_hook_events")),
        stderr=lambda line: sys.stderr.write(line + "\n"))
    if "with_briefing" in spec:
        from briefing_sdk import with_briefing
        options = with_briefing(options, spec["with_briefing"])
    messages = []
    async for message in query(prompt=spec["prompt"], options=options):
        messages.append(message)
    from briefing_sdk import briefing_messages
    out = {"messages": [{"class": type(m).__name__, "data": as_data(m)} for m in messages],
           "options_env": dict(options.env), "plugins": as_data(options.plugins),
           "briefing_messages": [as_data(b) for b in briefing_messages(messages)]}
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(out, handle, indent=1)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
