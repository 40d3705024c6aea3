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
    # the reference notes by name, in any prose (a source's note, a build's notes, a comment)
    r"|\b(?:models|hardware|hardware-kernels-engines|vllm-recipes|peers|style-anchors)\.md\b"
    # "the reference" as if a user had it, and its section marks and source keys
    r"|\b[Tt]he reference(?:'s|''s| table| says| states| reports| later| gives| could)\b"
    r"|\breference (?:models|hardware)\b"
    r"|\[(?:S|S\+|FI|FA)\]"
)
# a section mark names a section of a document the text links to (a paper's §5.4.3); one alone names a note
SECTION = re.compile(r"§\s?\d")


def private_text(text: str) -> list[str]:
    """The names of private notes in `text`: a bare note name, a note's key, or a § with no link on its line."""
    found = [m.group(0) for m in PRIVATE_TEXT.finditer(text)]
    found += [line.strip()[:120] for line in text.splitlines() if SECTION.search(line) and "http" not in line]
    return found


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
        f"{p.relative_to(REPO)}: {found}"
        for p in shipped
        if p.suffix in {".yaml", ".py", ".j2", ".md"}
        for found in private_text(p.read_text())
    ]
    assert not bad, "\n".join(bad)


@pytest.mark.parametrize(
    "text",
    [
        "note: models.md reports it running on 8x A100",
        "Size from hardware-kernels-engines.md",
        "the reference table did not re-check it",
        "SGLang images are v<X> (§6); not checked",
        "modelopt_fp4 minimum 100 at [S]",
    ],
)
def test_a_note_name_in_prose_is_caught(text: str) -> None:
    assert private_text(text)


def test_a_public_section_is_not_a_note_name() -> None:
    assert not private_text("https://arxiv.org/abs/2412.19437 (DeepSeek-V3 §5.4.3: 85–90 % acceptance)")
    assert not private_text("cli_reference: vllm-0.33.0; see README.md")


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
    assert not [found for t in texts for found in private_text(t)]
