"""Single fields of a checkpoint's config.json, read as untrusted input: a plain identifier or None, an
integer or None, and the language model's own fields of a multimodal config (text_config).

Shared by the readers of the weight format (weightformat), the sizes (sizes), the layout (layouts) and the
derivation that puts them together (derive).
"""

from __future__ import annotations

import re
from typing import Any

_WORD = re.compile(r"^[A-Za-z0-9][\w.+-]{0,63}$")


def word(value: object) -> str | None:
    """A config.json string that is a plain identifier, else None: free text from a checkpoint never
    travels into plans or artifacts."""
    text = str(value) if isinstance(value, (str, int, float)) else ""
    return text if _WORD.match(text) else None


def as_int(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """The language model's own fields: a multimodal config nests them under text_config."""
    inner = config.get("text_config")
    return {**config, **inner} if isinstance(inner, dict) else config


def slug(text: str) -> str:
    """An id made of a name: lower case, runs of other characters as one '-'."""
    return re.sub(r"[^a-z0-9.]+", "-", text.casefold()).strip("-.") or "model"
