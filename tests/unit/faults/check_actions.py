#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The table of fault actions, the JSON Schema and docs/faults/ name the same
actions and keys.

Usage: check_actions.py DUMP_ACTIONS SCHEMA DOCS_FAULTS_DIR

DUMP_ACTIONS prints the table (scenario/actions.c) as JSON. Checked:
- the schema's action object ($defs.action.properties) has exactly the
  table's action names and modifier keys;
- each row's page docs/faults/DOC.md exists, and the keys its "## Syntax"
  section writes as JSON keys ("key": ..., outside a value's own {...}) are
  exactly the row's name and its modifiers;
- every page of docs/faults/ is a row's page, except the pages of scenario
  sections that are not actions (tmf, transport).
Exit 0 when all three agree, 1 with one line per disagreement.
"""
import json
import os
import re
import subprocess
import sys

NOT_ACTIONS = {"tmf", "transport"}


def syntax_section(text):
    """The text of the "## Syntax" section of a page, or None."""
    m = re.search(r"^## Syntax\s*$(.*?)(?=^## |\Z)", text, re.M | re.S)
    return m.group(1) if m else None


def strip_braces(s):
    """s without the contents of {...} (a value's own keys), nesting included."""
    out, depth = [], 0
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth = max(0, depth - 1)
        elif depth == 0:
            out.append(ch)
    return "".join(out)


def syntax_keys(section):
    """JSON keys written at the top level of the section's code spans and blocks."""
    spans = re.findall(r"```.*?```|`[^`]*`", section, re.S)
    keys = set()
    for span in spans:
        keys |= set(re.findall(r'"([A-Za-z_][A-Za-z0-9_]*)"\s*:', strip_braces(span)))
    return keys


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    dump, schema_path, docs = sys.argv[1:]
    table = json.loads(subprocess.run([dump], check=True, capture_output=True,
                                      text=True).stdout)["actions"]
    with open(schema_path) as f:
        schema = json.load(f)
    problems = []

    table_keys = set()
    for row in table:
        table_keys.add(row["name"])
        table_keys |= set(row["keys"])
    schema_keys = set(schema["$defs"]["action"]["properties"])
    for k in sorted(table_keys - schema_keys):
        problems.append("%s: the action key \"%s\" of the table is missing from "
                        "$defs.action.properties" % (schema_path, k))
    for k in sorted(schema_keys - table_keys):
        problems.append("%s: $defs.action.properties has \"%s\", which no row of the "
                        "table names (scenario/actions.c)" % (schema_path, k))

    pages = {os.path.splitext(p)[0] for p in os.listdir(docs) if p.endswith(".md")}
    for row in table:
        page = os.path.join(docs, row["doc"] + ".md")
        if row["doc"] not in pages:
            problems.append("%s: missing: the page of action \"%s\"" % (page, row["name"]))
            continue
        with open(page) as f:
            section = syntax_section(f.read())
        if section is None:
            problems.append("%s: no \"## Syntax\" section" % page)
            continue
        want = {row["name"]} | set(row["keys"])
        got = syntax_keys(section)
        for k in sorted(want - got):
            problems.append("%s: ## Syntax does not show \"%s\": (action \"%s\" in the table)"
                            % (page, k, row["name"]))
        for k in sorted(got - want):
            problems.append("%s: ## Syntax shows \"%s\":, which the table's row \"%s\" does "
                            "not have" % (page, k, row["name"]))
    for p in sorted(pages - {row["doc"] for row in table} - NOT_ACTIONS):
        problems.append("%s: a page of docs/faults/ that no action of the table names"
                        % os.path.join(docs, p + ".md"))

    for line in problems:
        print(line)
    if not problems:
        print("%d actions, %d keys: table, schema and docs/faults agree"
              % (len(table), len(table_keys)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
