"""Recipe files as untrusted input (no hang, no crash, one line each), and a cache that cannot run code."""

from __future__ import annotations

import json
import os
import pickle
import time
import zlib
from pathlib import Path

import pytest

BOMB = "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9 if prev else ['x'] * 9)}]\n"
    for prev, name in zip(["", "a", "b", "c", "d", "e", "f", "g"], "abcdefgh", strict=True)
)


def problems(result) -> list[str]:  # type: ignore[no-untyped-def]
    assert "Traceback" not in result.err
    return result.err.splitlines()


def hardware_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "mine" / "hardware"
    folder.mkdir(parents=True)
    return folder


@pytest.mark.parametrize(
    ("name", "content", "expected"),
    [
        ("bomb.yaml", BOMB, "more than 100,000 values once YAML aliases are expanded"),
        ("deep.yaml", "[" * 200_000 + "]" * 200_000, "nest"),  # ours, or libyaml 0.2.5+ own depth limit
        ("deep-block.yaml", "".join(" " * i + "a:\n" for i in range(100)), "nested deeper than 64 levels"),
        ("self.yaml", "a: &a [1, *a]\n", "alias *a refers to itself"),
        ("latin1.yaml", b"id: caf\xe9\n", "not UTF-8 text (byte 0xe9)"),
        ("big.yaml", "# padding\n" * 120_000, "larger than 1024 KiB"),
        ("code.yaml", "!!python/object/apply:os.system [touch /tmp/x]\n", "malformed YAML"),
        ("inf.yaml", "memory_gib: .inf\n", "memory_gib: inf is out of range"),
        ("huge.yaml", "memory_gib: 1" + "0" * 400 + "\n", "memory_gib: a huge number is out of range"),
        ("digits.yaml", "memory_gib: 1" + "0" * 5000 + "\n", "cannot read a value"),
    ],
    ids=lambda value: value if isinstance(value, str) and value.endswith(".yaml") else "",
)
def test_hostile_yaml_is_one_problem_line_quickly(cli, tmp_path, name, content, expected):
    assert len(BOMB) < 1024
    path = hardware_folder(tmp_path) / name
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    start = time.monotonic()
    result = cli("validate", str(tmp_path / "mine"))
    assert time.monotonic() - start < 10
    assert result.code == 2
    lines = problems(result)
    assert len(lines) == 1 and lines[0].startswith(str(path)) and expected in lines[0], lines


def test_fifos_sockets_and_devices_are_refused_without_reading(cli, tmp_path):
    import socket

    folder = hardware_folder(tmp_path)
    os.mkfifo(folder / "fifo.yaml")
    (folder / "zero.yaml").symlink_to("/dev/zero")
    (folder / "tty.yaml").symlink_to("/dev/null")
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(folder / "sock.yaml"))
    try:
        start = time.monotonic()
        result = cli("validate", str(tmp_path / "mine"))
    finally:
        server.close()
    assert time.monotonic() - start < 10 and result.code == 2
    lines = problems(result)
    assert len(lines) == 4 and all("not a regular file" in line for line in lines), lines


def test_a_recipe_folder_that_is_a_file_or_missing_is_one_line(cli, tmp_path):
    (tmp_path / "file").write_text("x")
    for folder in (tmp_path / "file", tmp_path / "missing", Path("/dev/null")):
        result = cli("validate", str(folder))
        assert result.code == 2 and len(problems(result)) == 1


# ---------------------------------------------------------------------------------------------
# The parse cache


def cache_dir(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "recipegen"


def test_a_planted_pickle_never_runs(cli, tmp_path):
    canary = tmp_path / "PWNED"

    class Payload:
        def __reduce__(self):  # type: ignore[no-untyped-def]
            return (os.system, (f"touch {canary}",))

    folder = cache_dir(tmp_path)
    folder.mkdir(parents=True)
    for name in ("catalog.pickle", "parsed-recipes.json", "catalog-0123456789abcdef01234567.pickle"):
        (folder / name).write_bytes(pickle.dumps(Payload()))
    result = cli("list", "models", env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert result.code == 0 and "glm-5.2" in result.out
    assert not canary.exists()


def _plant(cli, tmp_path: Path, mode: int, code: str | None = None) -> Path:  # type: ignore[no-untyped-def]
    """Run once to get a real cache, then rename every model in it to PLANTED.

    The validated-catalog cache is removed: it is what a run reads first, and these tests are about
    the parse cache behind it (which a run reads whenever the validated one does not match)."""
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert cli("list", "models", env=env).code == 0
    for validated in cache_dir(tmp_path).glob("validated-catalog-*.pickle"):
        validated.unlink()
    path = cache_dir(tmp_path) / "parsed-recipes.json"
    data = json.loads(path.read_text())
    for entry in data["files"].values():
        if isinstance(entry, dict) and "architecture" in entry:
            entry["name"] = "PLANTED"
    if code is not None:
        data["code"] = code
    path.write_text(json.dumps(data))
    path.chmod(mode)
    return path


def test_the_cache_is_used_and_equals_a_fresh_parse(tmp_path, monkeypatch):
    from recipegen.catalog.load import load

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = load()
    assert (cache_dir(tmp_path) / "parsed-recipes.json").is_file()
    assert oct(cache_dir(tmp_path).stat().st_mode & 0o777) == "0o700"
    second = load()
    monkeypatch.setenv("RECIPEGEN_NO_CACHE", "1")
    fresh = load()
    assert first == second == fresh


def test_a_cache_others_could_write_is_ignored(cli, tmp_path):
    _plant(cli, tmp_path, 0o666)
    result = cli("list", "models", env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert result.code == 0 and "PLANTED" not in result.out


def test_a_cache_written_by_other_code_is_ignored(cli, tmp_path):
    _plant(cli, tmp_path, 0o600, code="an older recipegen")
    result = cli("list", "models", env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert result.code == 0 and "PLANTED" not in result.out


def test_cached_data_is_still_validated(cli, tmp_path):
    path = _plant(cli, tmp_path, 0o600)
    data = json.loads(path.read_text())
    for entry in data["files"].values():
        if isinstance(entry, dict) and "architecture" in entry:
            entry["surprise"] = True
    path.write_text(json.dumps(data))
    result = cli("list", "models", env={"XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert result.code == 2 and "surprise: unknown key" in result.err


def test_release_files_are_read_as_carefully(cli, tmp_path):
    folder = tmp_path / "mine" / "engines" / "vllm"
    folder.mkdir(parents=True)
    os.mkfifo(folder / "fifo.yaml")
    (folder / "bomb.yaml").write_text(BOMB)
    start = time.monotonic()
    result = cli("validate", str(tmp_path / "mine"))
    assert time.monotonic() - start < 10 and result.code == 2
    lines = problems(result)
    assert any("fifo.yaml" in line and "not a regular file" in line for line in lines), lines
    assert any("bomb.yaml" in line and "aliases are expanded" in line for line in lines), lines


# The validated-catalog cache (read before the parse cache; rebuilt without validation)


def _validated(tmp_path: Path) -> Path:
    (path,) = cache_dir(tmp_path).glob("validated-catalog-*.pickle")
    return path


def _write_validated(path: Path, header: dict, body: bytes, keep_check: bool) -> None:  # type: ignore[type-arg]
    if keep_check:  # what only someone who can write the owner's cache could do
        checksum = zlib.crc32(header["key"].encode() + b"\0" + body)
        header["check"] = f"crc32:{checksum:08x}"
    path.write_bytes(json.dumps(header).encode() + b"\n" + body)


def _replant(path: Path, edit, keep_check: bool) -> None:  # type: ignore[no-untyped-def]
    from recipegen.catalog import cache as catalog_cache

    head, _, body = path.read_bytes().partition(b"\n")
    catalog = catalog_cache._loads(body)
    edit(catalog)
    _write_validated(path, json.loads(head), catalog_cache.dump(catalog), keep_check)


def _rename_models(catalog) -> None:  # type: ignore[no-untyped-def]
    from recipegen.frozen import evolve

    for model_id, model in catalog.models.items():
        catalog.models[model_id] = evolve(model, name="PLANTED")


def test_the_validated_cache_gives_what_a_full_load_gives(cli, tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    args = ("explain", "--gpu", "rtx-pro-6000", "--model", "glm-5.3-flash", "--format", "json")
    first = cli(*args, env=env)
    path = _validated(tmp_path)
    assert oct(path.stat().st_mode & 0o777) == "0o600"
    cached = cli(*args, env=env)
    fresh = cli(*args, env={**env, "RECIPEGEN_NO_CACHE": "1"})
    assert first.code == cached.code == fresh.code and first.out == cached.out == fresh.out
    assert json.loads(cached.out)["request"]["model"]


def test_a_validated_cache_whose_data_does_not_match_its_key_is_ignored(cli, tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert cli("list", "models", env=env).code == 0
    _replant(_validated(tmp_path), _rename_models, keep_check=False)
    result = cli("list", "models", env=env)
    assert result.code == 0 and "PLANTED" not in result.out and "glm-5.2" in result.out


def test_a_validated_cache_others_could_write_is_ignored(cli, tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert cli("list", "models", env=env).code == 0
    path = _validated(tmp_path)
    _replant(path, _rename_models, keep_check=True)
    path.chmod(0o620)
    result = cli("list", "models", env=env)
    assert result.code == 0 and "PLANTED" not in result.out


def test_an_edited_recipe_file_is_never_answered_from_the_validated_cache(cli, tmp_path):
    from recipegen.catalog.index import builtin_root

    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    mine = tmp_path / "mine"
    (mine / "hardware").mkdir(parents=True)
    source = (builtin_root() / "hardware" / "a100-80gb.yaml").read_text()
    target = mine / "hardware" / "a100-80gb.yaml"
    target.write_text(source)
    assert cli("list", "hardware", "--recipes", str(mine), env=env).code == 0
    target.write_text(source.replace("name: ", "name: Edited ", 1))
    result = cli("list", "hardware", "--verbose", "--recipes", str(mine), env=env)  # the table names each GPU
    assert result.code == 0 and "Edited" in result.out
    target.write_text(source.replace("id: a100-80gb", "id: a100-80gb\nsurprise: 1", 1))
    result = cli("list", "hardware", "--recipes", str(mine), env=env)
    assert result.code == 2 and "surprise: unknown key" in result.err


class _Planted:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):  # type: ignore[no-untyped-def]
        return (os.system, (f"touch {self.marker}",))


def test_a_validated_cache_that_names_other_code_never_runs_it(cli, tmp_path):
    """Even with a checksum that matches (someone who can write the owner's cache), the unpickler builds only
    the catalog's own classes: a file that names os.system is refused and the catalog loaded in full."""
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache")}
    assert cli("list", "models", env=env).code == 0
    path = _validated(tmp_path)
    marker = tmp_path / "ran"
    head, _, _ = path.read_bytes().partition(b"\n")
    _write_validated(path, json.loads(head), pickle.dumps({"models": _Planted(marker)}), keep_check=True)
    result = cli("list", "models", env=env)
    assert result.code == 0 and "glm-5.2" in result.out
    assert not marker.exists()
