__version__ = "9.9.9"

import os as _os

if _os.environ.get("STAND_IN_SELECTOR") == "0.6.3":  # 0.6.x imports its engine here, binding current_platform
    import vllm.attention.selector  # noqa: F401
