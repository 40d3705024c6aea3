"""This machine: its GPUs (localgpu: NVML or nvidia-smi; detect maps them onto catalog hardware), the
Docker engine (dockerhost, the one module that talks to it), preflight (every check before a start),
up (start, wait for healthy, verify) and verify (the smoke tests).

May import: check, report, artifacts, plan, checkpoint, catalog, errors, frozen.
"""
