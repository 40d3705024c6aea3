import subprocess
from functools import lru_cache


def get_nvgpu_memory_capacity():
    """MiB of the smallest GPU, from nvidia-smi, with no fallback when the tool is missing (SGLang 0.5.9 and older)."""
    try:
        result = subprocess.run(
            ["nvidia-smi", "--query-gpu=memory.total", "--format=csv,noheader,nounits"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        if result.returncode != 0:
            raise RuntimeError(f"nvidia-smi error: {result.stderr.strip()}")
        return min(float(line) for line in result.stdout.strip().split("\n"))
    except FileNotFoundError:
        raise RuntimeError("nvidia-smi not found. Ensure NVIDIA drivers are installed and accessible.") from None


@lru_cache(maxsize=1)
def get_numa_node(device):
    """A query whose failure the release swallows (its NUMA detection falls back to none)."""
    result = subprocess.run(["nvidia-smi", "topo", "-C", "-i", str(device)], capture_output=True, text=True)
    return None if result.returncode != 0 else result.stdout.strip()
