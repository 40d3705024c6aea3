"""Architecture rules (data/architectures.yaml): which config.json layout each model class uses.

Data, not per-model code: a new checkpoint of a known class is read the day it appears, and a
class without a rule is named plainly instead of guessed.
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources
from typing import Literal

import yaml
from pydantic import Field, ValidationError

from ..catalog.schema.common import KernelOp, Sources
from ..catalog.schema.strict_model import StrictModel
from ..errors import RecipegenError

DerivableKind = Literal["gqa", "mla", "dsa", "dsa_nope", "dsv4"]
LinearKind = Literal["kda", "gdn", "lightning", "mamba1", "mamba2", "short_conv"]


class ExtraNeed(StrictModel):
    op: KernelOp
    why: str


class Rule(StrictModel):
    architecture: str
    attention: DerivableKind
    gguf_arch: str | None = None
    linear_attention: LinearKind | None = Field(
        default=None,
        description="hybrid classes: the recurrent-state layers beside the attention layers (kda: Kimi delta "
        "attention, gdn: gated DeltaNet, lightning: MiniMax lightning attention, mamba1 / mamba2: selective "
        "state-space layers, short_conv: LFM2's gated short convolutions); their fields are fixed per kind",
    )
    extra_needs: list[ExtraNeed] = Field(default_factory=list)
    nope_interval_default: int | None = Field(
        default=None,
        ge=1,
        description="chunked attention: RoPE layers attend within attention_chunk_size, NoPE layers globally; "
        "NoPE layers are the 0s of no_rope_layers, or every n-th layer when the config has no list",
    )
    shared_experts: int | None = Field(default=None, ge=0, description="shared experts the class always has")
    moe_every_field: str | None = Field(default=None, description="config field: MoE on every k-th layer")
    dense_mlp_field: str | None = Field(default=None, description="config field: MLP width of the dense layers")
    defaults: dict[str, int | bool] = Field(
        default_factory=dict,
        description="the class's own defaults (its transformers config class) for fields a config.json may omit; "
        "a value the file states always wins",
    )
    attention_free: bool = Field(
        default=False, description="a pure state-space stack (Mamba, Mamba-2): no attention layer, no KV cache"
    )
    generic: bool = Field(default=False, description="made by the generic rule (generic.py), not listed here")
    sources: Sources = Field(min_length=1)


class VisionDefaults(StrictModel):
    model_type: str = Field(description="the vision_config's model_type these defaults belong to")
    defaults: dict[str, int | str] = Field(
        min_length=1,
        description="its transformers vision config class's defaults for fields a vision_config may omit; a "
        "value the file states always wins",
    )
    sources: Sources = Field(min_length=1)


class Rules(StrictModel):
    aic: str = Field(description="YAML anchor holder: the config.json collection most rules cite")
    rules: list[Rule] = Field(min_length=1)
    vision_defaults: list[VisionDefaults] = Field(default_factory=list)


@lru_cache(maxsize=1)
def _parsed() -> Rules:
    text = resources.files("recipegen.data").joinpath("architectures.yaml").read_text(encoding="utf-8")
    try:
        return Rules.model_validate(yaml.safe_load(text))
    except ValidationError as exc:  # shipped data: a broken file is a packaging bug, said in one line
        raise RecipegenError(
            f"data/architectures.yaml is invalid: {exc.errors()[0]['msg']}", "reinstall recipegen"
        ) from None


@lru_cache(maxsize=1)
def rules() -> dict[str, Rule]:
    return {r.architecture: r for r in _parsed().rules}


@lru_cache(maxsize=1)
def vision_defaults() -> dict[str, dict[str, int | str]]:
    """The vision config classes' own defaults, by the vision_config's model_type."""
    return {v.model_type: v.defaults for v in _parsed().vision_defaults}
