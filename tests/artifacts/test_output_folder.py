"""--out and --force: recipegen replaces only what it wrote, keeps everything else, and never crashes on a path."""

from __future__ import annotations

import json
import multiprocessing
import os
import stat
from pathlib import Path

import pytest

GLM = ("--gpu", "sm80", "--model", "glm-5.2")


def one_line_error(result) -> str:  # type: ignore[no-untyped-def]
    lines = result.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.err
    assert "Traceback" not in result.err
    return lines[0]


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() if p.is_file() else b"<dir>" for p in sorted(folder.rglob("*"))}


def test_manifest_names_every_written_file_with_its_hash(cli, tmp_path):
    import hashlib

    out = tmp_path / "o"
    assert cli(*GLM, "--out", str(out)).code == 0
    manifest = json.loads((out / ".recipegen.json").read_text())
    written = {p.name for p in out.iterdir()} - {".recipegen.json"}
    assert set(manifest["files"]) == written
    for name, digest in manifest["files"].items():
        assert digest == "sha256:" + hashlib.sha256((out / name).read_bytes()).hexdigest()
    assert os.access(out / "launch.sh", os.X_OK) and not os.access(out / "plan.json", os.X_OK)


def test_force_replaces_recipegen_files_and_keeps_weights_and_user_files(cli, tmp_path):
    out = tmp_path / "o"
    assert cli(*GLM, "--out", str(out)).code == 0
    (out / "models").mkdir()
    (out / "models" / "model-00001.safetensors").write_bytes(b"\x00weights\xff")
    (out / "notes.txt").write_text("mine")
    (out / ".env").write_text("HF_HOME=/data\n")
    sibling = tmp_path / ".o.old"
    sibling.mkdir()
    (sibling / "keep").write_text("precious")

    forced = cli(*GLM, "--context", "65536", "--out", str(out), "--force")
    assert forced.code == 0, forced.err
    assert "'65536'" in (out / "launch.sh").read_text()
    assert (out / "models" / "model-00001.safetensors").read_bytes() == b"\x00weights\xff"
    assert (out / "notes.txt").read_text() == "mine" and (out / ".env").exists()
    assert (sibling / "keep").read_text() == "precious"
    assert not [p for p in tmp_path.iterdir() if p.name not in {"o", ".o.old"}], "no staging or backup left behind"


def test_force_never_touches_a_folder_recipegen_did_not_write(cli, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    (work / "thesis.tex").write_text("years of work")
    (work / "blob.bin").write_bytes(b"\xff\xfe\x00\x80 not utf-8")
    before = snapshot(work)
    for out in (str(work), "."):
        result = cli(*GLM, "--out", out, "--force", cwd=work)
        assert result.code == 4
        assert "did not write" in one_line_error(result)
    assert snapshot(work) == before


def test_force_keeps_a_file_the_user_edited(cli, tmp_path):
    out = tmp_path / "o"
    assert cli(*GLM, "--out", str(out)).code == 0
    (out / "launch.sh").write_text("#!/bin/sh\n# my tuned launch\n")
    result = cli(*GLM, "--context", "65536", "--out", str(out), "--force")
    assert result.code == 4 and "launch.sh was changed" in one_line_error(result)
    assert (out / "launch.sh").read_text() == "#!/bin/sh\n# my tuned launch\n"


def test_a_new_file_never_replaces_one_recipegen_did_not_write(cli, tmp_path):
    out = tmp_path / "o"
    assert cli(*GLM, "--out", str(out)).code == 0
    manifest = json.loads((out / ".recipegen.json").read_text())
    del manifest["files"]["verify.sh"]  # as if an earlier plan had no verify.sh and the user wrote one
    (out / ".recipegen.json").write_text(json.dumps(manifest))
    result = cli(*GLM, "--context", "65536", "--out", str(out), "--force")
    assert result.code == 4 and "verify.sh was not written by recipegen" in one_line_error(result)


def test_out_dot_in_an_empty_folder_writes_there(cli, tmp_path):
    result = cli(*GLM, "--out", ".", cwd=tmp_path)
    assert result.code == 0, result.err
    assert (tmp_path / "launch.sh").is_file() and (tmp_path / ".recipegen.json").is_file()
    again = cli(*GLM, "--out", ".", cwd=tmp_path)
    assert again.code == 0 and "unchanged" in again.out


def test_root_home_and_special_paths_are_one_line_errors(cli, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / ".bashrc").write_text("# mine")
    cases = [
        ("/", 4, "root"),
        (str(home), 4, "did not write"),
        ("/proc/recipegen-test/o", 2, "cannot write"),
        ("/proc/self/o", 2, "cannot write"),
        ("/dev/null", 2, "kernel file system"),
        ("/dev/recipegen-test-o", 2, "kernel file system"),
        ("/sys/recipegen-test-o", 2, "kernel file system"),
    ]
    for out, code, words in cases:
        result = cli(*GLM, "--out", out, "--force", env={"HOME": str(home)})
        assert result.code == code, (out, result.err)
        assert words in one_line_error(result), out
    assert (home / ".bashrc").read_text() == "# mine"
    a_file = tmp_path / "file"
    a_file.write_text("x")
    result = cli(*GLM, "--out", str(a_file), "--force")
    assert result.code == 4 and "not a folder" in one_line_error(result)
    assert a_file.read_text() == "x"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_unwritable_parent_is_a_one_line_error(cli, tmp_path):
    locked = tmp_path / "ro"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        result = cli(*GLM, "--out", str(locked / "o"))
        assert result.code == 2 and "cannot write" in one_line_error(result)
    finally:
        locked.chmod(stat.S_IRWXU)


def test_a_symlinked_out_writes_into_its_target(cli, tmp_path):
    target = tmp_path / "real"
    link = tmp_path / "link"
    link.symlink_to(target, target_is_directory=True)
    result = cli(*GLM, "--out", str(link))
    assert result.code == 0, result.err
    assert link.is_symlink() and (target / "launch.sh").is_file()
    again = cli(*GLM, "--out", str(target))
    assert again.code == 0 and "unchanged" in again.out


def test_a_planted_symlink_or_fifo_in_the_folder_is_not_followed(cli, tmp_path):
    out = tmp_path / "o"
    assert cli(*GLM, "--out", str(out)).code == 0
    victim = tmp_path / "victim"
    victim.write_text("do not overwrite")
    (out / "launch.sh").unlink()
    (out / "launch.sh").symlink_to(victim)
    os.mkfifo(out / "verify.sh.fifo")
    result = cli(*GLM, "--context", "65536", "--out", str(out), "--force")
    assert result.code == 4 and "launch.sh was changed" in one_line_error(result)
    assert victim.read_text() == "do not overwrite"


def _writer(args: tuple[str, dict[str, str], bool, multiprocessing.synchronize.Barrier]) -> int:
    from recipegen.artifacts.output import write
    from recipegen.errors import RecipegenError

    out, files, force, barrier = args
    barrier.wait()
    try:
        write(files, Path(out), force)
    except RecipegenError as exc:
        return exc.exit_code
    return 0


def _run_writer(out: str, files: dict[str, str], force: bool, barrier, results, index: int) -> None:  # type: ignore[no-untyped-def]
    results[index] = _writer((out, files, force, barrier))


def test_hundreds_of_concurrent_writers_never_fail_and_leave_one_consistent_folder(tmp_path):
    import hashlib

    from recipegen.artifacts.output import MANIFEST

    out = tmp_path / "o"
    plans = [
        {"launch.sh": "#!/bin/sh\necho a\n", "plan.json": '{"n": 0}\n'},
        {"launch.sh": "#!/bin/sh\necho b\n", "plan.json": '{"n": 1}\n', "Dockerfile": "FROM x\n"},
    ]
    ctx = multiprocessing.get_context("fork")
    count = 320
    barrier = ctx.Barrier(count)
    results = ctx.Array("i", [-1] * count)
    procs = [
        ctx.Process(target=_run_writer, args=(str(out), plans[i % 2], i % 3 != 0, barrier, results, i))
        for i in range(count)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert all(p.exitcode == 0 for p in procs), "a writer process crashed"
    codes = list(results)
    assert set(codes) <= {0, 4} and codes.count(0) >= count // 2, codes
    manifest = json.loads((out / MANIFEST).read_text())["files"]
    present = {p.name for p in out.iterdir()} - {MANIFEST}
    assert present == set(manifest) and any(present == set(plan) for plan in plans)
    plan = next(plan for plan in plans if set(plan) == present)
    for name, content in plan.items():
        assert (out / name).read_text() == content
        assert manifest[name] == "sha256:" + hashlib.sha256(content.encode()).hexdigest()
    assert [p.name for p in tmp_path.iterdir()] == ["o"], "no staging folder left behind"
