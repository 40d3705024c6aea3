#!/usr/bin/env python3
"""A stand-in for nvidia-smi that replays a recorded capture ($FAKE_SMI_DIR, see
tests/data/nvidia-smi/SOURCES.md): selected --query-gpu columns, the plain table, topo -m.
$FAKE_SMI_UNKNOWN_FIELDS lists query fields to refuse as a driver older than the capture does
(R470's nvidia-smi: 'Field "compute_cap" is not a valid field to query.')."""

import csv
import os
import re
import sys
from pathlib import Path

here = Path(os.environ["FAKE_SMI_DIR"])
args = sys.argv[1:]
if not args:
    sys.stdout.write((here / "smi.txt").read_text())
    sys.exit(0)
if args == ["topo", "-m"]:
    sys.stdout.write((here / "topo.txt").read_text())
    sys.exit(0)
query = next((a.split("=", 1)[1] for a in args if a.startswith("--query-gpu=")), None)
fmt = next((a.split("=", 1)[1] for a in args if a.startswith("--format=")), "")
if query is None or "csv" not in fmt.split(","):
    print("Invalid combination of input arguments. Please run 'nvidia-smi -h' for help.")
    sys.exit(2)
rows = list(csv.reader((here / "query.csv").read_text().splitlines(), skipinitialspace=True))
header = [re.sub(r"\s*\[.*\]$", "", h) for h in rows[0]]
unknown = set(os.environ.get("FAKE_SMI_UNKNOWN_FIELDS", "").split(","))  # emulate an older driver
fields = query.split(",")
for f in fields:
    if f not in header or f in unknown:
        print(f'Field "{f}" is not a valid field to query.')
        sys.exit(2)
out = []
if "noheader" not in fmt:
    out.append(", ".join(rows[0][header.index(f)] for f in fields))
for row in rows[1:]:
    values = [row[header.index(f)] for f in fields]
    if "nounits" in fmt:
        values = [re.sub(r"^(-?[0-9.]+) (MiB|W|MHz|%|C)$", r"\1", v) for v in values]
    out.append(", ".join(values))
print("\n".join(out))
