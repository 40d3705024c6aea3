"""The catalog's kinds (one folder each under recipes/), named once for the loader and the CLI.

Kept free of heavy imports so the CLI can build its choices without loading pydantic.
"""

from __future__ import annotations

KIND_NAMES: tuple[str, ...] = ("hardware", "engines", "models", "deployments", "fingerprints", "surveys")
