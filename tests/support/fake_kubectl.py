#!/usr/bin/env python3
"""A stand-in for kubectl with a current context: `config current-context`, `get nodes -o json` (the nodes of
$FAKE_KUBE_GPUS, a comma-separated list of nvidia.com/gpu counts) and `get crd NAME` ($FAKE_KUBE_CRDS lists the
installed ones)."""

import json
import os
import sys

args = sys.argv[1:]
if args == ["config", "current-context"]:
    print("test-cluster")
elif args == ["get", "nodes", "-o", "json"]:
    counts = [c for c in os.environ.get("FAKE_KUBE_GPUS", "").split(",") if c]
    items = [
        {"metadata": {"name": f"n{i}"}, "status": {"allocatable": {"nvidia.com/gpu": c}}} for i, c in enumerate(counts)
    ]
    print(json.dumps({"items": items}))
elif args[:2] == ["get", "crd"] and args[2] in os.environ.get("FAKE_KUBE_CRDS", "").split(","):
    print(args[2])
else:
    print(f"Error from server (NotFound): {' '.join(args)}", file=sys.stderr)
    sys.exit(1)
