#!/usr/bin/env python3
"""Replaces the block between <!-- NAME:begin --> and <!-- NAME:end --> of a markdown file with the
contents of BLOCK_FILE (which carries both markers), through a temporary file and a rename.

    splice_doc_block.py DOC NAME BLOCK_FILE
"""
import os
import sys

doc, name, block_file = sys.argv[1], sys.argv[2], sys.argv[3]
block = open(block_file).read().rstrip("\n")
text = open(doc).read()
begin, end = f"<!-- {name}:begin -->", f"<!-- {name}:end -->"
if begin not in text or end not in text:
    sys.exit(f"splice_doc_block: no {begin} ... {end} markers in {doc}")
head, rest = text.split(begin, 1)
_, tail = rest.split(end, 1)
with open(doc + ".tmp", "w") as out:
    out.write(head + block + tail)
os.replace(doc + ".tmp", doc)
