"""``briefing-doctor --audit``: the audit as text or JSON (docs/doctor.md "Audit"), and its exit code."""
from . import FAILING, VERDICTS, audit


def doctor_audit(machine, harnesses, since_days, session, agent, as_json, out):
    """0 when every run that declared skills was briefed or refused, 1 when one was not-briefed or
    lost its briefing after a compaction."""
    import json
    from ..harnesses import HARNESSES
    rows, summary, log = audit(machine, harnesses, since_days, session, agent)
    failed = any(row["verdict"] in FAILING for row in rows)
    if as_json:
        out.write(json.dumps({"version": 1, "since_days": since_days, "audit": rows, "summary": summary,
                              "skipped": log.problems}, indent=2) + "\n")
    else:
        print_text(rows, summary, log, out, since_days, [HARNESSES.record(h).label for h in harnesses])
    return 1 if failed else 0


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
