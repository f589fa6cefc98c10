"""What students hand in is what gets graded: the course's modules are found wherever they sit in a
folder or zip, the rest is left out with a note, a blank hand-in is flagged, and `grade pack` /
`grade check` read a hand-in exactly as `grade autograde` does.
"""

from __future__ import annotations

import json
import shutil
import zipfile
from pathlib import Path, PurePosixPath

import nbformat
import pytest
from conftest import (
    GOOD,
    MAX_SCORE,
    MODULES,
    PROJECT,
    REFERENCE,
    THE_BLOCK,
    course_copy,
    grade,
    write_tree,
)

from grader.errors import StudentError
from grader.intake.files import File, choose

ADA = REFERENCE  # correct code: the reference's MODULES
P = PurePosixPath


def zip_of(path: Path, files: dict[str, bytes | str | Path]) -> Path:
    """A zip holding ``files`` (name -> bytes, text, or a file to copy)."""
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in files.items():
            zf.writestr(name, data.read_bytes() if isinstance(data, Path) else data)
    return path


def ada(prefix: str = "") -> dict[str, Path]:
    return {f"{prefix}{m}.py": ADA / f"{m}.py" for m in MODULES}


def listing(*names_and_sizes: tuple[str, int]) -> list[File]:
    return [File(P(name), size) for name, size in names_and_sizes]


# choose(): names and sizes in, a folder and notes out (no files, nothing run).


def test_a_release_folder_is_graded_from_its_exercises_and_the_rest_is_named():
    files = listing(
        *[(f"release/exercises/{m}.py", 2000) for m in MODULES],
        ("release/tests/public/test_gelu.py", 900),
        ("release/tests/public/toy.py", 300),
        ("release/grader/cli.py", 9000),
        ("release/grader/feedback/trace.py", 9000),
        ("release/README.md", 100),
        ("release/course.json", 100),
    )
    got = choose(files, MODULES, lambda p: False)
    assert got.root == P("release/exercises")
    assert sorted(p.name for p in got.files) == sorted(f"{m}.py" for m in MODULES)
    assert "graded the course's modules in release/exercises/" in got.notes
    assert (
        "left out release/README.md, release/course.json, release/grader/, release/tests/: outside "
        "release/exercises/, the folder graded"
    ) in got.notes


def test_the_folder_whose_modules_are_not_the_stubs_wins_and_the_note_says_why():
    files = listing(
        *[(f"exercises/{m}.py", 2000) for m in MODULES],
        ("mine/gelu.py", 100),
        ("mine/block.py", 100),
    )
    got = choose(files, MODULES, lambda p: p.parts[0] == "exercises")
    assert got.root == P("mine")
    assert (
        "graded the course's modules in mine/, not those in exercises/: the others are the "
        "released stubs" in got.notes
    )
    more = choose(files, MODULES, lambda p: False)  # no stubs: the folder with more modules
    assert more.root == P("exercises") and "it holds the most of them" in more.notes[0]


def test_of_two_attempts_the_folder_changed_last_is_graded_whatever_their_names():
    old = [File(P(f"attempt2/{m}.py"), 2000, 1_700_000_000.0) for m in MODULES]
    final = [File(P(f"attempt1/{m}.py"), 2000, 1_700_000_000.0 + (m == "gelu")) for m in MODULES]
    got = choose(old + final, MODULES, lambda p: False)
    assert got.root == P("attempt1")
    assert got.notes[0] == (
        "graded the course's modules in attempt1/, not those in attempt2/: its modules were "
        "changed last"
    )


def test_big_files_and_too_many_files_beside_the_modules_are_left_out_with_the_cap_named():
    files = listing(
        ("gelu.py", 100), ("coef.txt", 10), ("weights.npy", 6 << 20), ("a.txt", 1), ("b.txt", 2)
    )
    got = choose(files, MODULES, lambda p: False, max_files=3, max_bytes=5 << 20)
    assert got.files == (P("a.txt"), P("b.txt"), P("gelu.py"))  # the module, then the smallest
    assert got.notes == (
        "left out weights.npy (6.0 MiB): over the cap of 5.0 MiB on the files graded",
        "left out coef.txt: over the cap of 3 files graded",
    )


def test_modules_over_a_cap_are_refused_saying_which_cap_and_by_how_much():
    files = listing(("work/layernorm.py", 4 << 20), ("work/gelu.py", 3 << 20))
    with pytest.raises(
        StudentError,
        match=r"the modules in work/ take 7\.0 MiB: 2\.0 MiB over the limit of "
        r"5\.0 MiB",
    ) as err:
        choose(files, MODULES, lambda p: False)
    assert err.value.kind == "too_large"


def test_hidden_folders_caches_and_environments_are_never_taken():
    files = listing(
        ("gelu.py", 100),
        (".git/objects/ab/cdef", 100),
        (".venv/lib/python3.11/site-packages/x.py", 1),
        ("venv/lib/python3.11/site-packages/numpy/gelu.py", 1),
        ("__pycache__/gelu.cpython-311.pyc", 1),
        (".ipynb_checkpoints/gelu-checkpoint.py", 1),
        (".DS_Store", 1),
        ("._gelu.py", 1),
    )
    got = choose(files, MODULES, lambda p: False)
    assert got.files == (P("gelu.py"),)
    assert got.notes == (
        "left out .git/, .venv/, venv/lib/python3.11/site-packages/: not code to grade (a hidden "
        "folder, a cache or a Python environment)",
    )


# autograde, end to end: the cases students hand in, each graded full marks (the reference's code).


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    """One autograde run over every way of handing in ada's correct code (and one blank), by
    student."""
    subs = tmp_path_factory.mktemp("intake") / "subs"
    subs.mkdir()
    release = {
        f"the-block/{p.relative_to(PROJECT)}": p
        for folder in ("grader", "tests/the-block/public")
        for p in sorted((PROJECT / folder).glob("*.py"))
    }
    release.update({"the-block/README.md": "# The block", "the-block/course.json": "{}"})
    zip_of(subs / "release.zip", {**release, **ada("the-block/exercises/")})
    venv = {f".venv/lib/python3.11/site-packages/pkg{i}/mod.py": "x = 1\n" for i in range(300)}
    zip_of(subs / "venv.zip", {**ada(), **venv, ".venv/pyvenv.cfg": "home = /usr/bin\n"})
    gelu = (
        (ADA / "gelu.py")
        .read_text()
        .replace(
            "import numpy as np",
            "import numpy as np\nfrom pathlib import Path\n"
            "SHIFT = float(Path(__file__).with_name('shift.txt').read_text())",
            1,
        )
    )
    gelu = (
        gelu.replace("def gelu(x", "def _gelu(x", 1)
        + "\n\ndef gelu(x):\n    return _gelu(x) + SHIFT\n"
    )
    zip_of(
        subs / "data.zip",
        {**ada(), "gelu.py": gelu, "shift.txt": "0.0\n", "weights.bin": b"\0" * (6 << 20)},
    )
    zip_of(
        subs / "git.zip",
        {**ada("hw/"), **{f"hw/.git/objects/{i:02x}/{i:038x}": b"blob" for i in range(250)}},
    )
    zip_of(subs / "nested.zip", ada("Ada Lovelace - the block/submission/"))
    zip_of(subs / "loose.zip", ada())
    zip_of(
        subs / "blank.zip",
        {f"{m}.py": PROJECT / "exercises" / "the-block" / f"{m}.py" for m in MODULES},
    )
    folder = subs / "venvfolder"
    for name, source in ada().items():
        write_tree(folder, {name: source.read_text()})
    for i in range(300):
        write_tree(folder / ".venv" / "lib" / f"pkg{i}", {"mod.py": "x = 1\n"})
    out = subs.parent / "out"
    code, output = grade(
        "autograde", subs, "--out", out, "--course", course_copy(), "-a", THE_BLOCK
    )
    assert code == 0, output
    docs = {p.stem: json.loads(p.read_text()) for p in out.glob("*.json")}
    return {"output": output, **docs}


@pytest.mark.parametrize(
    "student, note",
    [
        ("release", "graded the course's modules in the-block/exercises/"),
        (
            "venv",
            "left out .venv/: not code to grade (a hidden folder, a cache or a Python environment)",
        ),
        ("data", "left out weights.bin (6.0 MiB): over the cap of 5.0 MiB on the files graded"),
        (
            "git",
            "left out hw/.git/: not code to grade (a hidden folder, a cache or a Python "
            "environment)",
        ),
        ("nested", "graded the course's modules in Ada Lovelace - the block/submission/"),
        ("loose", None),
        (
            "venvfolder",
            "left out .venv/: not code to grade (a hidden folder, a cache or a Python environment)",
        ),
    ],
)
def test_correct_modules_get_full_marks_however_they_are_handed_in(graded, student, note):
    doc = graded[student]
    assert doc["score"] == doc["max_score"] == MAX_SCORE, (
        student,
        doc.get("error"),
        doc.get("submission_notes"),
    )
    assert "blank" not in doc and "error" not in doc
    if note is None:
        assert "submission_notes" not in doc
    else:
        assert note in doc["submission_notes"], doc["submission_notes"]
        assert note in graded["output"]  # the instructor sees it too


def test_a_blank_hand_in_is_flagged_in_the_score_file_and_the_summary(graded):
    doc = graded["blank"]
    assert doc["blank"] is True and doc["score"] == 0 and doc["status"] == "graded"
    assert (
        "blank: every exercise function is missing or still the released stub"
        in doc["submission_notes"]
    )
    row = next(line for line in graded["output"].splitlines() if line.startswith("│ blank"))
    assert f"0/{MAX_SCORE:g} blank" in row
    assert f"graded blank: 0/{MAX_SCORE:g} (blank)" in graded["output"]


def test_an_attempt_is_not_blank(tmp_path):
    """Only functions left as released (or as pass / ... / raise NotImplementedError) count as not
    done."""
    from grader.course.manifest import load
    from grader.intake.collect import is_blank

    course = load(PROJECT / "course.json", "the-block")
    for module in MODULES:
        shutil.copy(PROJECT / "exercises" / "the-block" / f"{module}.py", tmp_path)
    assert is_blank(course, tmp_path)
    (tmp_path / "gelu.py").write_text(
        '"""mine"""\ndef gelu(x):\n    """my docstring"""\n    pass\n'
    )
    assert is_blank(course, tmp_path)
    (tmp_path / "gelu.py").write_text("def gelu(x):\n    return x\n")
    assert not is_blank(course, tmp_path)
    (tmp_path / "gelu.py").write_text("def gelu(x:\n")  # broken code is an attempt
    assert not is_blank(course, tmp_path)


STUB_GELU = (PROJECT / "exercises" / "the-block" / "gelu.py").read_text()
GELU = "0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3)))"


@pytest.mark.parametrize(
    "attempt",
    [
        STUB_GELU + f"\n\ngelu = lambda x: {GELU}\n",  # the stub left above a lambda
        STUB_GELU.replace("def gelu(x)", "def _gelu(x)") + f"\n\ngelu = lambda x: {GELU}\n",
        STUB_GELU + f"\n\nexec('def gelu(x):\\n    return {GELU}')\n",
        STUB_GELU + "\n\nfrom math import erf as gelu\n",
        STUB_GELU + "\n\nif True:\n    def gelu(x):\n        return x\n",
        "import functools\n\n\n@functools.lru_cache\ndef gelu(x):\n    pass\n",
        STUB_GELU + "\n\ndef _later(eps=globals().update(gelu=abs)):\n    pass\n",
    ],
    ids=[
        "lambda-below-stub",
        "lambda",
        "exec",
        "import-as",
        "if",
        "decorator",
        "default-with-code",
    ],
)
def test_a_function_bound_other_than_by_a_plain_def_is_an_attempt_not_blank(tmp_path, attempt):
    from grader.course.manifest import load
    from grader.intake.collect import one

    for module in MODULES:
        shutil.copy(PROJECT / "exercises" / "the-block" / f"{module}.py", tmp_path)
    (tmp_path / "gelu.py").write_text(attempt)
    submission = one(
        load(PROJECT / "course.json", "the-block"), "eve", tmp_path, tmp_path.parent / "work"
    )
    assert not submission.blank, submission.notes


def test_a_zip_with_an_old_and_a_final_attempt_is_graded_from_the_final_one_by_its_dates(tmp_path):
    from grader.course.manifest import load
    from grader.intake.collect import one

    ddof1 = (ADA / "layernorm.py").read_text().replace("keepdims=True)", "keepdims=True, ddof=1)")
    assert "ddof=1" in ddof1
    with zipfile.ZipFile(tmp_path / "eve.zip", "w") as zf:
        for folder, month in (("v1", 1), ("v2", 2)):  # v2, the final one, comes second by name
            for name, source in ada(f"{folder}/").items():
                text = (
                    ddof1
                    if folder == "v1" and name.endswith("layernorm.py")
                    else source.read_text()
                )
                zf.writestr(zipfile.ZipInfo(name, date_time=(2024, month, 1, 12, 0, 0)), text)
    submission = one(
        load(PROJECT / "course.json", "the-block"), "eve", tmp_path / "eve.zip", tmp_path / "work"
    )
    assert "ddof=1" not in (submission.folder / "layernorm.py").read_text()
    assert (
        "graded the course's modules in v2/, not those in v1/: its modules were changed last"
        in submission.notes
    )


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_link_entry_named_like_a_module_never_stands_in_for_the_file_unpacked(tmp_path):
    """The stub check reads the entry that is unpacked: a link entry first, with the stub's text as
    its target, does not make the student's real modules count as stubs."""
    from grader.course.manifest import load
    from grader.intake.collect import one

    with zipfile.ZipFile(tmp_path / "eve.zip", "w") as zf:
        for module in MODULES:
            zf.writestr(
                f"exercises/{module}.py",
                (PROJECT / "exercises" / "the-block" / f"{module}.py").read_text(),
            )
            link = zipfile.ZipInfo(f"mine/{module}.py")
            link.external_attr = 0o120777 << 16
            zf.writestr(link, (PROJECT / "exercises" / "the-block" / f"{module}.py").read_text())
            zf.writestr(f"mine/{module}.py", (ADA / f"{module}.py").read_text())
    submission = one(
        load(PROJECT / "course.json", "the-block"), "eve", tmp_path / "eve.zip", tmp_path / "work"
    )
    assert submission.folder.name == "mine" and not submission.blank, submission.notes


def test_a_big_module_is_refused_with_the_cap_and_the_excess(tmp_path):
    from grader.course.manifest import load
    from grader.intake.collect import from_path

    subs = tmp_path / "subs"
    subs.mkdir()
    zip_of(subs / "eve.zip", {**ada(), "layernorm.py": "x = 1\n" + "#" * (6 << 20)})
    found, _ = from_path(load(PROJECT / "course.json", "the-block"), subs, tmp_path / "work")
    assert found[0].error.startswith(
        "the modules in the submission's top folder take 6.0 MiB: 1.0 MiB over the limit of 5.0 MiB"
    ), found[0].error


def test_a_module_that_is_a_link_is_left_out_and_the_note_says_so(tmp_path):
    from grader.course.manifest import load
    from grader.intake.collect import from_path

    (tmp_path / "elsewhere").mkdir()
    shutil.copy(ADA / "gelu.py", tmp_path / "elsewhere" / "gelu.py")
    folder = tmp_path / "subs" / "eve"
    folder.mkdir(parents=True)
    for m in MODULES:
        if m != "gelu":
            shutil.copy(ADA / f"{m}.py", folder / f"{m}.py")
    (folder / "gelu.py").symlink_to(tmp_path / "elsewhere" / "gelu.py")
    found, _ = from_path(
        load(PROJECT / "course.json", "the-block"), tmp_path / "subs", tmp_path / "work"
    )
    assert not (found[0].folder / "gelu.py").exists()
    assert "left out gelu.py: a link, never followed (hand in the file itself)" in found[0].notes


# The student's side: grade pack, grade check on a hand-in; autograde --html after a plain run.


def test_pack_writes_a_hand_in_that_check_and_autograde_read_alike(mini_course, tmp_path):
    exercises = mini_course.parent / "exercises"
    write_tree(exercises, {**GOOD, "notes.bin": "x" * (6 << 20)})
    code, output = grade("pack", "--course", mini_course, "--out", tmp_path / "hand-in.zip")
    assert code == 0, output
    assert "will be graded from mathy.py" in output
    assert "left out notes.bin (6.0 MiB): over the cap of 5.0 MiB on the files graded" in output
    assert zipfile.ZipFile(tmp_path / "hand-in.zip").namelist() == ["mathy.py"]
    code, output = grade("check", "--course", mini_course, "--path", tmp_path / "hand-in.zip")
    assert code == 0 and "1/1" in output, output
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(GOOD["mathy.py"]), nbformat.v4.new_code_cell("double(3)")]
    nbformat.write(nb, tmp_path / "mine.ipynb")
    code, output = grade("check", "--course", mini_course, "--path", tmp_path / "mine.ipynb")
    assert code == 0 and "graded the code cells of mine.ipynb" in output, output
    code, output = grade("pack", tmp_path / "mine.ipynb", "--course", mini_course)
    assert code == 0 and "mine.ipynb: will be graded from mathy.py" in output, output


def test_pack_names_every_module_it_zipped(mini_course, tmp_path):
    """A helper module of the student's is zipped and graded: pack names it with the course's."""
    helper = "def twice_of(x):\n    return 2 * x\n"
    write_tree(mini_course.parent / "exercises", {**GOOD, "myhelpers.py": helper})
    code, output = grade("pack", "--course", mini_course, "--out", tmp_path / "hand-in.zip")
    assert code == 0, output
    assert "will be graded from mathy.py, myhelpers.py" in output, output
    assert sorted(zipfile.ZipFile(tmp_path / "hand-in.zip").namelist()) == [
        "mathy.py",
        "myhelpers.py",
    ]


def test_pack_of_the_stubs_says_blank_and_fails(mini_course, tmp_path):
    code, output = grade("pack", "--course", mini_course, "--out", tmp_path / "hand-in.zip")
    assert (
        code == 1
        and "blank: every exercise function is missing or still the released stub" in output
    ), output


def test_autograde_html_after_a_plain_run_writes_the_pages(mini_course, submission, tmp_path):
    folder = submission(GOOD, name="ada")
    out = tmp_path / "scores"
    code, output = grade("autograde", folder.parent, "--out", out, "--course", mini_course)
    assert code == 0 and not (out / "ada.html").exists(), output
    code, output = grade(
        "autograde", folder.parent, "--out", out, "--course", mini_course, "--html"
    )
    assert code == 0, output
    assert "Score: <strong>4 / 4" in (out / "ada.html").read_text()
    code, output = grade(
        "autograde", folder.parent, "--out", out, "--course", mini_course, "--html"
    )
    assert code == 0 and "1 submissions unchanged" in output  # now both outputs are there
