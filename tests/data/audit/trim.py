"""Copy the records a real CLI left in an e2e machine into tests/data/audit/<harness>/, trimmed and scrubbed.

    python3 tests/data/audit/trim.py HARNESS MACHINE_ROOT [FOLDER]

MACHINE_ROOT is a kept e2e test folder (``pytest --basetemp=DIR -o tmp_path_retention_policy=all
tests/e2e/test_audit.py``) holding ``home/`` and ``project/``. The machine's root path becomes
``@ROOT@`` (into tests/data/audit/FOLDER/, by default HARNESS/; Claude Code's project folder name ``@SLUG@``), which tests/test_audit.py puts back
for its sandbox; lines the audit never reads and that only make the files large (request blobs,
system prompts, usage records) are dropped. Skill bodies stay: they are the e2e suite's
synthetic skills, and the tests check that none of their text reaches the audit's output.
"""
import json
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

DROP = {
    "claude": lambda d: d.get("type") in ("api-request-blob", "api-request", "api-request-shape", "queue-operation",
                                          "cost-state", "atis-latch", "tools-used", "last-prompt")
    or (d.get("type") == "attachment" and (d.get("attachment") or {}).get("type") in (
        "prompt_snapshot", "skill_listing", "environment", "deferred_tools_delta", "agent_listing_delta",
        "session_context", "model", "remote_session_change", "date")),
    # Qwen Code: the chats' other system lines (telemetry, snapshots) but the summariser's answers
    # and the compactions themselves (chat_compression: loaded skills given back, audit/qwen.py)
    "qwen": lambda d: d.get("type") == "system" and d.get("subtype") != "chat_compression" and not (
        d.get("subtype") == "ui_telemetry" and "<state_snapshot>" in json.dumps(d)),
    "codex": lambda d: d.get("type") in ("world_state", "turn_context", "token_usage_record")
    or (d.get("type") == "event_msg" and (d.get("payload") or {}).get("type") in (
        "token_count", "thread_settings_applied")),
    "copilot": lambda d: d.get("type") in ("session.usage_record", "system.message", "assistant.message_delta",
                                           "assistant.streaming_delta"),
    "gemini": lambda d: "$set" in d and "messages" in d["$set"],
    # Factory Droid: the model's turns and tool results, but a Task call, an error result and a hook's
    # run; a user's text (Droid's reminders, a prompt, a sub-droid's Task prompt: their places in
    # the history are what the audit counts) stays.
    "droid": lambda d: d.get("type") == "message" and not (d.get("message") or {}).get("hookEventName") and not any(
        isinstance(b, dict) and ((b.get("type") == "tool_use" and b.get("name") == "Task")
                                 or (b.get("type") == "tool_result" and b.get("is_error"))
                                 or (b.get("type") == "text" and (d.get("message") or {}).get("role") == "user"))
        for b in (d.get("message") or {}).get("content") or ()),
}

KEEP = {
    "claude": (".claude/projects",),
    "qwen": (".qwen/projects", ".qwen/extensions/briefing/hooks/hooks.json",
             ".qwen/extensions/briefing/qwen-extension.json"),
    "codex": (".codex/sessions", ".codex/config.toml"),
    "copilot": (".copilot/session-state", ".copilot/config.json"),
    "gemini": (".gemini/tmp", ".gemini/projects.json"),
    "droid": (".factory/sessions",),
}


def scrub(text, root, slug):
    """The machine's paths as tokens; the e2e run's other folders (its marketplace, its template
    home) as a folder that is nowhere."""
    return text.replace(slug, "@SLUG@").replace(root, "@ROOT@").replace(os.path.dirname(root), "/elsewhere")


def trim_line(harness, line):
    try:
        data = json.loads(line)
    except ValueError:
        return line
    if DROP[harness](data):
        return None
    if harness == "codex" and data.get("type") == "session_meta":
        data["payload"].pop("base_instructions", None)
        return json.dumps(data, separators=(",", ":"))
    return line


def main(harness, root, folder=None):
    root = os.path.abspath(root)
    slug = "".join(c if c.isascii() and c.isalnum() else "-" for c in os.path.join(root, "project"))
    if harness == "droid":  # Droid names a project's folder of sessions with "/" as "-" alone
        slug = os.path.join(root, "project").replace("/", "-")
    out = os.path.join(HERE, folder or harness)
    shutil.rmtree(out, ignore_errors=True)
    home = os.path.join(root, "home")
    for folder, dirs, files in os.walk(home):
        for name in files:
            path = os.path.join(folder, name)
            rel = os.path.relpath(path, home)
            if not any(rel == k or rel.startswith(k + "/") for k in KEEP[harness]):
                continue
            if name.endswith((".db", ".lock", ".md", ".log")) or "/logs/" in rel or "rewind" in rel:
                continue
            if harness == "droid" and not name.endswith(".jsonl"):
                continue  # its .settings.json files: the audit reads the transcripts alone
            target = os.path.join(out, "home", scrub(rel, root, slug))
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(path, encoding="utf-8") as handle:
                text = handle.read()
            if name.endswith(".jsonl"):
                lines = [trim_line(harness, l) for l in text.splitlines()]
                text = "".join(l + "\n" for l in lines if l is not None)
            text = scrub(text, root, slug)
            if harness == "droid":  # the installed copy lives in the e2e suite's template HOME
                text = re.sub(r"/[^\"\s]*?/briefing-droid-template-[^/\"\s]+", "/elsewhere/template", text)
            with open(target, "w", encoding="utf-8") as handle:
                handle.write(text)


if __name__ == "__main__":
    main(*sys.argv[1:4])
