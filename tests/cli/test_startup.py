"""The CLI loads only what a command needs: generate never imports huggingface_hub or docker."""

from __future__ import annotations

import subprocess
import sys

PROBE = """
import atexit, sys
def report():
    edge = ("huggingface_hub", "docker", "jsonschema", "hypothesis")
    heavy = sorted(m for m in sys.modules if m.split(".")[0] in edge)
    sys.stderr.write("HEAVY=" + ",".join(heavy) + "\\n")
atexit.register(report)
sys.argv = ["recipegen"] + sys.argv[1:]
from recipegen.cli.app import main
main()
"""


def test_generate_imports_no_edge_libraries(tmp_path):
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, "--gpu", "sm80", "--model", "glm-5.2", "--out", str(tmp_path / "o")],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert "HEAVY=\n" in proc.stderr


def test_a_cached_explain_imports_no_yaml_no_templates_and_no_validation(tmp_path):
    """From the validated-catalog cache nothing is parsed, validated or rendered: no YAML library, no Jinja,
    no pydantic (the catalog's records need it only to be validated; typer below 0.29 does not use it)."""
    probe = PROBE.replace(
        '("huggingface_hub", "docker", "jsonschema", "hypothesis")', '("yaml", "jinja2", "pydantic", "pydantic_core")'
    )
    args = [sys.executable, "-c", probe, "explain", "--gpu", "sm80", "--model", "glm-5.2"]
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first = subprocess.run(args, capture_output=True, text=True, env=env)  # validates and writes the cache
    assert first.returncode == 0, first.stderr
    again = subprocess.run(args, capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    assert "HEAVY=\n" in again.stderr
    assert again.stdout == first.stdout


def test_a_cached_explain_of_a_model_with_v_narrower_than_k_imports_no_yaml(tmp_path):
    """MiMo-V2-Flash's V is narrower than its K, so its kernel gates read data/diff_kv.yaml: a warm run reads it
    parsed from the cache folder (importing yaml and parsing it cost more than the rest of the explain's planning)."""
    probe = PROBE.replace('("huggingface_hub", "docker", "jsonschema", "hypothesis")', '("yaml",)')
    args = [sys.executable, "-c", probe, "explain", "--gpu", "h100", "--model", "mimo-v2-flash"]
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first = subprocess.run(args, capture_output=True, text=True, env=env)  # parses and keeps diff_kv.yaml
    assert first.returncode == 0, first.stderr
    assert "HEAVY=yaml" in first.stderr  # the first run parsed it (else this test would prove nothing)
    assert (tmp_path / "recipegen" / "data-diff_kv.json").is_file()
    again = subprocess.run(args, capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    assert "HEAVY=\n" in again.stderr
    assert again.stdout == first.stdout


def test_package_data_is_parsed_again_when_the_file_changes(tmp_path, monkeypatch):
    """The cached parse is keyed by the file's bytes: an edited data file (a checkout) is never answered from it."""
    from recipegen.catalog.parse_cache import package_data

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("RECIPEGEN_NO_CACHE", raising=False)
    data = tmp_path / "hints.yaml"
    data.write_text("gpus:\n- pattern: a\n  cc: '8.0'\n", encoding="utf-8")
    assert package_data(data) == {"gpus": [{"pattern": "a", "cc": "8.0"}]}
    assert (tmp_path / "cache" / "recipegen" / "data-hints.json").is_file()
    with monkeypatch.context() as no_yaml:
        no_yaml.setitem(sys.modules, "yaml", None)  # `import yaml` fails: only the cache can answer
        assert package_data(data) == {"gpus": [{"pattern": "a", "cc": "8.0"}]}
    data.write_text("gpus:\n- pattern: b\n  cc: '9.0'\n", encoding="utf-8")
    assert package_data(data) == {"gpus": [{"pattern": "b", "cc": "9.0"}]}


def test_a_catalog_model_is_planned_without_the_checkpoint_readers(tmp_path):
    """A --model the catalog names is never looked up as a folder, a .gguf or a Hub repo: the readers of a
    checkpoint's own files load only for a name the catalog lacks (tests/checkpoint/test_local_folder.py runs
    those), and the package's folders are found without importlib.resources (it pulls in tempfile and zipfile)."""
    probe = PROBE.replace(
        'heavy = sorted(m for m in sys.modules if m.split(".")[0] in edge)',
        "heavy = sorted(m for m in sys.modules if m in edge)",
    ).replace(
        '("huggingface_hub", "docker", "jsonschema", "hypothesis")',
        '("recipegen.checkpoint.hub", "recipegen.checkpoint.folder", "recipegen.checkpoint.gguf", '
        '"importlib.resources", "tempfile")',
    )
    assert probe.count("m in edge") == 1 and "importlib.resources" in probe  # the probe was rewritten
    args = [sys.executable, "-c", probe, "explain", "--gpu", "sm80", "--model", "glm-5.2"]
    env = {"XDG_CACHE_HOME": str(tmp_path), "PATH": "/usr/bin:/bin"}
    first = subprocess.run(args, capture_output=True, text=True, env=env)  # validates and writes the cache
    assert first.returncode == 0, first.stderr
    again = subprocess.run(args, capture_output=True, text=True, env=env)
    assert again.returncode == 0, again.stderr
    assert "HEAVY=\n" in again.stderr
    assert "VERDICT: runnable" in again.stdout


def test_typer_reads_every_command_signature_without_compiling_it(monkeypatch):
    """typer reads each command's and each option callback's annotations on every run; a string annotation
    (`from __future__ import annotations` in the module) costs a compile() each time — ~120 of them for
    explain, 13 M of its instructions — so the command modules keep their annotations as objects."""
    import builtins
    import copy

    import typer.main

    from recipegen.cli.app import _subcommands, app

    compiled: list[str] = []
    real = builtins.compile
    monkeypatch.setattr(
        builtins, "compile", lambda source, *a, **k: compiled.append(str(source)) or real(source, *a, **k)
    )
    for name, info in _subcommands().items():
        only = copy.copy(app)
        only.registered_callback = None
        only.registered_commands = [info]
        typer.main.get_command(only)
        assert compiled == [], f"building `recipegen {name}` compiled the annotations {compiled[:5]}"
    typer.main.get_command(app)  # the root command (`recipegen --gpu … --model …`) and the group
    assert compiled == []
