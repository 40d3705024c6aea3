"""An artifact folder as `up`, `preflight`, `down`, `status` and `logs` read it: its plan.json."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .contract import SCHEMA
from .errors import RecipegenError


@dataclass(frozen=True)
class Folder:
    path: Path
    plan: dict[str, Any]
    container: dict[str, Any]

    @property
    def multi_node(self) -> bool:
        return len(self.container["nodes"]) > 1

    def node(self, rank: int) -> dict[str, Any]:
        for node in self.container["nodes"]:
            if node["rank"] == rank:
                return dict(node)
        ranks = ", ".join(str(n["rank"]) for n in self.container["nodes"])
        raise RecipegenError(f"{self.path}: no node with rank {rank}", f"this plan has ranks {ranks}")


def load(path: Path) -> Folder:
    plan_file = path / "plan.json"
    if not plan_file.is_file():
        raise RecipegenError(
            f"{plan_file} not found", "give a folder written by `recipegen --gpu … --model …` (it holds plan.json)"
        )
    try:
        plan = json.loads(plan_file.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise RecipegenError(
            f"{plan_file}: not readable JSON ({exc})", "regenerate the folder with recipegen"
        ) from None
    if not isinstance(plan, dict) or plan.get("schema") != SCHEMA:
        raise RecipegenError(f"{plan_file}: schema is not {SCHEMA}", "regenerate the folder with this recipegen")
    container = plan.get("container")
    if not isinstance(container, dict) or not container.get("nodes"):
        raise RecipegenError(
            f"{plan_file}: field container is missing (written by an older recipegen)",
            "regenerate the folder with this recipegen",
        )
    return Folder(path, plan, container)
