"""``briefing-doctor --audit``: the audit as text or JSON (docs/doctor.md "Audit"), and its exit code."""
import os

from . import FAILING, VERDICTS, audit


def doctor_audit(machine, harnesses, since_days, session, agent, as_json, out, skipped=()):
    """0 when every run that declared skills was briefed or refused, 1 when one was not-briefed or
    lost its briefing after a compaction. ``skipped``: the harnesses the default list left out."""
    import json
    from ..harnesses import HARNESSES
    rows, summary, log = audit(machine, harnesses, since_days, session, agent)
    failed = any(row["verdict"] in FAILING for row in rows)
    empty = None if rows else empty_answer(machine, harnesses, since_days, session, agent)
    if as_json:
        data = {"version": 1, "since_days": since_days, "audit": rows, "summary": summary,
                "skipped": log.problems, "skipped_harnesses": list(skipped)}
        if empty is not None:
            data["empty"] = empty
        out.write(json.dumps(data, indent=2) + "\n")
    else:
        print_text(rows, summary, log, out, since_days, [HARNESSES.record(h).label for h in harnesses])
        if empty is not None:
            print_empty(empty, skipped, out)
    return 1 if failed else 0


# Where each reader looks for this project's records (its sessions()), named in an empty answer.
def _claude_places(machine):
    from ..harnesses.claude import claude_slug
    return [(os.path.join(machine.claude_dir, "projects", claude_slug(machine.project("claude").folder)), "")]


def _qwen_places(machine):
    from ..harnesses import qwen_dir
    from .qwen import qwen_slug
    return [(os.path.join(qwen_dir(machine), "projects", qwen_slug(machine.project("qwen").folder), "chats"), "")]


def _gemini_places(machine):
    from .gemini import chats_dir
    folder = chats_dir(machine)
    return [(folder, "")] if folder else [(os.path.join(machine.gemini_dir, "projects.json"), "names no folder for it")]


def _database(key):
    def places(machine):
        from .opencode import DATABASE, data_dir
        return [(os.path.join(data_dir(machine, key), DATABASE[key]), "sessions of this project")]
    return places


RECORD_PLACES = {
    "claude": _claude_places,
    "codex": lambda machine: [(os.path.join(machine.codex_home, "sessions"), "rollouts started in the project")],
    "copilot": lambda machine: [(os.path.join(machine.copilot_home, "session-state"),
                                 "sessions whose workspace.yaml cwd is in the project")],
    "gemini": _gemini_places, "qwen": _qwen_places, "opencode": _database("opencode"), "kilo": _database("kilo"),
    "droid": lambda machine: [(_droid_sessions(machine), "transcripts of this project")],
}


def _droid_sessions(machine):
    from .droid import sessions_dir
    return sessions_dir(machine)

EMPTY_SEEN = 20  # agents and sessions named at most when a filter matched nothing


def empty_answer(machine, harnesses, since_days, session, agent):
    """Why an audit found no run (issue 44): per harness, where it read and how many sessions it
    found there; when --session or --agent matched nothing, the sessions and agents it did see."""
    import time
    from . import reader
    since = time.time() - since_days * 86400.0
    read = []
    for key in harnesses:
        module, places = reader(key), RECORD_PLACES.get(key)
        try:
            count = len(module.sessions(machine, since)) if module else None
        except Exception:
            count = None  # the audit itself reported why
        where = places(machine) if places else []
        read.append({"harness": key, "places": [{"path": p, "what": what, "exists": os.path.exists(p)}
                                                for p, what in where], "sessions": count})
    seen = None
    if session is not None or agent is not None:
        rows, _, _ = audit(machine, harnesses, since_days)
        from ..near import near
        agents = sorted(set(r["agent"] for r in rows if r["agent"]))
        sessions = sorted(set(r["session"] for r in rows if r["session"]))
        seen = {"agents": agents[:EMPTY_SEEN], "sessions": sessions[:EMPTY_SEEN],
                "more_agents": max(0, len(agents) - EMPTY_SEEN), "more_sessions": max(0, len(sessions) - EMPTY_SEEN),
                "near_agents": near(agent, agents) if agent is not None else []}
    return {"read": read, "seen": seen, "session": session, "agent": agent}


def print_empty(empty, skipped, out):
    from ..harnesses import HARNESSES
    from ..files import display_path
    from ..near import did_you_mean
    from ..text import for_people

    def say(text):
        out.write(for_people(text) + "\n")

    say("no agent run found; the audit read:")
    for entry in empty["read"]:
        count = "-" if entry["sessions"] is None else "%d session(s)" % entry["sessions"]
        places = ", ".join("%s (%s)" % (display_path(p["path"]), ", ".join(filter(None, [
            p["what"], "" if p["exists"] else "absent"]))) if p["what"] or not p["exists"] else display_path(p["path"])
            for p in entry["places"])
        say("  %-11s %s: %s" % (HARNESSES.record(entry["harness"]).label, count, places or "-"))
    for entry in skipped:
        say("  %-11s not read: %s" % (HARNESSES.record(entry["harness"]).label, entry["why"]))
    seen = empty["seen"]
    if seen is None:
        return
    if empty["session"] is not None:
        say("--session %s matched none; sessions seen: %s%s" % (empty["session"], ", ".join(
            s[:8] for s in seen["sessions"]) or "none", " and %d more" % seen["more_sessions"]
            if seen["more_sessions"] else ""))
    if empty["agent"] is not None:
        mean = did_you_mean(seen["near_agents"])
        say("--agent %s matched none; agents seen: %s%s%s" % (empty["agent"], ", ".join(seen["agents"]) or "none",
                                                            " and %d more" % seen["more_agents"]
                                                            if seen["more_agents"] else "",
                                                            " (%s)" % mean if mean else ""))


def kilobytes(item):
    """An item's size as the text report shows it: an inferred delivery's has none."""
    if isinstance(item.get("bytes"), int):
        return "%.1f kB" % (item["bytes"] / 1000.0)
    return "(inferred)" if item.get("inferred") else "(size not recorded)"


def print_text(rows, summary, log, out, since_days, labels):
    from ..text import clip, for_people

    def say(text):
        out.write(for_people(text) + "\n")

    say("briefing-doctor --audit: %d agent run(s) in the last %g day(s) (%s)" % (
        len(rows), since_days, ", ".join(labels)))
    for row in rows:
        who = "%s%s" % (row["agent"] or "(unnamed)", " #%s" % row["agent_id"][-12:] if row["agent_id"] else "")
        if row["kind"] != "subagent":
            who += " (%s)" % row["kind"]
        say("%-20s %-8s %-10s %-22s %s" % ((row["time"] or "-")[:19].replace("T", " "), row["harness"],
                                            (row["session"] or "-")[:8], row["verdict"], who))
        if row["declared"]:
            marked = "as declared now" if all(d["from"] == "now" for d in row["declared"]) else "from the record"
            say("    declared (%s): %s" % (marked, ", ".join(
                ("file " if d["kind"] == "file" else "") + d["name"] for d in row["declared"])))
        if row["delivered"]:
            say("    delivered in %d part(s): %s" % (row["parts"], ", ".join(
                "%s%s %s" % ("file " if i["kind"] == "file" else "", i["name"], kilobytes(i))
                for i in row["delivered"])))
        if row["native"]:
            say("    preloaded by the harness: %s" % ", ".join(row["native"]))
        if row["refused"]:
            say("    refused: %s" % clip(row["refused"], 300))
        if row["compactions"]:
            say("    compacted %d time(s), briefed again %d time(s)%s" % (
                row["compactions"], row["redelivered"],
                " (by %s)" % ", ".join(row["redelivered_by"]) if row["redelivered_by"] else ""))
        for again in row.get("loaded_again") or ():
            say("    loaded skills given back after a compaction (%s): %s%s" % (
                again["event"], ", ".join("%s %.1f kB" % (i["name"], i["bytes"] / 1000.0) for i in again["skills"]),
                "; left out for lack of room: %s" % ", ".join(again["left_out"]) if again["left_out"] else ""))
        if row["cause"]:
            say("    likely cause: %s" % row["cause"])
        for note in row["notes"]:
            say("    note: %s" % note)
    for problem in log.problems:
        say("skipped: %s%s%s" % (problem["harness"] + " " if problem["harness"] else "",
                                 problem["file"] + ": " if problem["file"] else "", problem["problem"]))
    say("summary: %s" % ", ".join("%d %s" % (summary[v], v) for v in VERDICTS))
