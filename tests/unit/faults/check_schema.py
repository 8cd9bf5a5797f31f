#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# Validates scenario files against scenarios/faultlun-scenario.schema.json
# (JSON Schema 2020-12). Exit 77 (skip) when python3-jsonschema is missing.
#   check_schema.py SCHEMA GOOD_FILE... --bad BAD_FILE...
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed: skipped")
    sys.exit(77)

schema = json.load(open(sys.argv[1]))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)
failed = 0
checked = 0
bad = False
for path in sys.argv[2:]:
    if path == "--bad":
        bad = True
        continue
    checked += 1
    errors = list(validator.iter_errors(json.load(open(path))))
    if bad and not errors:
        print(f"{path}: the schema accepts a scenario it should refuse")
        failed += 1
    elif not bad and errors:
        for e in errors:
            print(f"{path}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
        failed += 1
print(f"{checked - failed} passed, {failed} failed")
sys.exit(1 if failed else 0)
