"""The CLI loads only what a command needs: generate never imports huggingface_hub or docker."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import atexit, sys
def report():
    edge = ("huggingface_hub", "docker", "jsonschema", "hypothesis")
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in edge)
    sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
atexit.register(report)
sys.argv = ["recipegen"] + sys.argv[1:]
from recipegen.cli import main
main()
"""


def test_generate_imports_no_edge_libraries(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "--gpu", "sm80", "--model", "glm-5.2", "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY=\n" in proc.stderr
