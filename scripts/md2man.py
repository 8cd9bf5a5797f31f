#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""md2man.py - turns the Markdown the docs are written in into a man page.

    md2man.py PAGE.md OUT.N --name NAME --section N --version V [--faultlun BIN]

PAGE.md is the page's skeleton (docs/man/). Besides Markdown it may hold:
  <!-- include: FILE -->           FILE (relative to the skeleton's repository)
  <!-- include: FILE#Heading -->   only that section of FILE (up to the next
                                   heading of the same or a higher level)
  <!-- intro: FILE -->             FILE's text between its title and the next heading
  <!-- help: all -->               `faultlun help CMD` of every command that
                                   `faultlun --help` lists, as code blocks
The Markdown understood is what docs/ uses: ATX headings, paragraphs, fenced
code, "-" and "1." lists, pipe tables (through tbl), `code`, **bold**,
*emphasis* and [links](url). The date is SOURCE_DATE_EPOCH's when it is set.
"""
import argparse
import datetime
import os
import re
import subprocess
import sys


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


def expand(lines, root, faultlun):
    """Replaces the include and help directives."""
    out = []
    for line in lines:
        m = re.match(r"^<!--\s*include:\s*([^#\s]+)(?:#(.*?))?\s*-->$", line.strip())
        if m:
            out += expand(read_section(os.path.join(root, m.group(1)), m.group(2)), root, faultlun)
            continue
        m = re.match(r"^<!--\s*intro:\s*(\S+)\s*-->$", line.strip())
        if m:
            body = read_section(os.path.join(root, m.group(1)), None)
            heads = [n for n, t in enumerate(body) if re.match(r"^#+\s", t)]
            out += body[heads[0] + 1:heads[1]] if len(heads) > 1 else body
            continue
        if re.match(r"^<!--\s*help:\s*all\s*-->$", line.strip()):
            if not faultlun:
                sys.exit("md2man: <!-- help: all --> needs --faultlun BIN")
            out += command_help(faultlun)
            continue
        out.append(line)
    return out


def esc(text):
    """Escapes roff's specials in plain text."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return text


def inline(text):
    """Inline Markdown to roff fonts."""
    parts = re.split(r"(`[^`]*`)", text)
    out = []
    for p in parts:
        if p.startswith("`") and p.endswith("`") and len(p) >= 2:
            out.append("\\fB" + esc(p[1:-1]) + "\\fR")
            continue
        p = re.sub(r"!?\[([^\]]*)\]\(([^)]*)\)", lambda m: m.group(1) + (
            "" if m.group(2).startswith("#") or m.group(2) in ("", m.group(1))
            else " (" + m.group(2) + ")"), p)
        p = esc(p)
        p = re.sub(r"\*\*(.+?)\*\*", r"\\fB\1\\fR", p)
        p = re.sub(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])", r"\\fI\1\\fR", p)
        p = re.sub(r"(?<![\w_])_(?!\s)(.+?)(?<!\s)_(?![\w_])", r"\\fI\1\\fR", p)
        out.append(p)
    return "".join(out)


def line_out(text):
    """A text line that roff will not take for a request."""
    return "\\&" + text if text[:1] in (".", "'") else text


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
    a = ap.parse_args()
    root = a.root or os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(a.page))))
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch else \
        datetime.datetime.now(datetime.timezone.utc)
    lines = expand(read_section(a.page, None), root, a.faultlun)
    text = convert(lines, a.name, a.section, a.version, when.strftime("%Y-%m-%d"))
    with open(a.out, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    main()
