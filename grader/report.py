"""Score files: the JSON Schema, validation, atomic writes; the terminal tables of scores."""

from __future__ import annotations

import json
import os
import sys
import tempfile
from contextlib import contextmanager
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterable, Iterator, Mapping

from grader.errors import GradeError
from grader.feedback.causes import cause_words, causes, explained, test_names
from grader.feedback.mismatch import split_diagnosis

SCHEMA_PATH = Path(__file__).with_name("score.schema.json")


@lru_cache(maxsize=1)
def schema() -> dict:
    """The score file's JSON Schema (draft 2020-12)."""
    return json.loads(SCHEMA_PATH.read_text())


def jsonschema_module():
    """``jsonschema``, imported without its optional IRI format checker.

    jsonschema imports ``rfc3987_syntax`` when it is installed (nbgrader brings it), which builds a
    grammar at import: 2.5 s on every run. Our schemas check no ``format``, so it is never needed.
    """
    sys.modules.setdefault("rfc3987_syntax", None)  # None in sys.modules: "not installed"
    import jsonschema

    return jsonschema


@lru_cache(maxsize=1)
def _validator():
    return jsonschema_module().Draft202012Validator(schema())


@lru_cache(maxsize=1)
def _compiled():
    """The schema compiled to Python by ``fastjsonschema`` (the keywords it uses mean the same in
    every draft)."""
    import fastjsonschema

    return fastjsonschema.compile(schema())


def validate(doc: dict, source: str = "score") -> None:
    """Check ``doc`` against the schema.

    ``fastjsonschema`` checks, as nbformat does for notebooks: 0.13 ms a score file, where
    ``jsonschema`` takes 2.9 ms (a tenth of a submission's grading). What it refuses, ``jsonschema``
    judges and words (it has the last word: fastjsonschema reads ``$`` as the very end of a string,
    not before a final newline). A test checks that the two agree on JSON data.

    :raises GradeError: one line naming the source and the first invalid field.
    """
    import fastjsonschema

    try:
        _compiled()(doc)
    except fastjsonschema.JsonSchemaException:
        error = next(iter(sorted(_validator().iter_errors(doc), key=lambda e: list(e.path))), None)
        if error is None:
            return
        field = ".".join(str(p) for p in error.path) or "(top level)"
        raise GradeError(f"{source}: field {field!r}: {error.message}") from None


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_atomic(path: Path, data: str | bytes, encoding: str = "utf-8") -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the whole new one, never a part.

    Temporary file in the same folder, flush, fsync, ``os.replace``, then fsync the folder. Text is
    encoded with ``encoding`` and its line ends are written as they are.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=".score-", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode(encoding, errors="replace"))
            f.flush()
            os.fsync(f.fileno())
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # as an ordinary file would be, not mkstemp's 0600
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    if hasattr(os, "O_DIRECTORY"):
        dir_fd = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def write_score(doc: dict, path: Path) -> None:
    """Validate ``doc`` and write it atomically to ``path``."""
    validate(doc, str(path))
    write_atomic(path, dumps(doc))


def _fmt(x: float) -> str:
    return f"{x:g}"


def problem_table(doc: dict, console, full_points: Mapping[str, float] | None = None) -> None:
    """Print one student's table: problem, tests passed, points; then one line per failed test.

    :param full_points: problem -> its points in the course, for a run of the public tests only
        (``grade check``): each row and the total then say what share of the problem's points those
        tests carry.
    """
    from rich.table import Table

    table = Table(title=f"{doc['assignment']}: {doc['student']}", title_justify="left")
    table.add_column("problem")
    table.add_column("tests passed", justify="right")
    table.add_column("points", justify="right")
    if full_points is not None:
        table.add_column("public tests carry", justify="right")
    for p in doc["problems"]:
        style = (
            "green" if p["score"] == p["max_score"] else ("red" if p["score"] == 0 else "yellow")
        )
        share = (
            [f"{_fmt(p['max_score'])} of {_fmt(full_points[p['name']])}"]
            if full_points is not None
            else []
        )
        table.add_row(
            p["name"],
            f"{p['passed']}/{len(p['tests'])}",
            f"[{style}]{_fmt(p['score'])}/{_fmt(p['max_score'])}[/]",
            *share,
        )
    share = (
        [f"[bold]{_fmt(doc['max_score'])} of {_fmt(_total(full_points, doc))}[/]"]
        if full_points is not None
        else []
    )
    table.add_row(
        "[bold]total[/]", "", f"[bold]{_fmt(doc['score'])}/{_fmt(doc['max_score'])}[/]", *share
    )
    console.print(table)
    from rich.markup import escape

    if full_points is not None:
        console.print(escape(public_points_note(doc, full_points)), highlight=False, soft_wrap=True)

    failed = [t for t in doc["tests"] if t["status"] != "passed"]
    shown: set[tuple[str, str]] = set()  # (problem, diagnosis): each said once
    explains = explained(failed)
    for group in causes(failed):
        if len(group) > 1:  # one cause, said once, its tests listed under it
            cause, rest = cause_words(group)
            console.print(
                f"[red]✗[/] [bold]{escape(group[0]['problem'])}[/]: {escape(cause)}",
                highlight=False,
                soft_wrap=True,
            )
            console.print(
                f"    the cause of {len(group)} failed tests: " + ", ".join(test_names(group)),
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
            if rest:
                console.print(
                    "    " + rest.replace("\n", "\n    "),
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )
            continue
        t = group[0]
        diagnosis, output = split_diagnosis(t)
        first, _, rest = output.partition("\n")
        console.print(
            f"[red]✗[/] [bold]{escape(t['problem'])}[/] {escape(t['name'])}: {escape(first)}",
            highlight=False,
            soft_wrap=True,
        )
        if diagnosis is not None:
            said = (t["problem"], diagnosis) in shown
            shown.add((t["problem"], diagnosis))
            console.print(
                "    diagnosis: see above"
                if said
                else f"    [bold yellow]diagnosis: {escape(diagnosis)}[/]",
                highlight=False,
                soft_wrap=True,
            )
            tests = explains[(t["problem"], diagnosis)]
            if not said and len(tests) > 1:
                console.print(
                    f"    it explains {len(tests)} failed tests: {', '.join(tests)}",
                    highlight=False,
                    markup=False,
                    soft_wrap=True,
                )
        if rest:
            console.print(
                "    " + rest.replace("\n", "\n    "), highlight=False, markup=False, soft_wrap=True
            )


def _total(full_points: Mapping[str, float], doc: dict) -> float:
    from grader.scoring import points

    return points(sum(full_points[p["name"]] for p in doc["problems"]))


def public_points_note(doc: dict, full_points: Mapping[str, float]) -> str:
    """The sentence under ``grade check``'s table: the public tests carry only part of the
    points."""
    public, full = doc["max_score"], _total(full_points, doc)
    if len(doc["problems"]) == 1:
        ran = (
            f"grade check ran {doc['problems'][0]['name']}'s public tests only, which carry "
            f"{_fmt(public)} of its "
            f"{_fmt(full)} points"
        )
    else:
        ran = (
            f"grade check ran the public tests only, which carry {_fmt(public)} of the "
            f"{_fmt(full)} points"
        )
    if public >= full:
        return f"{ran}."
    return (
        f"{ran}; hidden tests of the same rules, graded after the deadline, carry the other "
        f"{_fmt(full - public)}."
    )


SUMMARY_KEYS = ("student", "status", "blank", "score", "max_score")


def summary_of(doc: dict) -> dict:
    """What :func:`summary_table` shows of a score file, and nothing else: a batch keeps this much
    of each student (a few hundred bytes, not the file's tens of KB), so its memory stays flat in
    the class size."""
    return {
        **{key: doc[key] for key in SUMMARY_KEYS if key in doc},
        "problems": [
            {key: p[key] for key in ("name", "score", "max_score")} for p in doc["problems"]
        ],
        "flags": flags(doc),
    }


def flags(doc: dict) -> list[str]:
    """Short words for what changed a score besides its tests, or leaves it in doubt: the
    instructor's adjustments, an extension, a late penalty, a missing submission time (refused: not
    exported)."""
    found = (
        [f"adjusted {sum(a['applied'] for a in doc.get('adjustments', [])):+g}"]
        if doc.get("adjustments")
        else []
    )
    late = doc.get("late") or {}
    if late.get("extension"):
        found.append("extended")
    if late.get("timestamp"):
        found.append(f"no timestamp: {late['counted_as'].replace('_', ' ')}")
    if late.get("penalty"):
        found.append(f"late -{_fmt(late['penalty'])}")
    return found


TABLE_ROWS = (
    500  # rows a printed table holds: a class of 10,000 prints in pages, never one table in memory
)


def _summary_row(doc: dict, names: list[str]) -> tuple[str, list[str], str, str]:
    """A student's row: (name, cells, total, style); a grader error is no grade at all, never a
    plain 0."""
    if doc.get("status") == "grader_error":
        return doc["student"], ["grader error"] * len(names), "grader error", "red"
    by_name = {p["name"]: p for p in doc["problems"]}
    cells = [
        f"{_fmt(by_name[n]['score'])}/{_fmt(by_name[n]['max_score'])}" if n in by_name else "-"
        for n in names
    ]
    total = f"{_fmt(doc['score'])}/{_fmt(doc['max_score'])}" + "".join(
        f" ({f})" for f in doc.get("flags", [])
    )
    if doc.get("blank"):  # graded as it scores, but never mistaken for a real 0
        return doc["student"], cells, f"{total} blank", "yellow"
    return doc["student"], cells, total, ""


def summary_table(docs: Iterable[dict], console, title: str) -> None:
    """Print the class summary: one row per student, one column per problem (in pages of TABLE_ROWS
    rows, every page as wide as the widest row)."""
    from rich.table import Table
    from rich.text import Text

    docs = list(docs)
    names = [p["name"] for p in docs[0]["problems"]] if docs else []
    rows = [_summary_row(doc, names) for doc in docs]
    headers = ["student", *names, "total"]
    lines = [[student, *cells, total] for student, cells, total, _ in rows]
    widths = [max(len(cell) for cell in column) for column in zip(headers, *lines)]
    for start in range(0, max(len(rows), 1), TABLE_ROWS):
        table = Table(title=title if start == 0 else None, title_justify="left")
        for header, width in zip(headers, widths):
            table.add_column(
                header, justify="left" if header == "student" else "right", min_width=width
            )
        for student, cells, total, style in rows[start : start + TABLE_ROWS]:
            if style == "red":
                flag = Text("grader error", style="bold red")
                table.add_row(Text(student, style="red"), *[flag] * len(names), flag)
            elif style == "yellow":
                table.add_row(
                    Text(student, style="yellow"), *cells, Text(total, style="bold yellow")
                )
            else:
                table.add_row(Text(student), *cells, total)
        console.print(table)


@contextmanager
def progress(total: int, console, quiet: bool = False) -> Iterator[Callable[[str], None]]:
    """Report grading progress; yields ``done(line)``, to call once per graded submission.

    On a terminal: a rich progress bar with the count, the rate (submissions per second) and the
    ETA. Elsewhere (CI, a log file): one plain line per submission. ``quiet``: nothing.
    """
    if quiet or total == 0:
        yield lambda line: None
        return
    if not console.is_terminal:
        count = [0]

        def plain(line: str) -> None:
            count[0] += 1
            console.print(f"[{count[0]}/{total}] {line}", markup=False, highlight=False)

        yield plain
        return
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        ProgressColumn,
        TextColumn,
        TimeRemainingColumn,
    )
    from rich.text import Text

    class Rate(ProgressColumn):
        def render(self, task) -> Text:
            return Text(f"{task.speed:.1f}/s" if task.speed else "", style="progress.data.speed")

    columns = [
        TextColumn("grading"),
        BarColumn(),
        MofNCompleteColumn(),
        Rate(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
    ]
    with Progress(*columns, console=console) as bar:
        task = bar.add_task("grading", total=total)
        yield lambda line: bar.advance(task)
