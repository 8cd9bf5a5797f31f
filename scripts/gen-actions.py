#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Writes what the fault actions' registry decides, from the registry itself.

Usage: gen-actions.py [--check] DUMP_ACTIONS SOURCE_DIR

DUMP_ACTIONS is the program that prints the registry (scenario/actions.c,
one row per action, with its parameter descriptors) as JSON. From it, and
from each action's page title (docs/faults/PAGE.md, "# `name`: what it
does"), this writes three places of SOURCE_DIR:
- scenarios/faultlun-scenario.schema.json: $defs.action, the object a
  rule's "action" is (every action's key, value shape, range, default and
  description, and the modifiers);
- docs/scenario-format.md: the table of actions between the lines
  "<!-- actions: -->" and "<!-- end of actions -->";
- tests/fuzz/scenario.dict: the words of the actions (keys and choices),
  after the line "# actions:", for fuzz_scenario.
A new action (its file under scenario/actions/, its registry line, its page)
needs nothing else by hand: run this, or `cmake --build BUILD --target
regen-actions`. With --check nothing is written: exit 1 naming each place
that differs from what would be written (the test schema.actions_generated).
"""
import json
import os
import re
import subprocess
import sys

SCHEMA = "scenarios/faultlun-scenario.schema.json"
DOCS = "docs/scenario-format.md"
DICT = "tests/fuzz/scenario.dict"
DOCS_BEGIN = "<!-- actions: written by scripts/gen-actions.py from the registry -->"
DOCS_END = "<!-- end of actions -->"
DICT_BEGIN = "# actions: written by scripts/gen-actions.py from the registry"

# The value shapes of parameter types the schema describes once, in $defs.
REFS = {"delay": "delay", "sense": "sense", "ascq": "ascq", "size": "size",
        "group": "group_ref"}


def number(x):
    """x as a JSON integer when it is whole."""
    return int(x) if float(x).is_integer() else x


def value_schema(p):
    """The JSON Schema of one parameter's value (no description)."""
    t = p["type"]
    if t == "true":
        return {"const": True}
    if t == "bool":
        return {"type": "boolean"}
    if t == "choice":
        return {"enum": list(p["choices"])}
    if t == "ms":
        return {"type": "number", "minimum": number(p["min"]), "maximum": number(p["max"])}
    if t == "uint":  # the loader takes "0x.." and decimal strings too (lint checks their range)
        return {"oneOf": [{"type": "integer", "minimum": number(p["min"]),
                           "maximum": number(p["max"])},
                          {"type": "string", "pattern": "^(0[xX][0-9a-fA-F]+|[0-9]+)$"}]}
    if t == "state":
        return {"type": "string"}
    return {"$ref": "#/$defs/%s" % REFS[t]}


def describe(p, required):
    """A parameter's doc line, with its default when it may be left out."""
    doc = p["doc"]
    if not required and p["default"] is not None:
        doc += " (default: %s)" % p["default"]
    return doc


def described(p, required):
    return dict({"description": describe(p, required)}, **value_schema(p))


def page_title(src, row):
    """What the action does: its page's title after the name."""
    path = os.path.join(src, "docs/faults", row["doc"] + ".md")
    with open(path) as f:
        first = f.readline().strip()
    m = re.match(r"^# `[^`]+`: (.+)$", first)
    if not m:
        sys.exit("%s: the first line is not \"# `NAME`: what it does\"" % path)
    return m.group(1)


def shape(row):
    """The action's own key: (its scalar parameter or None, [alternatives]).

    Parameters "NAME/SUB" make an object; those sharing a nonzero oneof are
    alternatives, so each alternative object holds one of them (required)
    beside the parameters no group holds (required without a default). An
    alternative is a list of (leaf key, parameter, required), in the order
    both the schema and the docs write them.
    """
    name = row["name"]
    scalar = next((p for p in row["params"] if p["key"] == name), None)
    subs = [p for p in row["params"] if p["key"].startswith(name + "/")]
    if not subs:
        return scalar, []
    common = [p for p in subs if not p["oneof"]]
    members = sorted((p for p in subs if p["oneof"]), key=lambda p: p["oneof"]) or [None]
    return scalar, [[(p["key"].split("/", 1)[1], p, p is m or p["default"] is None)
                     for p in ([m] if m else []) + common] for m in members]


def alt_schema(alt):
    """The JSON Schema object of one alternative of shape()."""
    return {"type": "object", "additionalProperties": False,
            "required": [leaf for leaf, _, need in alt if need],
            "properties": {leaf: described(p, need) for leaf, p, need in alt}}


def modifiers(rows):
    """Each modifier key once: (its parameter, [the actions it goes with])."""
    mods = {}
    for row in rows:
        for p in row["params"]:
            if p["key"] in row["keys"]:
                mods.setdefault(p["key"], (p, []))[1].append(row["name"])
    return mods


def action_key_schema(row, title):
    scalar, shapes = shape(row)
    objects = [alt_schema(a) for a in shapes]
    page = " (docs/faults/%s.md)" % row["doc"]
    if scalar and not objects:
        return dict({"description": "%s: %s%s" % (title, scalar["doc"], page)},
                    **value_schema(scalar))
    alts = ([described(scalar, True)] if scalar else []) + objects
    if len(alts) == 1:
        return dict({"description": title + page}, **alts[0])
    return {"description": title + page, "oneOf": alts}


def schema_action(rows, titles):
    """$defs.action: every action's key, then each modifier once."""
    props = {}
    for row in rows:
        props[row["name"]] = action_key_schema(row, titles[row["name"]])
    for key, (p, owners) in modifiers(rows).items():
        s = described(p, False)
        s["description"] += " (with %s)" % ", ".join(owners)
        props[key] = s
    return {"type": "object", "additionalProperties": False, "minProperties": 1,
            "properties": props}


def new_schema(text, action):
    """The schema's text with $defs.action replaced (the rest kept byte for byte)."""
    begin = text.find('\n    "action": {\n')
    if begin < 0:
        sys.exit("%s: no $defs entry \"action\"" % SCHEMA)
    end = text.find("\n    }", begin + 1)
    body = json.dumps(action, indent=2, ensure_ascii=False).replace("\n", "\n    ")
    return text[:begin] + '\n    "action": ' + body + text[end + len("\n    }"):]


def form(p):
    """How the docs table writes a parameter's value, or None when its doc line says it."""
    t, lo, hi = p["type"], number(p["min"]), number(p["max"])
    unit = " " + p["unit"] if p["unit"] else ""
    return {"choice": ", ".join('`"%s"`' % c for c in p.get("choices") or []),
            "uint": "N (%s to %s%s)" % (lo, hi, unit), "ms": "MS (%s to %s ms)" % (lo, hi),
            "delay": "MS (%s to %s ms) or a distribution" % (lo, hi)}.get(t)


def cell(p, required):
    f = form(p)
    doc = describe(p, required)
    return "%s: %s" % (f, doc) if f else doc


def value_words(row):
    """How the docs table writes an action's value: each alternative, with its parameters."""
    scalar, alts = shape(row)
    words = [cell(scalar, True)] if scalar else []
    for alt in alts:
        words.append("an object: " + "; ".join(
            "`%s`%s: %s" % (leaf, "" if need else " (optional)", cell(p, need))
            for leaf, p, need in alt))
    return " **or** ".join(words)


def docs_table(rows, titles):
    """The list of actions (a list, not a table: it stays readable in the man page)."""
    lines = []
    for row in rows:
        what = titles[row["name"]]
        more = []
        if row["keys"]:
            more.append("modifiers " + ", ".join("`%s`" % k for k in row["keys"]))
        if row["with_delay"]:
            more.append("with `delay_ms`, after the delay")
        if row["joins"]:
            more.append("may come with another action")
        lines.append("- `%s`: %s ([%s](faults/%s.md)). Value: %s.%s"
                     % (row["name"], what, row["doc"], row["doc"], value_words(row),
                        " " + "; ".join(more).capitalize() + "." if more else ""))
    lines += ["", "Modifiers, beside the action they go with:"]
    for key, (p, owners) in modifiers(rows).items():
        lines.append("- `%s` (with %s): %s." % (key, ", ".join("`%s`" % o for o in owners),
                                                 cell(p, False)))
    return "\n".join(lines)


def new_docs(text, table):
    b, e = text.find(DOCS_BEGIN), text.find(DOCS_END)
    if b < 0 or e < b:
        sys.exit("%s: the lines %s and %s are missing" % (DOCS, DOCS_BEGIN, DOCS_END))
    return text[:b] + DOCS_BEGIN + "\n" + table + "\n" + text[e:]


def dict_words(rows):
    """Every key and choice the actions have, in registry order, once."""
    words = []
    for row in rows:
        for p in row["params"]:
            words += p["key"].split("/")
            words += p.get("choices") or []
    return list(dict.fromkeys(words))


def new_dict(text, words):
    """The dictionary: its hand-written words (less the actions'), then the actions' block."""
    hand = text.split("\n" + DICT_BEGIN, 1)[0].rstrip("\n").split("\n")
    keep = [ln for ln in hand
            if not (re.match(r'^k_(\w+)="', ln) and re.match(r'^k_(\w+)=', ln).group(1) in words)]
    block = [DICT_BEGIN] + ['k_%s="\\"%s\\""' % (w, w) for w in words]
    return "\n".join(keep + block) + "\n"


def main():
    args = sys.argv[1:]
    check = bool(args) and args[0] == "--check"
    if check:
        args = args[1:]
    if len(args) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    dump, src = args
    rows = json.loads(subprocess.run([dump], check=True, capture_output=True,
                                     text=True).stdout)["actions"]
    titles = {row["name"]: page_title(src, row) for row in rows}
    makers = {SCHEMA: lambda t: new_schema(t, schema_action(rows, titles)),
              DOCS: lambda t: new_docs(t, docs_table(rows, titles)),
              DICT: lambda t: new_dict(t, dict_words(rows))}
    stale = []
    for rel, make in makers.items():
        path = os.path.join(src, rel)
        with open(path, encoding="utf-8") as f:
            old = f.read()
        new = make(old)
        if new == old:
            continue
        stale.append(rel)
        if not check:
            with open(path, "w", encoding="utf-8") as f:
                f.write(new)
    for rel in stale:
        print("%s: %s" % (rel, "differs from the registry (run scripts/gen-actions.py, or "
                               "cmake --build BUILD --target regen-actions)" if check
                          else "written"))
    return 1 if check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
