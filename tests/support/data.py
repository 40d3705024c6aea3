"""Where the test data lives: copies inside the repository, each with its provenance (data/PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data"  # copies with their provenance (data/PROVENANCE.md); nothing outside the repo
COMPOSE_SPEC = DATA / "compose-spec" / "compose-spec.json"
ORACLE = DATA / "oracle"
