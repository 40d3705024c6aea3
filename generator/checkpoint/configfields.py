"""Single fields of a checkpoint's config.json, read as untrusted input: a plain identifier or None, an
integer or None, and the language model's own fields of a multimodal config (text_config and its kin).

Shared by the readers of the weight format (weightformat), the sizes (sizes), the layout (layouts) and the
derivation that puts them together (derive).
"""

from __future__ import annotations

import math
import re
from typing import Any, Literal

_WORD = re.compile(r"^[A-Za-z0-9][\w.+-]{0,63}$")


def word(value: object) -> str | None:
    """A config.json string that is a plain identifier, else None: free text from a checkpoint never
    travels into plans or artifacts."""
    text = str(value) if isinstance(value, (str, int, float)) else ""
    return text if _WORD.match(text) else None


def as_int(value: Any) -> int | None:
    """A whole number, or None: a bool, a string, NaN, an infinity or a fraction is no count."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    if isinstance(value, float) and not (math.isfinite(value) and value == int(value)):
        return None
    return int(value)


# where a multimodal config nests its language model: transformers' text_config; InternVL's remote-code
# llm_config (the text model vLLM's internvl.py builds beside the vision tower); DeepSeek-VL2 / OCR's
# language_config (the text_config vLLM's DeepseekVLV2Config makes of it)
# language_config (the text_config vLLM's DeepseekVLV2Config makes of it); Ultravox's wrapped_model_config (the
# text model vLLM's UltravoxConfig keeps; its text_config property returns it)
TEXT_CONFIG_KEYS = ("text_config", "llm_config", "language_config", "wrapped_model_config")
# an omni model's language model sits one level deeper, in the thinker (transformers' Qwen2_5OmniConfig and
# Qwen3OmniMoeConfig: thinker_config.text_config; vLLM's qwen2_5_omni_thinker.py serves the thinker alone)
PART_KEYS = ("thinker_config",)


def text_config(config: dict[str, Any]) -> dict[str, Any]:
    """The language model's own fields: a multimodal config nests them (TEXT_CONFIG_KEYS, inside PART_KEYS for
    an omni model). A field written as null is left out: transformers 5's to_dict writes every attribute, set or
    not, and an unset one says nothing about the layout."""
    merged = {k: v for k, v in config.items() if v is not None}
    for keys in (PART_KEYS, TEXT_CONFIG_KEYS):
        inner = next((merged[k] for k in keys if isinstance(merged.get(k), dict)), None)
        if inner is not None:
            merged |= {k: v for k, v in inner.items() if v is not None}
    return merged


def slug(text: str) -> str:
    """An id made of a name: lower case, runs of other characters as one '-'."""
    return re.sub(r"[^a-z0-9.]+", "-", text.casefold()).strip("-.") or "model"


RopeKey = Literal["type", "rope_type"]
ROPE_KEYS: tuple[RopeKey, ...] = ("type", "rope_type")


def rope_scaling(config: dict[str, Any]) -> tuple[str, list[RopeKey]] | None:
    """The RoPE scaling type a config asks for and the keys it spells it under (`type`, `rope_type`), from
    rope_scaling or transformers 5's rope_parameters; None without one (or "default": no scaling)."""
    raw = config.get("rope_scaling")
    if not isinstance(raw, dict):
        raw = config.get("rope_parameters")
    if not isinstance(raw, dict):
        return None
    keys = [k for k in ROPE_KEYS if word(raw.get(k)) is not None]
    kind = word(raw.get("rope_type")) or word(raw.get("type"))
    return (kind, keys) if kind is not None and kind != "default" else None
