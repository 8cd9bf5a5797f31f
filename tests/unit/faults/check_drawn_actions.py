#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The JSON Schema accepts every action the registry's descriptors can draw.

Usage: check_drawn_actions.py DUMP_ACTIONS SCHEMA N

DUMP_ACTIONS --draw N prints N actions drawn from the parameter descriptors
(the values `faultlun explore` and the engine's tests use); each is checked
against $defs.action of SCHEMA (JSON Schema 2020-12). Exit 0 when all pass,
1 with the first ten refused, 77 (skip) without python3-jsonschema.
"""
import json
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        return 2
    dump, schema_path, n = sys.argv[1:]
    with open(schema_path) as f:
        schema = json.load(f)
    action = dict(schema["$defs"]["action"], **{"$defs": schema["$defs"]})
    validator = jsonschema.Draft202012Validator(action)
    lines = subprocess.run([dump, "--draw", n], check=True, capture_output=True,
                           text=True).stdout.splitlines()
    refused = []
    for line in lines:
        errors = list(validator.iter_errors(json.loads(line)))
        if errors:
            refused.append("%s: %s" % (line, errors[0].message))
    for r in refused[:10]:
        print(r)
    if len(lines) != int(n):
        print("%d actions drawn, %s asked" % (len(lines), n))
        return 1
    print("%d drawn actions, %d refused by the schema" % (len(lines), len(refused)))
    return 1 if refused else 0


if __name__ == "__main__":
    sys.exit(main())
