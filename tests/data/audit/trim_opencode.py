"""Copy the records OpenCode or Kilo left in e2e machines into tests/data/audit/<cli>/, trimmed and scrubbed.

    python3 tests/data/audit/trim_opencode.py [--to FOLDER] CLI MACHINE_ROOT [MACHINE_ROOT ...]

Each MACHINE_ROOT is a kept tests/e2e/test_opencode.py folder (``pytest --basetemp=DIR``) holding
``home/`` and ``project/``. Their databases become one SQL text, ``<cli>.db.sql``: the rows of the
session, message and part tables only (the audit reads nothing else). The tables themselves are in
one file all the captures share, ``opencode-tables.sql`` (Kilo's are OpenCode's): written when it is
not there, and a CLI whose tables differ from it stops the script. tests/test_audit.py builds each
database from the two. Their logs become one ``log/opencode.log`` of the lines the audit reads (a
session created, a step of its loop, a model request, the plugin's lines). Each machine's root path becomes
``@ROOT@``; tool outputs and texts are cut short.
"""
import json
import os
import sqlite3
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TABLES = ("session", "message", "part")
SCHEMA = os.path.join(HERE, "opencode-tables.sql")
SCHEMA_HEAD = ("-- The tables of OpenCode's (and Kilo's) database that the audit reads, as trim_opencode.py found\n"
               "-- them; each capture's <cli>.db.sql holds their rows (tests/test_audit.py and\n"
               "-- bench/history.py run this first).\n")
LOG_NEEDLES = ("message=created id=", "message=loop ", "message=stream ", 'message="briefing')


def scrub(text, root):
    return text.replace(root, "@ROOT@")


def cut(value):
    """Tool outputs, texts and errors other than briefing's cut short (the audit reads none of them)."""
    if isinstance(value, dict):
        return dict((k, cut(v) if k not in ("output", "text", "error") or not isinstance(v, str) else
                     v if v.startswith("briefing:") else v[:40]) for k, v in value.items())
    if isinstance(value, list):
        return [cut(v) for v in value]
    return value


def shared_schema(statements):
    """Write the captures' one schema file, or check this CLI's tables are the ones it holds."""
    text = SCHEMA_HEAD + "\n".join(statements) + "\n"
    if os.path.exists(SCHEMA):
        with open(SCHEMA, encoding="utf-8") as handle:
            if handle.read() != text:
                sys.exit("%s: these tables differ from the ones the captures share; recapture them all "
                         "(remove the file first)" % SCHEMA)
        return
    with open(SCHEMA, "w", encoding="utf-8") as handle:
        handle.write(text)


def main(cli, roots, folder=None):
    out = os.path.join(HERE, folder or cli, "home", ".local", "share", cli)
    os.makedirs(os.path.join(out, "log"), exist_ok=True)
    sql, logs, schema = [], [], None
    for root in roots:
        root = os.path.abspath(root)
        data = os.path.join(root, "home", ".local", "share", cli)
        db = sqlite3.connect("file:%s?mode=ro" % os.path.join(data, "%s.db" % cli), uri=True)
        if schema is None:
            schema = [row[0] + ";" for row in db.execute(
                "SELECT sql FROM sqlite_master WHERE type = 'table' AND name IN (%s)" % ",".join(
                    "'%s'" % t for t in TABLES))]
        for table in TABLES:
            cursor = db.execute("SELECT * FROM %s ORDER BY time_created" % table)
            names = [d[0] for d in cursor.description]
            for row in cursor:
                values = []
                for name, value in zip(names, row):
                    if name == "data" and isinstance(value, str):
                        value = json.dumps(cut(json.loads(value)), separators=(",", ":"), ensure_ascii=False)
                    values.append(value)
                sql.append("INSERT INTO %s (%s) VALUES (%s);" % (table, ", ".join(names), ", ".join(
                    "NULL" if v is None else str(v) if isinstance(v, (int, float)) else
                    "'%s'" % scrub(v, root).replace("'", "''") for v in values)))
        db.close()
        for name in sorted(os.listdir(os.path.join(data, "log"))):
            if name.endswith(".log"):
                with open(os.path.join(data, "log", name), encoding="utf-8") as handle:
                    logs += [scrub(line, root) for line in handle if line.startswith("timestamp=")
                             and any(n in line for n in LOG_NEEDLES)]
    shared_schema(schema)
    with open(os.path.join(out, "%s.db.sql" % cli), "w", encoding="utf-8") as handle:
        handle.write("\n".join(sql) + "\n")
    with open(os.path.join(out, "log", "opencode.log"), "w", encoding="utf-8") as handle:
        handle.write("".join(logs))


if __name__ == "__main__":
    if sys.argv[1] == "--to":  # into tests/data/audit/FOLDER/ rather than CLI/
        main(sys.argv[3], sys.argv[4:], sys.argv[2])
    else:
        main(sys.argv[1], sys.argv[2:])
