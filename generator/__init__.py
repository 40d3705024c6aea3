"""recipegen: can this open LLM run on these GPUs, why or why not, and exactly how."""

__version__ = "0.1.0"
