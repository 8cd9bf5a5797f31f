#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
# ktap-check.py FILE - checks a KTAP version 1 document as faultlun writes it
# (`faultlun check --ktap`, `faultlun vm --ktap`) against the format's rules:
# each test block opens with "KTAP version 1" and a plan "1..N"; its results
# are "ok N NAME" / "not ok N NAME", numbered 1..N in order, as many as the
# plan says; a subtest block is indented two spaces deeper than its parent
# and stands just before the parent's result line; a directive is " # SKIP"
# (or TODO, XFAIL, TIMEOUT, ERROR) in upper case, followed by a space and a
# reason when there is one, and a SKIP is "ok"; diagnostics are "# " lines at
# the block's indentation; nothing else is allowed. A block that holds a
# "not ok" makes its parent "not ok". Prints each result as
# "DEPTH ok|not_ok|skip NAME" (one line each, in file order) and exits 0,
# or names the first broken rule and exits 1.
import re
import sys

RESULT = re.compile(r"^(ok|not ok) ([1-9][0-9]*)(?: ([^#]*?))?(?: # (.*))?$")
DIRECTIVE = re.compile(r"^(SKIP|TODO|XFAIL|TIMEOUT|ERROR)(?: (\S.*))?$")


class Broken(Exception):
    pass


def parse_block(lines, i, depth, out):
    """Parses a test block at depth from lines[i]; returns (next index, any 'not ok')."""
    pad = " " * (2 * depth)

    def at(k):
        return lines[k] if k < len(lines) else None

    if at(i) != pad + "KTAP version 1":
        raise Broken("line %d: want %r, got %r" % (i + 1, pad + "KTAP version 1", at(i)))
    i += 1
    while at(i) is not None and at(i).startswith(pad + "# "):
        i += 1
    m = re.match(r"^" + pad + r"1\.\.([0-9]+)$", at(i) or "")
    if not m:
        raise Broken("line %d: want the plan '%s1..N', got %r" % (i + 1, pad, at(i)))
    planned = int(m.group(1))
    i += 1
    seen = 0
    any_failed = False
    sub_failed = None  # the subtest block just read, awaiting its result line
    while i < len(lines):
        line = lines[i]
        indent = len(line) - len(line.lstrip(" "))
        if indent > len(pad):
            if indent != len(pad) + 2 or line.strip() != "KTAP version 1":
                raise Broken("line %d: indented %d spaces outside a subtest block (%r)"
                             % (i + 1, indent, line))
            if sub_failed is not None:
                raise Broken("line %d: two subtest blocks for one result" % (i + 1))
            i, sub_failed = parse_block(lines, i, depth + 1, out)
            continue
        if indent < len(pad):
            break  # the parent's result line
        body = line[len(pad):]
        if body.startswith("# ") or body == "#":
            i += 1
            continue
        m = RESULT.match(body)
        if not m:
            raise Broken("line %d: not a result, diagnostic or subtest: %r" % (i + 1, line))
        ok, num, name, directive = m.group(1) == "ok", int(m.group(2)), m.group(3), m.group(4)
        seen += 1
        if num != seen:
            raise Broken("line %d: test number %d, want %d" % (i + 1, num, seen))
        if not name:
            raise Broken("line %d: a result without a name" % (i + 1))
        skip = False
        if directive is not None:
            d = DIRECTIVE.match(directive)
            if not d:
                raise Broken("line %d: bad directive %r" % (i + 1, directive))
            skip = d.group(1) == "SKIP"
            if skip and not ok:
                raise Broken("line %d: a SKIP that is 'not ok'" % (i + 1))
        if sub_failed and ok:
            raise Broken("line %d: 'ok' although its subtests hold a 'not ok'" % (i + 1))
        sub_failed = None
        any_failed |= not ok
        out.append("%d %s %s" % (depth, "skip" if skip else "ok" if ok else "not_ok", name))
        i += 1
    if sub_failed is not None:
        raise Broken("line %d: a subtest block without its result line" % (i + 1))
    if seen != planned:
        raise Broken("depth %d: plan 1..%d, %d results" % (depth, planned, seen))
    return i, any_failed


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        text = f.read()
    if not text.endswith("\n"):
        print("FAIL: %s: the last line has no newline" % sys.argv[1])
        return 1
    lines = text[:-1].split("\n")
    out = []
    try:
        end, _ = parse_block(lines, 0, 0, out)
        if end != len(lines):
            raise Broken("line %d: text after the last result: %r" % (end + 1, lines[end]))
    except Broken as e:
        print("FAIL: %s: %s" % (sys.argv[1], e))
        return 1
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
