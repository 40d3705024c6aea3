"""Each encoder of encode.py against the real reader of its target syntax: bash, PyYAML, JSON (the
Dockerfile exec form), markdown-it (CommonMark + GFM tables). Whatever the text, the reader gets
back exactly the value (or the one-line form of it), and nothing else."""

from __future__ import annotations

import json
import subprocess

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from recipegen.artifacts.encode import (
    docker_image,
    dockerfile_exec,
    md_code,
    md_pre,
    md_text,
    one_line,
    shell_comment,
    shell_expand,
    shell_word,
    yaml_expand,
    yaml_key,
    yaml_value,
)
from recipegen.errors import RecipegenError

HOSTILE = [
    "x\n) ; touch /tmp/PWNED ; args_0=( #",
    "$(touch /tmp/PWNED)",
    "`touch /tmp/PWNED`",
    "'; touch /tmp/PWNED; '",
    '"; touch /tmp/PWNED; "',
    "${IFS}touch${IFS}/tmp/PWNED",
    "{{ 7 * 7 }}",
    "a\rb",
    "a\u2028b\u0085c\u2029d",
    "privileged: true\nX",
    "&& touch /tmp/PWNED",
    "x" * 5000,
]
# Any text, including control characters and line separators (no NUL: no shell argument holds one).
TEXT = st.text(st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=60)
SETTINGS = settings(max_examples=40, deadline=None)
MD = MarkdownIt("commonmark").enable(["table", "strikethrough"])


def bash_words(words: list[str]) -> list[str]:
    script = "printf '%s\\0'" + "".join(" " + shell_word(w) for w in words)
    out = subprocess.run(["bash", "-c", script], capture_output=True, check=True).stdout
    return out.decode("utf-8", "surrogateescape").split("\0")[:-1]


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=5))
def test_shell_word_is_read_back_by_bash_as_one_unchanged_word(words):
    assert bash_words(words) == words


def test_shell_word_refuses_nul():
    with pytest.raises(RecipegenError):
        shell_word("a\x00b")


@SETTINGS
@given(TEXT)
def test_shell_comment_never_ends_its_line(text):
    script = f"# {shell_comment(text)}\nprintf done"
    assert subprocess.run(["bash", "-c", script], capture_output=True, text=True).stdout == "done"
    assert yaml.safe_load(f"# {shell_comment(text)}\nkey: 1\n") == {"key": 1}


def test_shell_expand_expands_whitelisted_variables_only():
    encoded = shell_expand("${HEAD_ADDR}:${DIST_PORT:-20000}")
    out = subprocess.run(
        ["bash", "-c", f"printf %s {encoded}"], capture_output=True, text=True, env={"HEAD_ADDR": "10.0.0.1"}
    )
    assert out.stdout == "10.0.0.1:20000"
    for value in HOSTILE[:-1]:  # the last is only long
        with pytest.raises(RecipegenError):
            shell_expand(value)
    with pytest.raises(RecipegenError):
        yaml_expand("${X:-$(id)}")


@SETTINGS
@given(st.lists(TEXT, min_size=1, max_size=5))
def test_dockerfile_exec_form_is_the_argv_as_one_json_line(argv):
    line = dockerfile_exec(argv)
    assert "\n" not in line and "\r" not in line and line.isascii()
    assert json.loads(line) == argv


def test_docker_image_accepts_references_and_refuses_anything_else():
    for ref in ("vllm/vllm-openai:v0.33.0-x86_64", "localhost:5000/a/b:tag", "nvidia/cuda:12.9.1-devel-ubuntu24.04"):
        assert docker_image(ref) == ref
    for bad in ("$(id)", "-x", "a b", "a/UPPER", "Upper", "img:tag\nRUN id", "${X}"):
        with pytest.raises(RecipegenError):
            docker_image(bad)


@SETTINGS
@given(TEXT)
def test_yaml_value_reads_back_unchanged_once_compose_undoubles_dollars(text):
    loaded = yaml.safe_load(f"key: {yaml_value(text)}\n")["key"]
    assert loaded.replace("$$", "$") == text
    assert "\n" not in yaml_value(text)


@SETTINGS
@given(TEXT.filter(bool))
def test_yaml_key_reads_back_unchanged(text):
    assert yaml.safe_load(f"{yaml_key(text)}: 1\n") == {text: 1}


def test_yaml_key_cannot_add_keys():
    assert yaml.safe_load(f"env:\n  {yaml_key('privileged: true')}: 1\n") == {"env": {"privileged: true": 1}}


def inline_children(markdown: str) -> list:
    tokens = MD.parse(markdown)
    inlines = [t for t in tokens if t.type == "inline"]
    assert len(inlines) == 1, markdown
    return inlines[0].children or []


@SETTINGS
@given(TEXT)
def test_md_text_renders_as_the_literal_characters(text):
    expected = one_line(text).strip()
    if not expected:
        return
    children = inline_children(md_text(text))
    assert {c.type for c in children} == {"text"}, md_text(text)
    assert "".join(c.content for c in children) == expected


@SETTINGS
@given(TEXT)
def test_md_text_in_a_list_item_stays_plain_text(text):
    expected = one_line(text).strip()
    if not expected:
        return
    tokens = MD.parse("- " + md_text(text))
    assert [t.type for t in tokens] == [
        "bullet_list_open",
        "list_item_open",
        "paragraph_open",
        "inline",
        "paragraph_close",
        "list_item_close",
        "bullet_list_close",
    ]
    assert "".join(c.content for c in tokens[3].children or []) == expected


@SETTINGS
@given(TEXT)
def test_md_code_is_one_code_span_holding_the_value(text):
    expected = one_line(text)
    if not expected.strip(" "):
        return
    children = inline_children(md_code(text, table=False))
    assert [(c.type, c.content) for c in children] == [("code_inline", expected)]


@SETTINGS
@given(TEXT, TEXT)
def test_md_table_cells_stay_in_their_column(code, text):
    table = f"| a | b | c |\n|---|---|---|\n| {md_code(code)} | {md_text(text)} | end |\n"
    tokens = MD.parse(table)
    cells = [t for t in tokens if t.type == "inline"][3:]
    assert len(cells) == 3
    assert cells[2].content == "end"


@SETTINGS
@given(TEXT)
def test_md_pre_line_cannot_close_its_fence(text):
    tokens = MD.parse(f"```text\n{md_pre(text)}\n```\nafter\n")
    assert tokens[0].type == "fence"
    assert tokens[0].content == md_pre(text) + "\n"
    assert tokens[-2].content == "after"


def test_hostile_values_each_encoder_contains():
    for value in HOSTILE:
        assert bash_words([value]) == [value]
        assert "\n" not in shell_comment(value) and "\u2028" not in shell_comment(value)
        assert json.loads(dockerfile_exec(["git", "checkout", value])) == ["git", "checkout", value]
        assert yaml.safe_load(f"k: {yaml_value(value)}")["k"].replace("$$", "$") == value
