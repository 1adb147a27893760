#!/usr/bin/env python3
"""Count tcgen05 instructions in PTX files, independently of the harness's own parser.

usage: scripts/count-tcgen05.py FILE.ptx... > counts.json

Method (deliberately simple): drop /* ... */ comments, then on each line drop everything from "//",
split the rest on ';' and, for each statement, strip an optional label ("L:") and an optional guard
predicate ("@p" / "@!p"); if the statement then starts with "tcgen05." the opcode is its first
whitespace-delimited token, i.e. the dotted mnemonic with all qualifiers exactly as written.
Output: {"<file name>": {"<opcode>": count, ...}, ...}, keys sorted.
"""
import json
import os
import re
import sys

BLOCK_COMMENT = re.compile(r"/\*.*?\*/", re.S)
LABEL = re.compile(r"^[A-Za-z_$%][\w$%]*:\s*")
GUARD = re.compile(r"^@!?%?[\w$]+\s+")


def count(text):
    text = BLOCK_COMMENT.sub(" ", text)
    out = {}
    for line in text.splitlines():
        line = line.split("//", 1)[0]
        for stmt in line.split(";"):
            s = stmt.strip().lstrip("{}").strip()
            s = LABEL.sub("", s)
            s = GUARD.sub("", s)
            if s.startswith("tcgen05."):
                op = s.split()[0]
                out[op] = out.get(op, 0) + 1
    return dict(sorted(out.items()))


def main(paths):
    res = {}
    for p in paths:
        with open(p, encoding="utf-8") as f:
            res[os.path.basename(p)] = count(f.read())
    json.dump(dict(sorted(res.items())), sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main(sys.argv[1:])
