import os

current_platform = None  # vLLM infers it; with no GPU it fails ("Failed to infer device type")

if os.environ.get("STAND_IN_SELECTOR") == "0.6.3":  # resolved at import, as 0.6.x: no GPU here, so not CUDA
    from vllm.platforms.interface import UnspecifiedPlatform

    current_platform = UnspecifiedPlatform()
