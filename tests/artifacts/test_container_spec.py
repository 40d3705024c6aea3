"""launch.sh, docker-compose.yml and plan.json's container spec (what `recipegen up` runs) agree."""

from __future__ import annotations

import json
import re
import subprocess

import pytest
import yaml


@pytest.mark.parametrize(
    ("gpu", "model", "nodes"),
    [("sm80", "glm-5.2", "1"), ("rtx-4090", "gpt-oss-20b", "1"), ("h200", "glm-5.2", "2")],
)
def test_the_three_ways_to_start_the_engine_agree(cli, tmp_path, gpu, model, nodes):
    out = tmp_path / "o"
    assert cli("--gpu", gpu, "--model", model, "--nodes", nodes, "--out", str(out)).code == 0
    spec = json.loads((out / "plan.json").read_text())["container"]
    compose = yaml.safe_load((out / "docker-compose.yml").read_text())
    script = (out / "launch.sh").read_text()
    for node in spec["nodes"]:
        service = compose["services"][node["service"]]
        # Compose reads ${HEAD_ADDR}/${DIST_PORT} from the host, so it spells them with their default or error
        command = [re.sub(r"\$\{(\w+):[-?][^}]*\}", r"${\1}", t.replace("$$", "$")) for t in service["command"]]
        assert command == node["args"]
        assert service["image"] == spec["image"]
        assert service["shm_size"] == spec["shm_size"]
        assert (service.get("ipc") == "host") == spec["ipc_host"]
        assert service["healthcheck"]["test"] == spec["healthcheck"]["test"]
        assert service.get("network_mode") == ("host" if spec["host_network"] else None)
        rank = node["rank"]
        body = script.split(f"args_{rank}=(\n", 1)[1].split("\n)\n", 1)[0]
        printed = subprocess.run(
            ["bash", "-c", f"args=(\n{body}\n)\nprintf '%s\\n' \"${{args[@]}}\""],
            capture_output=True,
            text=True,
            env={"PATH": "/usr/bin:/bin", "HEAD_ADDR": "${HEAD_ADDR}", "DIST_PORT": "${DIST_PORT}"},
        ).stdout.splitlines()
        prefix = len(node["args"]) - len(printed)
        assert node["args"][prefix:] == printed  # launch.sh passes the engine command prefix separately
    assert f"NAME='{spec['name']}'" in script
    assert f"--shm-size '{spec['shm_size']}'" in script
