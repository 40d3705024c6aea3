"""The pydantic base for data that is only ever read through validation, never from the catalog cache.

Release diffs (`extends:` files: which fields a diff gives matters, `model_fields_set`), the
architecture rules and the published speed measurements. Catalog entries are records (records.py).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, str_strip_whitespace=True, defer_build=True)
