#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The registry of fault actions is the only list of actions in the product.

Usage: check_verbs.py DUMP_ACTIONS SOURCE_DIR

DUMP_ACTIONS prints the registry (scenario/actions.c) as JSON. In every
product source file (*.c, *.h under cli, common, faults, handlers, scenario,
target, vm) outside scenario/actions/ and scenario/actions.c, this fails on:
- a string comparison (strcmp, strncmp, strcasecmp) with a literal that is an
  action's scenario name or trace name ("hold", "drop_response", ...);
- a comparison or case on an action verb (== VERB_X, != VERB_X, case VERB_X).
ALLOWED lists the places where the same word means something else, or a
comparison not yet moved into an action file, each with why. Also: the fuzz
dictionary tests/fuzz/scenario.dict holds every action's name and modifier
as a JSON key token.
Exit 0 when clean, 1 with one line per finding.
"""
import json
import os
import re
import subprocess
import sys

PRODUCT_DIRS = ["cli", "common", "faults", "handlers", "scenario", "target", "vm"]
# (file, word): why the word there is not an action name
ALLOWED = {
    ("cli/cmd_ctl.c", "status"): "the control socket's command \"status\"",
    ("cli/cmd_ctl.c", "alua"): "the control socket's command \"alua\"",
    ("faults/ctl.c", "status"): "the control socket's command \"status\"",
    ("faults/ctl.c", "alua"): "the control socket's command \"alua\"",
    ("scenario/scenario_tmf.c", "drop"): "the transport action \"drop\" (docs/faults/transport.md)",
    # not yet moved into the action files: ctl's "act" checks a resize and an
    # owner change before it answers
    ("faults/ctl.c", "VERB_RESIZE"): "ctl act: a size the LUN cannot take is answered",
    ("faults/ctl.c", "VERB_OWNER"): "ctl act: an owner change is answered",
}


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    dump, root = sys.argv[1:]
    rows = json.loads(subprocess.run([dump], check=True, capture_output=True,
                                     text=True).stdout)["actions"]
    words = {r["name"] for r in rows} | {r["trace_action"] for r in rows}
    if len(words) < 10:
        print("check_verbs: the registry dump names only %d actions" % len(words))
        return 1
    cmp_re = re.compile(r'\bstr(?:n|case)?cmp\s*\(([^;{}\n]*)')
    lit_re = re.compile(r'"((?:[^"\\\n]|\\.)*)"')
    verb_re = re.compile(r'(?:==|!=|\bcase)\s*(VERB_[A-Z_]+)')
    problems, files = [], 0
    for d in PRODUCT_DIRS:
        for dirpath, _, names in os.walk(os.path.join(root, d)):
            for n in sorted(names):
                if not n.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, n)
                rel = os.path.relpath(path, root)
                if rel.startswith("scenario/actions"):
                    continue
                files += 1
                with open(path, errors="replace") as f:
                    text = f.read()
                for m in cmp_re.finditer(text):
                    for lit in lit_re.findall(m.group(1)):
                        if lit in words and (rel, lit) not in ALLOWED:
                            line = text.count("\n", 0, m.start()) + 1
                            problems.append("%s:%d: compares with the action name \"%s\"; "
                                            "ask the registry (scenario/fl_action.h)"
                                            % (rel, line, lit))
                for m in verb_re.finditer(text):
                    if (rel, m.group(1)) not in ALLOWED:
                        line = text.count("\n", 0, m.start()) + 1
                        problems.append("%s:%d: decides on the verb %s; give the action a hook "
                                        "(scenario/fl_action.h)" % (rel, line, m.group(1)))
    dict_path = os.path.join(root, "tests", "fuzz", "scenario.dict")
    with open(dict_path) as f:
        tokens = set(re.findall(r'^\w+="\\"(\w+)\\""$', f.read(), re.M))
    for r in rows:
        for k in [r["name"]] + r["keys"]:
            if k not in tokens:
                problems.append("%s: no token for the action key \"%s\"" % (dict_path, k))
    if files < 50:
        problems.append("check_verbs: only %d product files found under %s" % (files, root))
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
