"""launch.sh against the real Docker engine: the container receives exactly the planned argv,
even when a user's recipe carries hostile text (quotes, spaces, `$(…)`, backticks).

The image is a tiny local one (static busybox, no registry) whose entrypoint prints each
argument it receives; launch.sh is pointed at it with IMAGE= and DOCKER_GPUS= (no GPU here).
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import yaml

from recipegen.catalog.index import builtin_root
from tests.support.docker import run_launch

HOSTILE = 'glm 5.2 "quoted" $(touch {pwn}) it\'s `id` ${{HOME}}'


def test_container_receives_exactly_the_planned_argv(cli, tmp_path, argv_image):
    client, image = argv_image
    pwn = tmp_path / "pwned"
    recipe = yaml.safe_load((builtin_root() / "deployments" / "glm-5.2-nvfp4-8xa100-vllm-sm80.yaml").read_text())
    recipe["args"].insert(
        0, {"flag": "--served-model-name", "value": HOSTILE.format(pwn=pwn), "reason": "a user's odd name"}
    )
    user = tmp_path / "recipes" / "deployments"
    user.mkdir(parents=True)
    (user / f"{recipe['id']}.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False, allow_unicode=True))

    out = tmp_path / "out dir with spaces"
    result = cli("--gpu", "sm80", "--model", "glm-5.2", "--recipes", str(tmp_path / "recipes"), "--out", str(out))
    assert result.code == 0, result.err
    planned = json.loads((out / "plan.json").read_text())["plans"][0]["argv"][2:]
    assert HOSTILE.format(pwn=pwn) in planned

    models = tmp_path / "models"
    (models / "GLM-5.2-NVFP4").mkdir(parents=True)  # a folder from an earlier, maybe interrupted, download
    stand_in, calls = tmp_path / "bin", tmp_path / "hf-calls"
    stand_in.mkdir()
    (stand_in / "hf").write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{calls}"\n')
    (stand_in / "hf").chmod(0o755)
    env = {
        "HOME": str(tmp_path),
        "MODEL_DIR": str(models),
        "IMAGE": image,
        "PATH": f"{stand_in}:/usr/local/bin:/usr/bin:/bin",
    }
    printed, _ = run_launch(client, out, "recipegen-glm-5.2-0", env)
    received = printed.splitlines()
    assert received == [f"<{arg}>" for arg in planned]
    # the folder exists, yet hf download still runs: it resumes and skips the files already complete
    hf_argv = calls.read_text().splitlines()
    assert hf_argv[:2] == ["download", "nvidia/GLM-5.2-NVFP4"] and "--local-dir" in hf_argv
    assert not pwn.exists(), "a value was executed by the shell"


def test_hostile_values_survive_bash_and_compose_quoting(cli, tmp_path):
    recipe = yaml.safe_load((builtin_root() / "deployments" / "glm-5.2-nvfp4-8xa100-vllm-sm80.yaml").read_text())
    value = HOSTILE.format(pwn=tmp_path / "pwned")
    recipe["args"].append({"flag": "--chat-template", "value": value, "reason": "hostile"})
    user = tmp_path / "r" / "deployments"
    user.mkdir(parents=True)
    (user / f"{recipe['id']}.yaml").write_text(yaml.safe_dump(recipe, sort_keys=False))
    out = tmp_path / "o"
    assert cli("--gpu", "sm80", "--model", "glm-5.2", "--recipes", str(tmp_path / "r"), "--out", str(out)).code == 0
    script = (out / "launch.sh").read_text()
    arrays = script.split("args_0=(\n", 1)[1].split("\n)\n", 1)[0]
    printed = subprocess.run(
        ["bash", "-c", f"args_0=(\n{arrays}\n)\nprintf '%s\\n' \"${{args_0[@]}}\""], capture_output=True, text=True
    )
    assert value in printed.stdout.splitlines()
    compose = yaml.safe_load((out / "docker-compose.yml").read_text())
    command = [t.replace("$$", "$") for t in compose["services"]["engine"]["command"]]
    assert value in command
    assert not Path(tmp_path / "pwned").exists()


def test_hostile_recipe_text_reaches_the_container_verbatim_and_never_runs(cli, tmp_path, argv_image):
    """Names, reasons, notes, env values and flag values of a shared recipe folder, all hostile at once."""
    client, image = argv_image
    pwn = tmp_path / "pwned"
    hostile = HOSTILE.format(pwn=pwn) + " {{ 7 * 7 }} ${IFS}x \\ ; && |"
    model_id = f"hostile-{uuid.uuid4().hex[:8]}"
    model = yaml.safe_load((builtin_root() / "models" / "glm-5.2.yaml").read_text())
    model.update(id=model_id, name=hostile, aliases=[])
    model["pitfalls"] = [{"text": hostile}]
    recipe = yaml.safe_load((builtin_root() / "deployments" / "glm-5.2-nvfp4-8xa100-vllm-sm80.yaml").read_text())
    recipe.update(id=f"{model_id}-dep", model=model_id, title=hostile, notes=[hostile])
    recipe["env"] = [{"name": "RECIPEGEN_HOSTILE", "value": hostile, "reason": hostile}]
    for arg in recipe["args"]:
        arg["reason"] = hostile
    recipe["args"].insert(0, {"flag": "--served-model-name", "value": hostile, "reason": hostile})
    user = tmp_path / "recipes"
    for kind, document in (("models", model), ("deployments", recipe)):
        (user / kind).mkdir(parents=True)
        (user / kind / f"{document['id']}.yaml").write_text(yaml.safe_dump(document, sort_keys=False))

    out = tmp_path / "out"
    result = cli("--gpu", "sm80", "--model", model_id, "--recipes", str(user), "--out", str(out))
    assert result.code == 0, result.err
    planned = json.loads((out / "plan.json").read_text())["plans"][0]["argv"][2:]
    assert hostile in planned
    models = tmp_path / "models"
    (models / "GLM-5.2-NVFP4").mkdir(parents=True)
    env = {"HOME": str(tmp_path), "MODEL_DIR": str(models), "IMAGE": image}
    printed, attrs = run_launch(client, out, f"recipegen-{model_id}-0", env)
    received, container_env = printed.splitlines(), attrs["Config"]["Env"]
    assert received == [f"<{arg}>" for arg in planned]
    assert f"RECIPEGEN_HOSTILE={hostile}" in container_env
    compose = yaml.safe_load((out / "docker-compose.yml").read_text())
    assert compose["services"]["engine"]["environment"]["RECIPEGEN_HOSTILE"].replace("$$", "$") == hostile
    assert not pwn.exists(), "recipe text was executed by the shell"
