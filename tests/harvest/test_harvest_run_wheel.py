"""scripts/harvest --run --python: the ran tables name the wheel the interpreter has installed and its sha256
(a stand-in install: tests/harvest/data/vllm-run-tree plus a dist-info, and a local wheelhouse for pip)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TREE = Path(__file__).parent / "data" / "vllm-run-tree"
WHEEL = "vllm-9.9.9-py3-none-any.whl"
METADATA = "Metadata-Version: 2.1\nName: vllm\nVersion: 9.9.9\n"


def _hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


def _stand_in(tmp: Path, installed: bytes = b"VERSION = 1\n", direct_url: dict | None = None) -> dict[str, str]:
    """A wheel of vllm 9.9.9 in a wheelhouse and an install of it (its dist-info) whose module is `installed`."""
    files = {"vllm/_version.py": b"VERSION = 1\n", "vllm-9.9.9.dist-info/METADATA": METADATA.encode()}
    record = "".join(f"{p},{_hash(d)},{len(d)}\n" for p, d in files.items()) + "vllm-9.9.9.dist-info/RECORD,,\n"
    (tmp / "wheels").mkdir()
    with zipfile.ZipFile(tmp / "wheels" / WHEEL, "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
        wheel.writestr("vllm-9.9.9.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
        wheel.writestr("vllm-9.9.9.dist-info/RECORD", record)
    info = tmp / "site" / "vllm-9.9.9.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(METADATA)
    mine = record.replace(_hash(b"VERSION = 1\n"), _hash(installed))
    (info / "RECORD").write_text(mine + "vllm-9.9.9.dist-info/INSTALLER,,\n")
    if direct_url is not None:
        (info / "direct_url.json").write_text(json.dumps(direct_url))
    (tmp / "out" / "vllm").mkdir(parents=True)
    return {
        "PYTHONPATH": f"{TREE}{os.pathsep}{tmp / 'site'}",
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(tmp / "wheels"),
        "PIP_CONFIG_FILE": os.devnull,
    }


def _run(tmp: Path, env: dict[str, str], facts_sha256: str | None = None) -> subprocess.CompletedProcess[str]:
    facts = {"engine": "vllm", "release": "9.9.9", "sha256": facts_sha256, "tables": {}}
    (tmp / "out" / "vllm" / "9.9.9.json").write_text(json.dumps(facts))
    command = [sys.executable, str(ROOT / "scripts" / "harvest"), "vllm==9.9.9", "--run", "--python", sys.executable]
    command += ["--caps", "90", "--out", str(tmp / "out"), "--today", "2026-12-04"]
    return subprocess.run(command, capture_output=True, text=True, timeout=300, env={**os.environ, **env})


def _ran(tmp: Path) -> dict:
    return json.loads((tmp / "out" / "vllm" / "9.9.9.ran.json").read_text())


def test_the_wheel_an_interpreter_has_installed_is_fetched_again_and_hashed(tmp_path):
    env = _stand_in(tmp_path)
    digest = hashlib.sha256((tmp_path / "wheels" / WHEEL).read_bytes()).hexdigest()
    proc = _run(tmp_path, env, facts_sha256=digest)
    assert proc.returncode == 0, proc.stderr
    assert f"sha256 {digest}: {WHEEL} fetched again, its RECORD the install's" in proc.stderr
    assert (_ran(tmp_path)["artifact"], _ran(tmp_path)["sha256"]) == (WHEEL, digest)


def test_a_wheel_whose_files_the_install_does_not_have_is_not_named(tmp_path):
    env = _stand_in(tmp_path, installed=b"VERSION = 2\n")  # the install was built from other sources
    proc = _run(tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    assert f"sha256 not recorded: {WHEEL} is not what" in proc.stderr
    assert "(1 files differ, e.g. vllm/_version.py)" in proc.stderr
    assert (_ran(tmp_path)["artifact"], _ran(tmp_path)["sha256"]) == (None, None)


def test_the_hash_pip_recorded_for_an_install_from_a_file_is_used_as_is(tmp_path):
    recorded = {"url": f"file:///wheels/{WHEEL}", "archive_info": {"hashes": {"sha256": "ab" * 32}}}
    env = _stand_in(tmp_path, direct_url=recorded)
    env["PIP_FIND_LINKS"] = str(tmp_path)  # nothing to fetch: the recorded hash is enough
    proc = _run(tmp_path, env)
    assert proc.returncode == 0, proc.stderr
    assert (_ran(tmp_path)["artifact"], _ran(tmp_path)["sha256"]) == (WHEEL, "ab" * 32)


def test_an_installed_wheel_other_than_the_one_the_facts_were_read_from_is_refused(tmp_path):
    env = _stand_in(tmp_path)
    proc = _run(tmp_path, env, facts_sha256="cd" * 32)
    assert proc.returncode == 1
    assert "9.9.9.json was read from sha256 cdcdcdcdcdcd…, the installed wheel is" in proc.stderr
    assert "rerun the read harvest first" in proc.stderr
    assert not (tmp_path / "out" / "vllm" / "9.9.9.ran.json").exists()
