#!/usr/bin/env python3
"""Record what a real YAML parser reads in each case of tests/yaml_cases.json (issue 19, defect 7).

Run by hand, never by the suite: the test dependencies stay pytest and tomli.

    python3 -m venv /tmp/yamlvenv && /tmp/yamlvenv/bin/pip install pyyaml
    /tmp/yamlvenv/bin/python tests/record_yaml_cases.py

It rewrites the "yaml" field of every case with what ``yaml.safe_load`` makes
of the frontmatter: the top-level ``name``, ``skills`` and ``briefing`` keys
(values that JSON cannot hold are written as {"float": ...} or {"date": ...}),
{"error": ...} when the parser refuses the text, {"document": ...} when it is
not a mapping. tests/test_yaml_subset.py holds briefing's subset to it.
"""
import datetime
import json
import os

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "yaml_cases.json")


def encode(value):
    if isinstance(value, (datetime.date, datetime.datetime)):
        return {"date": value.isoformat()}
    if isinstance(value, float):
        return {"float": repr(value)}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    return value


def meaning(text):
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return {"error": str(exc).split("\n")[0]}
    if not isinstance(doc, dict):
        return {"document": encode(doc)}
    return {k: encode(doc[k]) for k in ("name", "skills", "briefing") if k in doc}


def main():
    with open(DATA, encoding="utf-8") as f:
        data = json.load(f)
    for case in data["cases"]:
        case["yaml"] = meaning(case["frontmatter"])
    data["recorded"] = "PyYAML %s, yaml.safe_load of each frontmatter, by tests/record_yaml_cases.py" % (
        yaml.__version__)
    with open(DATA, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main()
