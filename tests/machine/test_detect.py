"""`recipegen detect` and `--gpu auto` against recorded real nvidia-smi outputs (replayed by a fake
nvidia-smi first on PATH) and a fake NVML module."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from tests.support.data import DATA, REPO

SMI = DATA / "nvidia-smi"


@pytest.fixture
def smi(tmp_path: Path):  # type: ignore[no-untyped-def]
    """Returns env making `nvidia-smi` replay the named capture."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "nvidia-smi").symlink_to(REPO / "tests" / "support" / "fake_nvidia_smi.py")

    def env(sample: str) -> dict[str, str]:
        return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "FAKE_SMI_DIR": str(SMI / sample)}

    return env


@pytest.fixture(autouse=True)
def _no_real_nvml(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml → ImportError unless a test fakes it


def test_detect_h200_from_nvidia_smi(cli, smi):
    r = cli("detect", "--format", "json", env=smi("h200"))
    assert r.code == 0, r.err
    d = r.json()
    assert (d["source"], d["driver"], d["cuda"], d["count"], d["link"]) == (
        "nvidia-smi",
        "590.48.01",
        "13.1",
        1,
        "single GPU",
    )
    gpu = d["gpus"][0]
    assert (gpu["name"], gpu["compute_capability"], gpu["memory_mib"], gpu["mig"], gpu["hardware"]) == (
        "NVIDIA H200",
        "9.0",
        143771,
        "Disabled",
        "h200",
    )


def test_detect_h100_maps_by_its_name_and_memory(cli, smi):
    r = cli("detect", env=smi("h100"))
    assert r.code == 0, r.err
    line = next(x for x in r.out.splitlines() if x.startswith("  GPU 0:"))
    # "H100 80GB HBM3" is the SXM board's name (the PCIe card reports "NVIDIA H100 PCIe"): the name decides where
    # capability and memory alone tie with the PCIe card
    assert "NVIDIA H100 80GB HBM3 → h100-sxm (by name and its 79.6 GiB, as NVIDIA H100 SXM 80GB)" in line


def test_a_name_the_catalog_lacks_maps_by_capability_and_memory_and_names_the_ties(cli, smi, tmp_path):
    folder = tmp_path / "renamed"
    folder.mkdir()
    for file in ("query.csv", "smi.txt", "topo.txt"):
        (folder / file).write_text((SMI / "h100" / file).read_text(encoding="utf-8").replace("H100 80GB HBM3", "X1"))
    r = cli("detect", env={**smi("h100"), "FAKE_SMI_DIR": str(folder)})
    line = next(x for x in r.out.splitlines() if x.startswith("  GPU 0:"))
    # parts that tie on memory: the one sm90 stands for (as --gpu sm90 resolves), the others named
    assert "NVIDIA X1 → h100-sxm (sm90 with 79.6 GiB is NVIDIA H100 SXM 80GB (also " in line
    assert "h100-pcie" in line and "pass --gpu to pick" in line


def test_detect_shows_mig_mode(cli, smi):
    d = cli("detect", "--format", "json", env=smi("h200-mig")).json()
    assert d["gpus"][0]["mig"] == "Enabled"


def unlisted(tmp_path: Path) -> Path:
    """The RTX 4080 SUPER capture with its memory total edited to a size no sm89 part in the catalog
    has (10 GiB): neither its name (the catalog's RTX 4080 SUPER has 16 GiB) nor its capability and memory match."""
    folder = tmp_path / "unlisted-sm89"
    folder.mkdir()
    for name in ("query.csv", "smi.txt", "topo.txt"):
        text = (SMI / "rtx-4080-super" / name).read_text(encoding="utf-8")
        (folder / name).write_text(text.replace("16376MiB", "10234MiB").replace("16376 MiB", "10234 MiB"))
    return folder


def test_a_gpu_is_matched_by_its_marketing_name_before_capability_and_memory(cli, smi):
    # five sm89 parts hold 16 GiB (RTX 4080, 4080 SUPER, 4070 Ti SUPER, 4060 Ti 16GB, RTX 2000 Ada): the name decides
    r = cli("detect", env=smi("rtx-4080-super"))
    assert r.code == 0, r.err
    assert "NVIDIA GeForce RTX 4080 SUPER → rtx-4080-super (by name);" in r.out


@pytest.mark.parametrize(("name", "mib", "expected"), [
    ("NVIDIA GeForce RTX 4060 Ti", "16380MiB", "rtx-4060-ti-16gb"),  # one name, two memory sizes
    ("NVIDIA GeForce RTX 4060 Ti", "8188MiB", "rtx-4060-ti-8gb"),
    ("NVIDIA GeForce RTX 5060 Ti", "16303MiB", "rtx-5060-ti-16gb"),
    ("NVIDIA GeForce RTX 3090 Ti", "24564MiB", "rtx-3090-ti"),
    ("NVIDIA GeForce RTX 4070 SUPER", "12282MiB", "rtx-4070-super"),
    ("NVIDIA RTX 4000 Ada Generation", "20475MiB", "rtx-4000-ada"),
    ("NVIDIA TITAN RTX", "24576MiB", "titan-rtx"),
])  # fmt: skip
def test_nvidia_smi_marketing_names_map_to_their_part(cli, smi, tmp_path, name, mib, expected):
    folder = tmp_path / "edited"
    folder.mkdir()
    for file in ("query.csv", "smi.txt", "topo.txt"):
        text = (SMI / "rtx-4080-super" / file).read_text(encoding="utf-8")
        text = text.replace("NVIDIA GeForce RTX 4080 SUPER", name).replace("16376MiB", mib)
        (folder / file).write_text(text.replace("16376 MiB", mib.replace("MiB", " MiB")))
    if expected == "titan-rtx":  # a Turing card reports compute capability 7.5
        (folder / "query.csv").write_text((folder / "query.csv").read_text().replace(", 8.9,", ", 7.5,"))
    d = cli("detect", "--format", "json", env={**smi("rtx-4080-super"), "FAKE_SMI_DIR": str(folder)}).json()
    assert d["gpus"][0]["hardware"] == expected, d["gpus"][0]


def test_unknown_gpu_is_shown_with_its_facts_and_a_hint(cli, smi, tmp_path):
    r = cli("detect", env={**smi("rtx-4080-super"), "FAKE_SMI_DIR": str(unlisted(tmp_path))})
    assert r.code == 0, r.err
    assert "NVIDIA GeForce RTX 4080 SUPER → not in the catalog" in r.out
    assert "sm 8.9, 10234 MiB" in r.out and "driver 595.71.05, CUDA 13.2" in r.out
    assert "add it as a hardware/ recipe" in r.out


def test_no_gpu_is_one_line_and_exit_2(cli, tmp_path):
    r = cli("detect", env={"PATH": str(tmp_path)})
    assert r.code == 2
    assert r.err.count("\n") == 1 and r.err.startswith("error: no NVIDIA GPU found on this machine")


def test_gpu_auto_is_the_default_and_is_said(cli, smi, tmp_path):
    out = tmp_path / "out"
    r = cli("--model", "glm-5.2", "--out", str(out), env=smi("h200-mig"))
    assert r.code == 0, r.err
    understood = next(line for line in r.out.splitlines() if "understood:" in line)
    assert "--gpu auto → detected 1x NVIDIA H200 here via nvidia-smi" in understood
    assert "MIG is enabled" in understood
    assert "recipegen --gpu h200 --model glm-5.2" in (out / "launch.sh").read_text()


def test_gpu_auto_on_an_unknown_gpu_says_to_add_it(cli, smi, tmp_path):
    env = {**smi("rtx-4080-super"), "FAKE_SMI_DIR": str(unlisted(tmp_path))}
    r = cli("--gpu", "auto", "--model", "glm-5.2", "--out", str(tmp_path / "o"), env=env)
    assert r.code == 2
    assert "NVIDIA GeForce RTX 4080 SUPER is not in the catalog" in r.err
    assert not (tmp_path / "o").exists()


def test_no_gpu_and_no_flag_keeps_asking_for_gpu(cli, tmp_path):
    r = cli("--model", "glm-5.2", env={"PATH": str(tmp_path)})
    assert r.code == 2 and "--gpu is required" in r.err and "no NVIDIA GPU was detected" in r.err
    r = cli("--gpu", "auto", "--model", "glm-5.2", env={"PATH": str(tmp_path)})
    assert r.code == 2 and "no NVIDIA GPU found" in r.err


class NVMLError_NotSupported(Exception):
    pass


def fake_nvml(gpus: list[dict[str, object]], nvlink: bool) -> types.ModuleType:
    """pynvml's API surface that localgpu uses; a missing fact raises NotSupported as NVML does."""
    mod = types.ModuleType("pynvml")

    def fact(key: str):  # type: ignore[no-untyped-def]
        def get(h, *_):  # type: ignore[no-untyped-def]
            value = gpus[h][key]
            if value is None:
                raise NVMLError_NotSupported("Not Supported")
            return value

        return get

    mod.nvmlInit = lambda: None  # type: ignore[attr-defined]
    mod.nvmlShutdown = lambda: None  # type: ignore[attr-defined]
    mod.nvmlDeviceGetCount = lambda: len(gpus)  # type: ignore[attr-defined]
    mod.nvmlDeviceGetHandleByIndex = lambda i: i  # type: ignore[attr-defined]
    mod.nvmlDeviceGetName = fact("name")  # type: ignore[attr-defined]
    mod.nvmlDeviceGetCudaComputeCapability = fact("cc")  # type: ignore[attr-defined]
    mod.nvmlDeviceGetMemoryInfo = fact("memory")  # type: ignore[attr-defined]
    mod.nvmlDeviceGetMigMode = fact("mig")  # type: ignore[attr-defined]
    mod.nvmlDeviceGetPciInfo = fact("pci")  # type: ignore[attr-defined]
    mod.nvmlDeviceGetNvLinkState = lambda h, link: 1 if nvlink else 0  # type: ignore[attr-defined]
    mod.nvmlSystemGetDriverVersion = lambda: "580.95.05"  # type: ignore[attr-defined]
    mod.nvmlSystemGetCudaDriverVersion = lambda: 13000  # type: ignore[attr-defined]
    return mod


def test_nvml_path_gb10_without_memory_figure(cli, monkeypatch):
    gb10 = {"name": b"NVIDIA GB10", "cc": (12, 1), "memory": None, "mig": None, "pci": None}
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([gb10], nvlink=False))
    r = cli("detect", "--format", "json", env={"PATH": "/nonexistent"})
    assert r.code == 0, r.err
    d = r.json()
    assert (d["source"], d["driver"], d["cuda"]) == ("nvml", "580.95.05", "13.0")
    assert d["gpus"][0]["memory_mib"] is None and d["gpus"][0]["hardware"] == "gb10"


def test_nvml_path_eight_a100_over_nvlink(cli, monkeypatch):
    mem = types.SimpleNamespace(total=81920 * 1024 * 1024)
    a100 = {"name": "NVIDIA A100-SXM4-80GB", "cc": (8, 0), "memory": mem, "mig": (0, 0), "pci": None}
    monkeypatch.setitem(sys.modules, "pynvml", fake_nvml([a100] * 8, nvlink=True))
    d = cli("detect", "--format", "json").json()
    assert d["count"] == 8 and d["link"] == "nvlink"
    assert {g["hardware"] for g in d["gpus"]} == {"a100-80gb"}
    assert d["gpus"][0]["mig"] == "Disabled" and d["gpus"][0]["memory_mib"] == 81920


@pytest.mark.parametrize(("sample", "link"), [("8x-h100-nvlink.txt", "nvlink"), ("8x-rtx-4090-pcie.txt", "pcie")])
def test_nvlink_or_pcie_from_recorded_topology(sample, link):
    from recipegen.machine.localgpu import link_from_topology

    assert link_from_topology((SMI / "topo" / sample).read_text(), 8) == link
    assert link_from_topology("", 8) is None  # nothing to read: unknown, not a guess
    assert link_from_topology(None, 1) == "single GPU"


def test_a_driver_without_compute_cap_still_maps_by_name(cli, smi):
    # nvidia-smi before R510 refuses the compute_cap field (huggingface/candle#733, driver 470)
    env = smi("h200") | {"FAKE_SMI_UNKNOWN_FIELDS": "compute_cap"}
    d = cli("detect", "--format", "json", env=env).json()
    gpu = d["gpus"][0]
    assert gpu["compute_capability"] is None and gpu["hardware"] == "h200" and gpu["memory_mib"] == 143771
    env = smi("rtx-4080-super") | {"FAKE_SMI_UNKNOWN_FIELDS": "compute_cap"}
    assert cli("detect", "--format", "json", env=env).json()["gpus"][0]["hardware"] == "rtx-4080-super"


def test_a_driver_without_compute_cap_and_a_name_the_catalog_lacks_says_so(cli, smi, tmp_path):
    folder = tmp_path / "rtx-4060"
    folder.mkdir()
    for file in ("query.csv", "smi.txt", "topo.txt"):
        text = (SMI / "rtx-4080-super" / file).read_text(encoding="utf-8").replace("RTX 4080 SUPER", "RTX 4060")
        (folder / file).write_text(text.replace("16376MiB", "8188MiB").replace("16376 MiB", "8188 MiB"))
    env = smi("rtx-4080-super") | {"FAKE_SMI_UNKNOWN_FIELDS": "compute_cap", "FAKE_SMI_DIR": str(folder)}
    r = cli("detect", env=env)
    assert "not in the catalog (the driver does not report a compute capability" in r.out
