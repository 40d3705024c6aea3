"""The examples every command's --help ends with: real requests against the built-in catalog, each one a
command line the command's own parser accepts (tests/cli/test_help_examples.py runs them through it)."""

FOLDER = "./glm-5.2-8xa100-80gb"  # the folder `recipegen --gpu sm80 --model glm-5.2` writes

EXAMPLES: dict[str, tuple[str, ...]] = {
    "recipegen": (
        "recipegen --gpu sm80 --model glm-5.2",
        "recipegen --gpu rtx-4090 --gpus 1 --model qwen3-32b --out ./qwen3 --force",
        "recipegen --gpu h200 --gpus 8 --model glm-5.2 --k8s",
    ),
    "generate": (
        "recipegen generate --gpu sm80 --model glm-5.2",
        "recipegen generate --gpu h200 --gpus 8 --model glm-5.2 --format json",
    ),
    "explain": (
        "recipegen explain --gpu h200 --gpus 8 --model glm-5.2",
        "recipegen explain --gpu sm80 --model glm-5.2 --verbose",
        "recipegen explain --gpu rtx-4090 --gpus 1 --model glm-5.2 --host-memory 256",
    ),
    "matrix": (
        "recipegen matrix --model glm-5.2 --model qwen3-32b",
        "recipegen matrix --model gpt-oss-120b --target 1xh100 --target 8xa100-80gb",
        "recipegen matrix --format html > matrix.html",
    ),
    "list": (
        "recipegen list models",
        "recipegen list hardware --format json",
    ),
    "validate": (
        "recipegen validate",
        "recipegen validate ./my-recipes",
    ),
    "coverage": (
        "recipegen coverage",
        "recipegen coverage --format json",
    ),
    "diagnose": (
        "docker logs glm-5.2 2>&1 | recipegen diagnose -",
        "recipegen diagnose engine.log --gpu sm80 --model glm-5.2",
    ),
    "history": (
        "recipegen history --gpu sm80 --gpus 8 --model glm-5.2",
        "recipegen history --gpu h200 --model llama-3.3-70b --engine vllm --format json",
    ),
    "inspect": (
        "recipegen inspect Qwen/Qwen3-32B",
        "recipegen inspect ~/models/Qwen3-32B --format yaml > qwen3-32b.yaml",
    ),
    "lint": (
        "recipegen lint --gpu rtx-4090 --gpus 1 -- vllm serve Qwen/Qwen3-32B",
        f"recipegen lint {FOLDER}/launch.sh --gpu sm80",
        "recipegen lint --container glm-5.2 --gpu sm80",
    ),
    "detect": (
        "recipegen detect",
        "recipegen detect --format json",
    ),
    "preflight": (
        f"recipegen preflight {FOLDER}",
        f"recipegen preflight {FOLDER} --model-dir /data/models --port 8001",
    ),
    "up": (
        f"recipegen up {FOLDER}",
        f"recipegen up {FOLDER} --model-dir /data/models --timeout 3600",
    ),
    "down": (f"recipegen down {FOLDER}",),
    "status": (f"recipegen status {FOLDER}", f"recipegen status {FOLDER} --format json"),
    "logs": (f"recipegen logs {FOLDER} --tail 50", f"recipegen logs {FOLDER} -f"),
    "verify": (
        "recipegen verify --url http://localhost:8000",
        f"recipegen verify --url http://localhost:8000 --model glm-5.2 --dir {FOLDER}",
    ),
    "k8s": (f"recipegen k8s {FOLDER}", f"recipegen k8s {FOLDER} --claim models-pvc"),
}


def epilog(command: str) -> str:
    """The Examples section of a command's --help; "\\b" keeps click from re-wrapping the lines."""
    lines = "\n".join(f"  {line}" for line in EXAMPLES[command])
    return f"Examples:\n\n\b\n{lines}"
