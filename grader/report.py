"""Score files: the JSON Schema, validation, atomic writes, and the terminal table."""
from __future__ import annotations

import json
import os
import tempfile
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from .errors import GradeError

SCHEMA_PATH = Path(__file__).with_name("score.schema.json")


@lru_cache(maxsize=1)
def schema() -> dict:
    """The score file's JSON Schema (draft 2020-12)."""
    return json.loads(SCHEMA_PATH.read_text())


@lru_cache(maxsize=1)
def _validator():
    import jsonschema                                   # imported here: it is slow to import

    return jsonschema.Draft202012Validator(schema())


def validate(doc: dict, source: str = "score") -> None:
    """Check ``doc`` against the schema.

    :raises GradeError: one line naming the source and the first invalid field.
    """
    error = next(iter(sorted(_validator().iter_errors(doc), key=lambda e: list(e.path))), None)
    if error is not None:
        field = ".".join(str(p) for p in error.path) or "(top level)"
        raise GradeError(f"{source}: field {field!r}: {error.message}")


def dumps(doc: dict) -> str:
    return json.dumps(doc, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def write_atomic(path: Path, data: str | bytes, encoding: str = "utf-8") -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the whole new one, never a part.

    Temporary file in the same folder, flush, fsync, ``os.replace``, then fsync the folder. Text is encoded
    with ``encoding`` and its line ends are written as they are.
    """
    path = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data if isinstance(data, bytes) else data.encode(encoding))
            f.flush()
            os.fsync(f.fileno())
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


def problem_table(doc: dict, console) -> None:
    """Print one student's table: problem, tests passed, points; then one line per failed test."""
    from rich.table import Table

    table = Table(title=f"{doc['assignment']}: {doc['student']}", title_justify="left")
    table.add_column("problem")
    table.add_column("tests passed", justify="right")
    table.add_column("points", justify="right")
    for p in doc["problems"]:
        style = "green" if p["score"] == p["max_score"] else ("red" if p["score"] == 0 else "yellow")
        table.add_row(p["name"], f"{p['passed']}/{len(p['tests'])}",
                      f"[{style}]{_fmt(p['score'])}/{_fmt(p['max_score'])}[/]")
    table.add_row("[bold]total[/]", "", f"[bold]{_fmt(doc['score'])}/{_fmt(doc['max_score'])}[/]")
    console.print(table)
    from rich.markup import escape

    failed = [t for t in doc["tests"] if t["status"] != "passed"]
    for t in failed:
        first, _, rest = t["output"].partition("\n")
        console.print(f"[red]✗[/] [bold]{escape(t['problem'])}[/] {escape(t['name'])}: {escape(first)}",
                      highlight=False)
        if rest:
            console.print("    " + rest.replace("\n", "\n    "), highlight=False, markup=False)


def summary_table(docs: Iterable[dict], console, title: str) -> None:
    """Print the class summary: one row per student, one column per problem."""
    from rich.table import Table

    docs = list(docs)
    names = [p["name"] for p in docs[0]["problems"]] if docs else []
    table = Table(title=title, title_justify="left")
    table.add_column("student")
    for name in names:
        table.add_column(name, justify="right")
    table.add_column("total", justify="right")
    for doc in docs:
        by_name = {p["name"]: p for p in doc["problems"]}
        cells = [f"{_fmt(by_name[n]['score'])}/{_fmt(by_name[n]['max_score'])}" if n in by_name else "-"
                 for n in names]
        table.add_row(doc["student"], *cells, f"{_fmt(doc['score'])}/{_fmt(doc['max_score'])}")
    console.print(table)
