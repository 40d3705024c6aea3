"""`recipegen preflight DIR/k8s`: the manifests against the plan offline, then the cluster through kubectl."""

from __future__ import annotations

import os

import pytest

from tests.support.data import REPO

SGLANG_2xGB10 = ["--gpu", "gb10", "--model", "glm-5.3-flash", "--nodes", "2"]


@pytest.fixture
def folder(cli, tmp_path):
    out = tmp_path / "o"
    assert cli(*SGLANG_2xGB10, "--k8s", "--out", str(out)).code == 0
    return out


@pytest.fixture
def kubectl(tmp_path):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").symlink_to(REPO / "tests" / "support" / "fake_kubectl.py")
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}


def marks(out: str) -> dict[str, str]:
    return {line.split()[1]: line.split()[0] for line in out.splitlines() if len(line.split()) > 1}


def test_offline_the_manifests_match_the_plan(cli, folder):
    result = cli("preflight", str(folder / "k8s"), env={"PATH": "/usr/bin:/bin"})
    assert result.code == 0, result.out + result.err
    seen = marks(result.out)
    assert seen["k8s-argv"] == "✓" and seen["k8s-gpus"] == "✓" and seen["k8s-volume"] == "✓"
    assert seen["k8s-schema"] == "✓"
    assert seen["cluster"] == "–"  # no kubectl: said, not failed


def test_an_edited_manifest_is_caught(cli, folder):
    engine = folder / "k8s" / "engine.yaml"
    engine.write_text(engine.read_text().replace("- --tp-size\n", "- --tp\n"))
    result = cli("preflight", str(folder), "--k8s", env={"PATH": "/usr/bin:/bin"})
    assert result.code == 1
    assert marks(result.out)["k8s-argv"] == "✗"


def test_the_cluster_is_asked_through_kubectl(cli, folder, kubectl):
    crd = "leaderworkersets.leaderworkerset.x-k8s.io"
    ready = cli("preflight", str(folder / "k8s"), env=kubectl | {"FAKE_KUBE_GPUS": "1,1", "FAKE_KUBE_CRDS": crd})
    assert ready.code == 0, ready.out
    assert marks(ready.out)["cluster-gpus"] == "✓" and marks(ready.out)["cluster-lws"] == "✓"
    short = cli("preflight", str(folder / "k8s"), env=kubectl | {"FAKE_KUBE_GPUS": "1,0", "FAKE_KUBE_CRDS": ""})
    assert short.code == 1
    assert marks(short.out)["cluster-gpus"] == "✗" and marks(short.out)["cluster-lws"] == "✗"
    assert "1 node(s) of context test-cluster offer 1 × nvidia.com/gpu; the plan needs 2" in short.out
