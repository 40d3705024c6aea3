"""Every source a user can see is one they can open: a public URL or a file inside the package."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

import recipegen
from tests.support.cli import run_cli

PACKAGE = Path(recipegen.__file__).parent
REPO = PACKAGE.parent
PRIVATE_TEXT = re.compile(
    r"seed[: ]\d{3}|reference:[\w-]+\.md|shared/(?:reference|engine-cli|oracle)|tests/data/oracle"
)


def openable(url: str) -> bool:
    url = url.strip()
    if re.match(r"https?://\S+$", url):
        return True
    return url.startswith("generator/") and (PACKAGE / url.removeprefix("generator/")).is_file()


def urls(obj: Any) -> Iterator[str]:
    if isinstance(obj, dict):
        if isinstance(obj.get("url"), str):
            yield obj["url"]
        for value in obj.values():
            yield from urls(value)
    elif isinstance(obj, list):
        for value in obj:
            yield from urls(value)


def test_every_catalog_source_opens() -> None:
    files = sorted((REPO / "recipes").rglob("*.yaml")) + sorted((PACKAGE / "data").rglob("*.yaml"))
    assert len(files) > 50
    bad = [
        f"{path.relative_to(REPO)}: {url}"
        for path in files
        for url in urls(yaml.safe_load(path.read_text()))
        if not openable(url)
    ]
    assert not bad, "sources a user cannot open:\n" + "\n".join(bad)


def test_no_shipped_text_names_a_private_note() -> None:
    shipped = [p for d in ("recipes", "generator", "templates") for p in (REPO / d).rglob("*")]
    bad = [
        f"{p.relative_to(REPO)}: {m.group(0)}"
        for p in shipped
        if p.suffix in {".yaml", ".py", ".j2", ".md"}
        for m in PRIVATE_TEXT.finditer(p.read_text())
    ]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "args",
    [
        ("--gpu", "sm80", "--gpus", "8", "--model", "glm-5.2"),
        ("--gpu", "gb10", "--gpus", "2", "--model", "glm-5.3-flash"),
        ("--gpu", "a100-80gb", "--gpus", "8", "--model", "deepseek-v4-flash"),
    ],
)
def test_every_output_source_opens(tmp_path: Path, args: tuple[str, ...]) -> None:
    explained = run_cli("explain", *args, "--format", "json")
    assert explained.code == 0, explained.err
    shown = list(urls(explained.json()))
    assert shown, "explain names no sources at all"
    out = tmp_path / "folder"
    generated = run_cli("generate", *args, "--out", str(out))
    assert generated.code == 0, generated.err
    texts = [explained.out, generated.out] + [p.read_text() for p in out.rglob("*") if p.is_file()]
    shown += list(urls(json.loads((out / "plan.json").read_text())))
    assert not [u for u in shown if not openable(u)]
    assert not [m.group(0) for t in texts for m in PRIVATE_TEXT.finditer(t)]
