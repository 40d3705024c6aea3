"""k8s/: manifests valid against the Kubernetes OpenAPI schemas and the LeaderWorkerSet CRD, running the argv of
launch.sh and compose, with hostile values inert.

The Kubernetes schemas come with the `kubernetes-validate` package (a dev extra); the LeaderWorkerSet schema is
the CRD's openAPIV3Schema, copied with its provenance into tests/data/k8s/.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

from recipegen.artifacts.render import kubernetes_files
from tests.support.data import DATA

kubernetes_validate = pytest.importorskip("kubernetes_validate")
K8S_VERSION = "1.33.0"  # a current release whose schemas the package ships
LWS_SCHEMA = json.loads((DATA / "k8s" / "leaderworkerset-v1.schema.json").read_text(encoding="utf-8"))

VLLM_2x8xH200 = ["--gpu", "h200", "--gpus", "8", "--nodes", "2", "--model", "kimi-k2", "--engine", "vllm"]
SGLANG_2xGB10 = ["--gpu", "gb10", "--model", "glm-5.3-flash", "--nodes", "2"]
LLAMACPP_2x3090 = ["--gpu", "rtx-3090", "--gpus", "2", "--model", "gpt-oss-120b", "--host-memory", "128"]
VLLM_1x4090 = ["--gpu", "rtx-4090", "--model", "gpt-oss-20b"]


def documents(out: Path) -> list[dict[str, Any]]:
    docs: list[dict[str, Any]] = []
    for name in ("weights.yaml", "engine.yaml"):
        if (out / "k8s" / name).exists():
            docs += [d for d in yaml.safe_load_all((out / "k8s" / name).read_text(encoding="utf-8")) if d]
    return docs


def validate(doc: dict[str, Any]) -> None:
    """Against Kubernetes' own schemas; a LeaderWorkerSet against its CRD, its pod templates as PodTemplates."""
    if doc["kind"] != "LeaderWorkerSet":
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)
        return
    jsonschema.Draft7Validator(LWS_SCHEMA).validate(doc)
    template = doc["spec"]["leaderWorkerTemplate"]
    for key in ("leaderTemplate", "workerTemplate"):
        pod = {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": "t"}, "template": template[key]}
        kubernetes_validate.validate(pod, K8S_VERSION, strict=True)


def pod_specs(docs: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """role → pod spec of the engine workload."""
    for doc in docs:
        if doc["kind"] == "Deployment":
            return {"single": doc["spec"]["template"]["spec"]}
        if doc["kind"] == "LeaderWorkerSet":
            t = doc["spec"]["leaderWorkerTemplate"]
            return {"head": t["leaderTemplate"]["spec"], "worker": t["workerTemplate"]["spec"]}
    raise AssertionError("no engine workload")


def as_launched(arg: str, rank: int) -> str:
    """A container arg as the pod's process receives it (Kubernetes' expansion: `$$` is `$`, `$(VAR)` expands),
    spelled as plan.json's container spec spells it; only LWS's own variables may expand."""
    env = {"LWS_WORKER_INDEX": str(rank), "LWS_LEADER_ADDRESS": "${HEAD_ADDR}", "DIST_PORT": "${DIST_PORT}"}

    def one(m: re.Match[str]) -> str:
        if m[0] == "$$":
            return "$"
        assert m[1] in env, f"{arg!r} would be expanded by Kubernetes"
        return env[m[1]]

    return re.sub(r"\$\$|\$\((\w+)\)", one, arg)


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        (VLLM_2x8xH200, "LeaderWorkerSet"),
        (SGLANG_2xGB10, "LeaderWorkerSet"),
        (LLAMACPP_2x3090, "Deployment"),
        (VLLM_1x4090, "Deployment"),
    ],
    ids=["vllm-2x8xh200", "sglang-2xgb10", "llamacpp-2x3090", "vllm-1x4090"],
)
def test_the_manifests_are_valid_and_run_the_argv_of_launch_sh(cli, tmp_path, args, kind):
    out = tmp_path / "o"
    result = cli(*args, "--k8s", "--out", str(out))
    assert result.code == 0, result.err
    docs = documents(out)
    kinds = [d["kind"] for d in docs]
    assert kind in kinds and "Service" in kinds
    for doc in docs:
        validate(doc)
    container = json.loads((out / "plan.json").read_text(encoding="utf-8"))["container"]
    specs = pod_specs(docs)
    for node in container["nodes"]:
        spec = specs["single" if node["role"] == "single" else ("head" if node["rank"] == 0 else "worker")]
        engine = next(c for c in spec["containers"] if c["name"] == "engine")
        assert [as_launched(a, node["rank"]) for a in engine["args"]] == node["args"]
        assert engine["image"] == container["image"]
        gpus = engine["resources"]["limits"]["nvidia.com/gpu"]
        assert gpus == json.loads((out / "plan.json").read_text())["plans"][0]["gpus"]
        shm = next(v for v in spec["volumes"] if v["name"] == "dshm")
        assert shm["emptyDir"] == {"medium": "Memory", "sizeLimit": container["shm_size"].upper() + "i"}
        assert spec.get("hostIPC", False) == container["ipc_host"]
        assert spec.get("hostNetwork", False) == container["host_network"]
        probes = {"startupProbe", "readinessProbe", "livenessProbe"} & set(engine)
        assert probes == (set() if node["role"] == "worker" else {"startupProbe", "readinessProbe", "livenessProbe"})
    kustomization = yaml.safe_load((out / "k8s" / "kustomization.yaml").read_text(encoding="utf-8"))
    assert all((out / "k8s" / name).is_file() for name in kustomization["resources"])
    readme = (out / "k8s" / "README.md").read_text(encoding="utf-8")
    assert "kubectl apply -k k8s/" in readme
    if kind == "LeaderWorkerSet":
        assert docs[kinds.index(kind)]["spec"]["leaderWorkerTemplate"]["size"] == len(container["nodes"])
        assert "LeaderWorkerSet controller" in readme


def test_the_weights_volume_is_sized_from_the_checkpoint_and_filled_once(cli, tmp_path):
    out = tmp_path / "o"
    assert cli(*SGLANG_2xGB10, "--k8s", "--out", str(out)).code == 0
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    docs = {d["kind"]: d for d in documents(out)}
    claim = docs["PersistentVolumeClaim"]["spec"]
    size_gib = int(claim["resources"]["requests"]["storage"].removesuffix("Gi"))
    assert plan["container"]["weights_bytes"] <= size_gib * 2**30 <= plan["container"]["weights_bytes"] * 1.2
    assert claim["accessModes"] == ["ReadWriteMany"]  # both nodes mount it
    job = docs["Job"]["spec"]["template"]["spec"]["containers"][0]
    script = job["command"][2]
    assert f"hf download {plan['plans'][0]['repo']} --local-dir /models/{plan['container']['model_dir']}" in script
    assert job["env"] == [
        {"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": "hf-token", "key": "token", "optional": True}}}
    ]
    assert "hf_" not in json.dumps(docs)  # no token is ever written
    waits = pod_specs([docs["LeaderWorkerSet"]])["worker"]["initContainers"][0]
    assert ".recipegen-downloaded" in waits["command"][2] and ".recipegen-downloaded" in script


def test_an_existing_folder_gets_the_same_manifests_and_keeps_its_files(cli, tmp_path):
    with_k8s, plain = tmp_path / "a", tmp_path / "b"
    assert cli(*SGLANG_2xGB10, "--k8s", "--out", str(with_k8s)).code == 0
    assert cli(*SGLANG_2xGB10, "--out", str(plain)).code == 0
    launch = (plain / "launch.sh").read_text()
    result = cli("k8s", str(plain))
    assert result.code == 0, result.err
    assert "kubectl apply -k" in result.out
    for name in ("engine.yaml", "weights.yaml", "kustomization.yaml", "README.md"):
        assert (plain / "k8s" / name).read_text() == (with_k8s / "k8s" / name).read_text()
    assert (plain / "launch.sh").read_text() == launch
    # an existing claim: no volume, no Job, the engine mounts the claim
    assert cli("k8s", str(plain), "--claim", "shared-models").code == 0
    assert not (plain / "k8s" / "weights.yaml").exists()
    volume = pod_specs(documents(plain))["head"]["volumes"][0]
    assert volume["persistentVolumeClaim"] == {"claimName": "shared-models", "readOnly": True}
    # the folder is still recipegen's: a regenerate with --force replaces it all and removes k8s/
    assert cli(*SGLANG_2xGB10, "--out", str(plain), "--force").code == 0
    assert not (plain / "k8s").exists()


def test_bad_input_is_one_line(cli, tmp_path):
    out = tmp_path / "o"
    assert cli(*SGLANG_2xGB10, "--out", str(out)).code == 0
    bad = cli("k8s", str(out), "--claim", "Not_A_Name")
    assert bad.code == 2 and "--claim 'Not_A_Name' is not a Kubernetes object name" in bad.err
    (out / "k8s").mkdir()
    (out / "k8s" / "engine.yaml").write_text("mine")
    clash = cli("k8s", str(out))
    assert clash.code == 4 and "Traceback" not in clash.err
    assert (out / "k8s" / "engine.yaml").read_text() == "mine"
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "plan.json").write_text("{}")
    assert cli("k8s", str(foreign)).code == 2


HOSTILE = "$(touch /tmp/canary) ${HOME} `id` 'q' \"d\" $$ x: y\n- z #c"


def test_hostile_values_stay_literal(cli, tmp_path):
    out = tmp_path / "o"
    assert cli(*SGLANG_2xGB10, "--out", str(out)).code == 0
    plan = json.loads((out / "plan.json").read_text(encoding="utf-8"))
    hostile = copy.deepcopy(plan)
    c = hostile["container"]
    c["env"] = [{"name": "X", "value": HOSTILE}]
    for node in c["nodes"]:
        node["args"] = [*node["args"], "--served-model-name", HOSTILE]
    hostile["plans"][0]["build"] = "a/b:c" * 40
    files = kubernetes_files(hostile)
    docs = [d for name in ("k8s/weights.yaml", "k8s/engine.yaml") for d in yaml.safe_load_all(files[name]) if d]
    for doc in docs:
        validate(doc)  # label values stay within the label rules
    specs = pod_specs(docs)
    for role, rank in (("head", 0), ("worker", 1)):
        engine = specs[role]["containers"][0]
        assert as_launched(engine["args"][-1], rank) == HOSTILE
        assert engine["env"][0] == {"name": "X", "value": HOSTILE.replace("$", "$$")}
