"""Student zips are untrusted: nothing lands outside the destination, and the caps hold whatever the
zip claims."""

from __future__ import annotations

import stat
import zipfile

import pytest

from grader.errors import StudentError
from grader.intake.safezip import extract


def make_zip(path, entries):
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data, mode in entries:
            info = zipfile.ZipInfo(name)
            info.external_attr = mode << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, data)
    return path


def test_unsafe_entries_are_left_out_and_said(tmp_path):
    archive = make_zip(
        tmp_path / "s.zip",
        [
            ("ok/gelu.py", "def gelu(x): return x\n", stat.S_IFREG | 0o644),
            ("../escape.py", "x", stat.S_IFREG | 0o644),
            ("/etc/abs.py", "x", stat.S_IFREG | 0o644),
            ("C:/win.py", "x", stat.S_IFREG | 0o644),
            ("ok\\..\\..\\back.py", "x", stat.S_IFREG | 0o644),
            ("ok/link.py", "/etc/passwd", stat.S_IFLNK | 0o777),
            ("__MACOSX/ok/._gelu.py", "junk", stat.S_IFREG | 0o644),
        ],
    )
    dest = tmp_path / "work" / "out"
    result = extract(archive, dest)
    written = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert written == ["s.zip", "work/out/ok/gelu.py"]
    assert not (dest / "ok" / "link.py").exists()
    notes = " ".join(result.notes)
    for name in ("../escape.py", "/etc/abs.py", "C:/win.py", "ok\\..\\..\\back.py", "ok/link.py"):
        assert repr(name) in notes, name


def test_a_zip_bomb_stops_at_the_byte_cap(tmp_path):
    archive = make_zip(tmp_path / "bomb.zip", [("a.py", b"0" * (3 << 20), stat.S_IFREG | 0o644)])
    assert archive.stat().st_size < 100_000
    with pytest.raises(StudentError, match="more than 1 MiB"):
        extract(archive, tmp_path / "out", max_bytes=1 << 20)


def test_too_many_files_and_not_a_zip_are_errors(tmp_path):
    many = make_zip(
        tmp_path / "many.zip", [(f"f{i}.py", "x", stat.S_IFREG | 0o644) for i in range(5)]
    )
    with pytest.raises(StudentError, match="more than 3 files"):
        extract(many, tmp_path / "out1", max_files=3)
    fake = tmp_path / "fake.zip"
    fake.write_text("not a zip")
    with pytest.raises(StudentError, match="not a readable zip"):
        extract(fake, tmp_path / "out2")


def test_only_the_chosen_entries_are_unpacked_and_counted(tmp_path):
    from pathlib import PurePosixPath

    entries = [(f".venv/lib/f{i}.py", "x", stat.S_IFREG | 0o644) for i in range(5)]
    archive = make_zip(
        tmp_path / "s.zip",
        entries
        + [
            ("hw/gelu.py", "def gelu(x): return x\n", stat.S_IFREG | 0o644),
            ("hw/link.py", "/etc/passwd", stat.S_IFLNK | 0o777),
            ("../escape.py", "x", stat.S_IFREG | 0o644),
        ],
    )
    result = extract(archive, tmp_path / "out", max_files=1, only={PurePosixPath("hw/gelu.py")})
    assert sorted(
        str(p.relative_to(tmp_path / "out")) for p in (tmp_path / "out").rglob("*") if p.is_file()
    ) == ["hw/gelu.py"]
    notes = " ".join(result.notes)
    assert (
        "'../escape.py'" in notes and "'hw/link.py'" in notes
    )  # still said: beside what is graded
