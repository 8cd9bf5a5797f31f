#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""What the JSON Schema gives an editor, checked.

Usage:
  check_schema_editors.py descriptions SCHEMA
      every property of every object the schema describes ("properties",
      at any depth, $defs included) has a non-empty "description": the
      text an editor shows on hover and in completion lists.
  check_schema_editors.py sense-names FAULTLUN SCHEMA
      $defs.sense_key_name.enum and $defs.asc_name.enum are the sense key
      and ASC/ASCQ names of the one table (scenario/sense_names.c), in its
      order, as `FAULTLUN lint --sense-names` prints them; and the places a
      scenario writes a single sense name ($defs.sense's key, $defs.ascq)
      refer to them.
Exit 0 when it holds, 1 with one line per problem.
"""
import json
import subprocess
import sys


def undescribed(node, path, out):
    """Appends to out the path of every property without a description."""
    if isinstance(node, dict):
        for key, sub in node.items():
            if key == "properties" and isinstance(sub, dict):
                for name, prop in sub.items():
                    desc = prop.get("description") if isinstance(prop, dict) else None
                    if not isinstance(desc, str) or not desc.strip():
                        out.append("%s/properties/%s" % (path, name))
            undescribed(sub, "%s/%s" % (path, key), out)
    elif isinstance(node, list):
        for i, sub in enumerate(node):
            undescribed(sub, "%s/%d" % (path, i), out)


def refs(node):
    """Every $ref under node."""
    if isinstance(node, dict):
        for key, sub in node.items():
            if key == "$ref":
                yield sub
            else:
                yield from refs(sub)
    elif isinstance(node, list):
        for sub in node:
            yield from refs(sub)


def table(faultlun):
    """(sense key names, ASC/ASCQ names) as faultlun lint --sense-names lists them."""
    text = subprocess.run([faultlun, "lint", "--sense-names"], check=True,
                          capture_output=True, text=True).stdout
    keys, ascs, cur = [], [], None
    for line in text.splitlines():
        if line.startswith("#"):
            cur = keys if "sense keys" in line else ascs
        elif line.strip() and cur is not None:
            cur.append(line.split()[0])
    return keys, ascs


def compare(what, schema_list, c_list, problems):
    """Appends the differences between the schema's enum and the table's names."""
    if schema_list == c_list:
        return
    if not isinstance(schema_list, list):
        problems.append("%s: missing (an enum of the table's names)" % what)
        return
    for n in sorted(set(c_list) - set(schema_list)):
        problems.append("%s: \"%s\" is in the table but not in the schema's enum" % (what, n))
    for n in sorted(set(schema_list) - set(c_list)):
        problems.append("%s: \"%s\" is in the schema's enum but not in the table" % (what, n))
    if set(schema_list) == set(c_list):
        problems.append("%s: the schema's enum is not in the table's order (or repeats a name)"
                        % what)


def main():
    problems = []
    if len(sys.argv) == 3 and sys.argv[1] == "descriptions":
        with open(sys.argv[2]) as f:
            schema = json.load(f)
        undescribed(schema, "", problems)
        problems = ["%s: no description" % p for p in problems]
        ok = "every property has a description"
    elif len(sys.argv) == 4 and sys.argv[1] == "sense-names":
        with open(sys.argv[3]) as f:
            schema = json.load(f)
        keys, ascs = table(sys.argv[2])
        if not keys or not ascs:
            problems.append("`%s lint --sense-names` listed no names" % sys.argv[2])
        defs = schema.get("$defs", {})
        compare("$defs.sense_key_name", defs.get("sense_key_name", {}).get("enum"), keys,
                problems)
        compare("$defs.asc_name", defs.get("asc_name", {}).get("enum"), ascs, problems)
        if "#/$defs/sense_key_name" not in set(refs(defs.get("sense", {}))):
            problems.append("$defs.sense does not refer to $defs.sense_key_name")
        if "#/$defs/asc_name" not in set(refs(defs.get("ascq", {}))):
            problems.append("$defs.ascq does not refer to $defs.asc_name")
        ok = "%d sense keys and %d ASC/ASCQ names: schema and table agree" % (len(keys),
                                                                               len(ascs))
    else:
        print(__doc__, file=sys.stderr)
        return 2
    for line in problems:
        print(line)
    if not problems:
        print(ok)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
