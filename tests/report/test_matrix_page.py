"""The matrix's HTML page, rendered by a headless Chromium: its script runs, the filter hides what it should,
every reason is in the page (not in a tooltip), untrusted text stays text, and a screenshot is taken."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(
    CHROMIUM is None, reason="chromium is not installed (scripts/test.sh installs it: apt-get install chromium)"
)
MODELS = ("qwen3-14b", "gpt-oss-120b", "glm-5.2", "minimax-m2.1", "kimi-k3")


def chromium(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp / 'profile'}",
    ]
    return subprocess.run([CHROMIUM, *flags, *args], capture_output=True, text=True, timeout=90, check=True)


class Dom(HTMLParser):
    """The rendered elements, as (tag, attributes) in document order, and the page's text."""

    def __init__(self, text: str) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []
        self.text: list[str] = []
        self.feed(text)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))

    def handle_data(self, data: str) -> None:
        self.text.append(data)

    def all(self, tag: str, **attrs: str) -> list[dict[str, str | None]]:
        return [a for t, a in self.elements if t == tag and all(a.get(k) == v for k, v in attrs.items())]


@pytest.fixture(scope="module")
def page(tmp_path_factory):
    from tests.support.cli import run_cli

    args = [a for m in MODELS for a in ("--model", m)]
    html = run_cli("matrix", "--format", "html", *args)
    cells = run_cli("matrix", "--format", "json", *args)
    assert html.code == 0 and cells.code == 0, html.err + cells.err
    tmp = tmp_path_factory.mktemp("matrix-page")
    (tmp / "matrix.html").write_text(html.out, encoding="utf-8")
    return tmp, cells.json()


def rendered(tmp: Path, query: str = "") -> Dom:
    return Dom(chromium(tmp, "--dump-dom", (tmp / "matrix.html").as_uri() + query).stdout)


def test_page_renders_with_filter_cells_and_every_reason(page):
    tmp, data = page
    dom = rendered(tmp)
    assert dom.all("input", id="filter"), "no filter box"
    text = " ".join("".join(dom.text).split())
    assert f"{len(MODELS)} of {len(MODELS)} models shown" in text  # written by the page's script: it ran
    assert "Generated " in text and dom.all("title")
    assert [a["data-model"] for a in dom.all("tr") if "data-model" in a] == list(MODELS)
    assert len(dom.all("td")) == len(data["cells"])
    assert not any("hidden" in a for t, a in dom.elements if t in ("tr", "td"))
    assert not any("title" in a for _, a in dom.elements), "detail hidden in a hover tooltip"
    # every cell opens to its reasons, kept in the page itself
    assert len(dom.all("details")) == len(data["cells"])
    for cell in data["cells"]:
        if cell["symbol"] in ("◐", "?", "✗"):
            assert " ".join(cell["reasons"][0].split()[:12]) in text, (cell["model"], cell["target"])
    assert not any(t in ("link", "img", "iframe") or (t == "script" and a.get("src")) for t, a in dom.elements)


def test_filter_in_the_address_hides_other_models_and_gpus(page):
    tmp, _ = page
    dom = rendered(tmp, "?filter=qwen3-14b%20h200")
    rows = {a["data-model"]: "hidden" in a for a in dom.all("tr") if "data-model" in a}
    assert rows == {m: m != "qwen3-14b" for m in MODELS}
    columns = {a["data-gpu"]: "hidden" in a for a in dom.all("th") if "data-gpu" in a}
    assert columns and all(hidden == (gpu != "h200") for gpu, hidden in columns.items())
    assert f"1 of {len(MODELS)} models shown" in " ".join("".join(dom.text).split())


def test_screenshot_of_the_page(page):
    tmp, _ = page
    shot = tmp / "matrix.png"
    chromium(tmp, f"--screenshot={shot}", "--window-size=1400,1000", (tmp / "matrix.html").as_uri() + "?open")
    data = shot.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n") and len(data) > 20_000  # a blank page compresses to ~5 KB


def test_untrusted_text_stays_text(tmp_path):
    from recipegen.catalog.load import load
    from recipegen.catalog.targets import gpu_column
    from recipegen.report.matrix import Cell
    from recipegen.report.matrix_html import to_html

    evil = '<img src=x onerror="document.title=1">'
    cell = Cell(evil, "h200", "◐", None, evil, (f'{evil} [https://example.org/"><script>x()</script>]',), "1×", evil)
    (tmp_path / "matrix.html").write_text(to_html([cell], [gpu_column(load(), "h200")]), encoding="utf-8")
    dom = rendered(tmp_path)
    assert not dom.all("img") and len(dom.all("script")) == 1
    assert evil in "".join(dom.text)
