"""Reading the JSON contract (recipegen.resolution/3) as tests ask about it: rows with their text."""

from __future__ import annotations

from typing import Any


def rejections(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The rejected rows, each with its reason's text and its sources resolved from the document's tables."""
    out = []
    for row in doc["rejected"]:
        reason = doc["reasons"][row["reason_id"]]
        out.append(row | {"reason": reason["reason"], "sources": [doc["sources"][s] for s in reason["sources"]]})
    return out


def sources(doc: dict[str, Any], ids: list[str]) -> list[dict[str, Any]]:
    """The source entries a "sources" field of the document names."""
    return [doc["sources"][s] for s in ids]
