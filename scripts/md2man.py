#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""md2man.py - turns the Markdown the docs are written in into a man page.

    md2man.py PAGE.md OUT.N --name NAME --section N --version V [--faultlun BIN]
              [--var NAME=VALUE]...

PAGE.md is the page's skeleton (docs/man/). Besides Markdown it may hold:
  <!-- include: FILE -->           FILE (relative to the skeleton's repository)
  <!-- include: FILE#Heading -->   only that section of FILE (up to the next
                                   heading of the same or a higher level)
  <!-- intro: FILE -->             FILE's text between its title and the next heading
  <!-- body: FILE -->              FILE without its title (what follows its first heading)
  <!-- help: all -->               `faultlun help CMD` of every command that
                                   `faultlun --help` lists, as code blocks
  @NAME@                           VALUE of --var NAME=VALUE (installed paths:
                                   BINDIR, DATADIR, DOCDIR, LIBEXECDIR, HANDLERDIR)
  ```synopsis                      one command line a line: the literal words in
                                   bold, UPPER-CASE words in italics, a long line
                                   broken between bracketed groups only
A link to a file of the repository (relative to the file it is written in)
becomes the file's installed path when DOCDIR and DATADIR are given (docs/X
-> DOCDIR/docs/X, README.md -> DOCDIR/README.md, scenarios/X ->
DATADIR/faultlun/scenarios/X); a link to a file that is not installed keeps
its text only. Long words (paths, names) may break after / _ . , = so that
a narrow table column or a long path never overflows a line.
The Markdown understood is what docs/ uses: ATX headings, paragraphs, fenced
code, "-" and "1." lists, pipe tables (through tbl), `code`, **bold**,
*emphasis* and [links](url); and definition lists (a term, then ": " and its
text, continued on lines indented by two spaces). A man page reference such as
tcmu-runner(8) is never hyphenated. The date is SOURCE_DATE_EPOCH's when it is
set.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys


# --var values, by name.
VARS = {}
# The repository directory (relative to the root) links of the current text start from.
BASE = [""]
# Marks a possible line break in a long word until esc() has run.
BREAK = "\x02"
# Marks a word that must not be hyphenated (a man page reference) until esc() has run.
NOHYPH = "\x03"


def read_section(path, heading):
    """The lines of path, or of its section titled heading (without the title)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    if not heading:
        return lines
    out, level = None, 0
    for line in lines:
        m = re.match(r"^(#+)\s+(.*)$", line)
        if m and out is not None and len(m.group(1)) <= level:
            break
        if out is not None:
            out.append(line)
        elif m and m.group(2).strip() == heading:
            out, level = [], len(m.group(1))
    if out is None:
        sys.exit(f"md2man: {path}: no section '{heading}'")
    return out


def command_help(faultlun):
    """Markdown: one subsection per command, its `faultlun help CMD` as code."""
    top = subprocess.run([faultlun, "--help"], capture_output=True, text=True, check=True).stdout
    cmds = [m.group(1) for m in re.finditer(r"^  ([a-z]+) ", top, re.M) if m.group(1) != "help"]
    out = []
    for cmd in cmds:
        text = subprocess.run([faultlun, "help", cmd], capture_output=True, text=True).stdout
        out += ["", f"### faultlun {cmd}", "", "```"] + text.rstrip("\n").splitlines() + ["```"]
    return out


def based(lines, rel, parent):
    """lines of the file rel, between markers saying where its links start from."""
    return [f"<!-- md2man-base: {os.path.dirname(rel)} -->"] + lines + \
        [f"<!-- md2man-base: {parent} -->"]


def expand(lines, root, faultlun, base=""):
    """Replaces the include and help directives."""
    out = []
    for line in lines:
        m = re.match(r"^<!--\s*include:\s*([^#\s]+)(?:#(.*?))?\s*-->$", line.strip())
        if m:
            body = read_section(os.path.join(root, m.group(1)), m.group(2))
            body = expand(body, root, faultlun, os.path.dirname(m.group(1)))
            out += based(body, m.group(1), base)
            continue
        m = re.match(r"^<!--\s*intro:\s*(\S+)\s*-->$", line.strip())
        if m:
            body = read_section(os.path.join(root, m.group(1)), None)
            heads = [n for n, t in enumerate(body) if re.match(r"^#+\s", t)]
            body = body[heads[0] + 1:heads[1]] if len(heads) > 1 else body
            out += based(body, m.group(1), base)
            continue
        m = re.match(r"^<!--\s*body:\s*(\S+)\s*-->$", line.strip())
        if m:
            body = read_section(os.path.join(root, m.group(1)), None)
            heads = [n for n, t in enumerate(body) if re.match(r"^#+\s", t)]
            body = expand(body[heads[0] + 1:] if heads else body, root, faultlun,
                          os.path.dirname(m.group(1)))
            out += based(body, m.group(1), base)
            continue
        if re.match(r"^<!--\s*help:\s*all\s*-->$", line.strip()):
            if not faultlun:
                sys.exit("md2man: <!-- help: all --> needs --faultlun BIN")
            out += command_help(faultlun)
            continue
        out.append(re.sub(r"@([A-Z]+)@", lambda v: VARS.get(v.group(1), v.group(0)), line))
    return out


def installed(target):
    """Where the repository file a link names is installed, or None."""
    if re.match(r"^[a-z]+:", target) or target.startswith("/"):
        return target  # a URL or an absolute path: as written
    path = os.path.normpath(os.path.join(BASE[0], target.split("#")[0]))
    docdir, datadir = VARS.get("DOCDIR"), VARS.get("DATADIR")
    if path.startswith("..") or not docdir or not datadir:
        return None
    if path == "docs" or path.startswith("docs/"):
        return docdir + "/" + path + ("/" if target.endswith("/") else "")
    if path in ("README.md", "LICENSE", "CHANGELOG.md"):
        return docdir + "/" + path
    if path.startswith("scenarios/"):
        return datadir + "/faultlun/" + path
    return None


def link(text, target):
    """A Markdown link as text: the text, then where it leads; the path alone when the
    text only names the file."""
    if target.startswith("#") or target in ("", text):
        where = None if target.startswith("#") else installed(target)
        return where or text
    where = installed(target)
    if where is None or where == text:
        return text
    name = os.path.basename(target.split("#")[0].rstrip("/"))
    # a path is never hyphenated (it may break after a / _ . , =): it is copied as shown
    if text in (name, os.path.splitext(name)[0]):
        return NOHYPH + where
    return text + " (" + NOHYPH + where + ")"


def esc(text):
    """Escapes roff's specials in plain text."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return text


def breakable(text):
    """text with break points after / _ . , = in words of more than 12 characters."""
    def points(m):
        return re.sub(r"(?<=[\w-])([/_.,=])(?=\w)", r"\1" + BREAK, m.group(0))
    return re.sub(r"\S{13,}", points, text)


def inline(text):
    """Inline Markdown to roff fonts; long words may break after / _ . , =."""
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for p in parts:
        if p.startswith("`") and p.endswith("`") and len(p) >= 2:
            out.append("\\fB\\%" + esc(breakable(p[1:-1])).replace(BREAK, "\\:") + "\\fR")
            continue
        p = re.sub(r"!?\[([^\]]*)\]\(([^)]*)\)", lambda m: link(m.group(1), m.group(2)), p)
        p = re.sub(r"(?<![\w-])([A-Za-z][\w.-]*\([1-8]\))", NOHYPH + r"\1", p)
        p = esc(breakable(p)).replace(BREAK, "\\:").replace(NOHYPH, "\\%")
        p = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", p)
        p = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\\fI\1\\fR", p)
        p = re.sub(r"(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w_])", r"\\fI\1\\fR", p)
        out.append(p)
    return "".join(out)


def line_out(text):
    """A text line that roff will not take for a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


def synopsis_word(word):
    """One word of a synopsis line in roff: metavariables in italics, the rest bold."""
    out = []
    for tok in re.split(r"(\[|\]|\||\.\.\.|=)", word):
        if not tok:
            continue
        if tok in ("[", "]", "|", "...", "="):
            out.append(esc(tok))
        elif tok[0].isupper():
            out.append("\\fI" + esc(tok) + "\\fR")
        else:
            out.append("\\fB" + esc(tok) + "\\fR")
    return "".join(out)


def synopsis(text):
    """A synopsis line: hanging indent; spaces inside [ ] never break the line."""
    words, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "[") - (ch == "]")
        if ch == " " and depth == 0:
            words.append(cur)
            cur = ""
        else:
            cur += ch
    words.append(cur)
    roff = " ".join("\\~".join(synopsis_word(w) for w in word.split(" ")) for word in words if word)
    return [".PP", ".ad l", ".nh", ".in +4n", ".ti -4n", line_out(roff), ".in", ".hy", ".ad"]


def convert(lines, name, section, version, date):
    out = ["'\\\" t", f'.TH {name.upper()} {section} "{date}" "faultlun {version}" "faultlun"']
    para, i, in_comment = [], 0, False

    def flush():
        if para:
            out.append(".PP")
            out.append(line_out(inline(" ".join(s.strip() for s in para))))
            para.clear()

    while i < len(lines):
        line = lines[i]
        m = re.match(r"^<!-- md2man-base: (.*) -->$", line)
        if m and not in_comment:
            flush()
            BASE[0] = m.group(1)
            i += 1
            continue
        if in_comment or line.strip().startswith("<!--"):
            in_comment = "-->" not in line
            i += 1
            continue
        m = re.match(r"^(#+)\s+(.*)$", line)
        if m:
            flush()
            level, title = len(m.group(1)), m.group(2).strip()
            i += 1
            if level == 1:
                continue  # the page's title: .TH has it
            out.append((".SH " if level <= 2 else ".SS ") + '"' + inline(
                title.upper() if level <= 2 else title).replace('"', '\\(dq') + '"')
            continue
        if line.startswith("```synopsis"):
            flush()
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                if lines[i].strip():
                    out += synopsis(lines[i].strip())
                i += 1
            i += 1
            continue
        if line.startswith("```"):
            flush()
            out += [".PP", ".RS 4", ".nf"]
            i += 1
            while i < len(lines) and not lines[i].startswith("```"):
                out.append(line_out(esc(lines[i])))
                i += 1
            out += [".fi", ".RE"]
            i += 1
            continue
        if line.startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
                if not all(re.match(r"^:?-+:?$", c) for c in cells if c):
                    rows.append(cells)
                i += 1
            ncol = max(len(r) for r in rows)
            out += [".PP", ".TS", "allbox tab(\x01);", " ".join(["lb"] * ncol),
                    " ".join(["l"] * ncol) + "."]
            for r in rows:
                r = r + [""] * (ncol - len(r))
                out.append("\x01".join("T{\n.na\n" + line_out(inline(c)) + "\nT}" for c in r))
            out.append(".TE")
            continue
        if line.strip() and i + 1 < len(lines) and lines[i + 1].startswith(": "):
            flush()
            item = [lines[i + 1][2:]]
            i += 2
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip():
                item.append(lines[i].strip())
                i += 1
            out += [".TP 4", line_out(inline(line.strip())), line_out(inline(" ".join(item)))]
            continue
        m = re.match(r"^(\s*)([-*]|\d+\.)\s+(.*)$", line)
        if m:
            flush()
            mark = "\\(bu" if m.group(2) in "-*" else m.group(2)
            item = [m.group(3)]
            i += 1
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip() and \
                    not re.match(r"^\s*([-*]|\d+\.)\s+", lines[i]):
                item.append(lines[i].strip())
                i += 1
            out += [f".IP {mark} 4", line_out(inline(" ".join(item)))]
            continue
        if not line.strip():
            flush()
            i += 1
            continue
        para.append(line)
        i += 1
    flush()
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description="Markdown to man(7)")
    ap.add_argument("page")
    ap.add_argument("out")
    ap.add_argument("--name", required=True)
    ap.add_argument("--section", required=True)
    ap.add_argument("--version", required=True)
    ap.add_argument("--root", help="where include paths start (default: the page's ../..)")
    ap.add_argument("--faultlun", help="the built faultlun, for <!-- help: all -->")
    ap.add_argument("--var", action="append", default=[], metavar="NAME=VALUE",
                    help="@NAME@ in the page becomes VALUE")
    a = ap.parse_args()
    for v in a.var:
        k, sep, val = v.partition("=")
        if not sep or not re.match(r"^[A-Z]+$", k):
            sys.exit(f"md2man: --var {v}: want NAME=VALUE, NAME in capitals")
        VARS[k] = val
    root = a.root or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(a.page))))
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else \
        datetime.datetime.now(datetime.timezone.utc)
    rel = os.path.relpath(os.path.abspath(a.page), root)
    BASE[0] = os.path.dirname(rel)
    lines = expand(read_section(a.page, None), root, a.faultlun, BASE[0])
    text = convert(lines, a.name, a.section, a.version, when.strftime("%Y-%m-%d"))
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
