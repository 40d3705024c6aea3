"""Preflight of a folder's k8s/: what can be checked without a cluster (the manifests parse, match the plan's
argv, GPUs per node and weights size, and pass the Kubernetes schemas when `kubernetes-validate` is installed),
then, with `kubectl` and a current context, the cluster's GPU nodes and the LeaderWorkerSet CRD."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import yaml

from ..artifacts.folder import Folder
from ..artifacts.kubernetes import FOLDER, GPU_RESOURCE, as_launched
from .preflight import Check, Status

MAX_MANIFEST_BYTES = 4 * 2**20
MAX_KUBECTL_BYTES = 64 * 2**20
KUBECTL_TIMEOUT_S = 20
LWS_CRD = "leaderworkersets.leaderworkerset.x-k8s.io"
K8S_SCHEMA_VERSION = "1.33.0"


def _documents(where: Path) -> tuple[list[dict[str, Any]], str | None]:
    docs: list[dict[str, Any]] = []
    for path in sorted(where.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        try:
            if not path.is_file() or path.stat().st_size > MAX_MANIFEST_BYTES:
                return docs, f"{path} is not a manifest file of at most {MAX_MANIFEST_BYTES // 2**20} MiB"
            loaded = list(yaml.safe_load_all(path.read_text(encoding="utf-8")))
        except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
            return docs, f"{path} does not parse ({type(exc).__name__})"
        docs += [d for d in loaded if isinstance(d, dict)]
    return docs, None


def _pods(docs: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """(role, pod spec) of the engine workload: single, or head and worker."""
    for doc in docs:
        spec = doc.get("spec") or {}
        if doc.get("kind") == "Deployment":
            return [("single", spec["template"]["spec"])]
        if doc.get("kind") == "LeaderWorkerSet":
            t = spec["leaderWorkerTemplate"]
            return [("head", t["leaderTemplate"]["spec"]), ("worker", t["workerTemplate"]["spec"])]
    return []


def _plan_checks(folder: Folder, docs: list[dict[str, Any]]) -> list[Check]:
    c = folder.container
    plan = folder.plan["plans"][0]
    pods = _pods(docs)
    if not pods:
        return [Check("k8s-workload", "fail", "no Deployment or LeaderWorkerSet in k8s/", "run `recipegen k8s DIR`")]
    out = []
    by_role = {"single": 0, "head": 0, "worker": 1}
    mismatched = []
    for role, pod in pods:
        engine: dict[str, Any] = next((x for x in pod.get("containers", []) if x.get("name") == "engine"), {})
        node = next((n for n in c["nodes"] if n["rank"] == by_role[role]), None)
        args = [as_launched(str(a), by_role[role]) for a in engine.get("args", [])]
        if node is None or args != node["args"]:
            mismatched.append(role)
        gpus = (engine.get("resources") or {}).get("limits", {}).get(GPU_RESOURCE)
        if str(gpus) != str(plan["gpus"]):
            out.append(
                Check(
                    "k8s-gpus",
                    "fail",
                    f"the {role} pod asks for {gpus} GPU(s); the plan runs on {plan['gpus']} per node",
                    "regenerate k8s/ with `recipegen k8s DIR`",
                )
            )
    if mismatched:
        out.append(
            Check(
                "k8s-argv",
                "fail",
                f"the {', '.join(mismatched)} pod's args differ from launch.sh's (plan.json)",
                "regenerate k8s/ with `recipegen k8s DIR`",
            )
        )
    else:
        out.append(Check("k8s-argv", "ok", "every pod runs launch.sh's engine argv"))
    if not any(x.name == "k8s-gpus" for x in out):
        out.append(Check("k8s-gpus", "ok", f"{plan['gpus']} GPU(s) per pod, {plan['nodes']} pod(s), as planned"))
    claims = [d for d in docs if d.get("kind") == "PersistentVolumeClaim"]
    if claims and c.get("weights_bytes"):
        asked = str(claims[0]["spec"]["resources"]["requests"]["storage"])
        gib = int(asked.removesuffix("Gi")) if asked.removesuffix("Gi").isdigit() else 0
        need = c["weights_bytes"] / 2**30
        status: Status = "ok" if gib >= need else "fail"
        out.append(Check("k8s-volume", status, f"the weights claim asks {asked} for {need:.0f} GiB of weights"))
    return out


def _schema_check(docs: list[dict[str, Any]]) -> Check:
    try:
        import kubernetes_validate
    except ImportError:
        return Check(
            "k8s-schema",
            "unknown",
            "kubernetes-validate is not installed here",
            "pip install kubernetes-validate (or run `kubectl apply -k k8s/ --dry-run=server`)",
        )
    for doc in docs:
        if doc.get("kind") == "LeaderWorkerSet":
            continue  # a CRD: its schema is the cluster's (checked below with kubectl)
        try:
            kubernetes_validate.validate(doc, K8S_SCHEMA_VERSION, strict=True)
        except Exception as exc:  # the package raises its own and jsonschema's errors
            name = (doc.get("metadata") or {}).get("name")
            return Check("k8s-schema", "fail", f"{doc.get('kind')} {name}: {str(exc).splitlines()[0][:200]}")
    return Check("k8s-schema", "ok", f"the manifests pass Kubernetes {K8S_SCHEMA_VERSION}'s schemas")


def _kubectl(*args: str) -> tuple[int, str]:
    try:
        proc = subprocess.run(
            ["kubectl", *args], capture_output=True, timeout=KUBECTL_TIMEOUT_S, check=False, stdin=subprocess.DEVNULL
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        return 1, type(exc).__name__
    text = proc.stdout[:MAX_KUBECTL_BYTES].decode("utf-8", "replace")
    return proc.returncode, text if proc.returncode == 0 else proc.stderr[:500].decode("utf-8", "replace")


def _cluster_checks(folder: Folder) -> list[Check]:
    plan = folder.plan["plans"][0]
    if shutil.which("kubectl") is None:
        return [Check("cluster", "skip", "kubectl is not installed here: the cluster was not asked")]
    code, context = _kubectl("config", "current-context")
    if code != 0:
        return [Check("cluster", "skip", "kubectl has no current context: the cluster was not asked")]
    out = []
    code, text = _kubectl("get", "nodes", "-o", "json")
    try:
        nodes = json.loads(text)["items"] if code == 0 else None
    except (ValueError, KeyError, TypeError):
        nodes = None
    if not isinstance(nodes, list):
        out.append(Check("cluster-gpus", "unknown", f"`kubectl get nodes` failed: {text.strip()[:200]}"))
    else:
        fit = 0
        for node in nodes:
            allocatable = ((node or {}).get("status") or {}).get("allocatable") or {}
            try:
                fit += int(str(allocatable.get(GPU_RESOURCE, "0"))) >= int(plan["gpus"])
            except ValueError:
                continue
        need = int(plan["nodes"])
        status: Status = "ok" if fit >= need else "fail"
        out.append(
            Check(
                "cluster-gpus",
                status,
                f"{fit} node(s) of context {context.strip()[:80]} offer {plan['gpus']} × {GPU_RESOURCE}; "
                f"the plan needs {need}",
                "" if status == "ok" else "add GPU nodes, or install the NVIDIA device plugin / GPU Operator",
            )
        )
    if folder.multi_node:
        code, _ = _kubectl("get", "crd", LWS_CRD)
        out.append(
            Check("cluster-lws", "ok", "the LeaderWorkerSet CRD is installed")
            if code == 0
            else Check(
                "cluster-lws",
                "fail",
                "the cluster has no LeaderWorkerSet CRD",
                "install LWS: https://github.com/kubernetes-sigs/lws/releases",
            )
        )
    return out


def k8s_checks(folder: Folder) -> list[Check]:
    where = folder.path / FOLDER
    if not (where / "kustomization.yaml").is_file():
        return [Check("k8s", "fail", f"{where} holds no kustomization.yaml", "write it with `recipegen k8s DIR` first")]
    docs, problem = _documents(where)
    if problem:
        return [Check("k8s", "fail", problem, "regenerate k8s/ with `recipegen k8s DIR`")]
    try:
        checks = _plan_checks(folder, docs)
    except (KeyError, TypeError, AttributeError, IndexError):
        problem = "the manifests lack fields recipegen writes"
        checks = [Check("k8s", "fail", problem, "regenerate k8s/ with `recipegen k8s DIR`")]
    return [*checks, _schema_check(docs), *_cluster_checks(folder)]
