"""The regrade log: what each ``grade autograde`` run changed, per student, said at the end of the
run and kept in ``OUT/.grade-log`` (JSON Lines, one change a line; not ``*.json``, so never read as
a score file).

Before a batch the score files of --out are summed up (:func:`snapshot`: total, each problem, the
late penalty, the adjustments, when graded); after it, each student whose summary differs is one
change (:func:`changes`): ``new`` (no score file before), ``regraded`` (graded again: a changed
submission, course or grader, ``--force``) or ``re-scored`` (the same grading, new overrides or
submission time), with what moved, e.g. ``edsger_post_ln: 67.5 -> 72.5 (re-scored: block 17.5 ->
22.5; block +5 by hand: pre-LN wiring right in a later cell [ta.dijkstra])``. So a TA's ``grade
override add`` and the rerun that applies it leave a line saying who changed what, and a rerun that
changed nothing says so."""

from __future__ import annotations

import json
from datetime import datetime, timezone
from pathlib import Path

import click

LOG = ".grade-log"


def _summary(doc: dict) -> dict:
    late = doc.get("late") or {}
    return {
        "score": doc.get("score"),
        "status": doc.get("status"),
        "graded_at": doc.get("graded_at"),
        "problems": {p["name"]: p["score"] for p in doc.get("problems", [])},
        "penalty": late.get("penalty", 0.0),
        "adjustments": [
            f"{a['problem']} {a['applied']:+g} by hand: {a['reason']} [{a['by']}]"
            for a in doc.get("adjustments", [])
        ],
    }


def snapshot(out_dir: Path) -> dict[str, dict]:
    """Each score file's summary, by student (files that do not read as one are left out)."""
    found = {}
    for path in sorted(Path(out_dir).glob("*.json")) if Path(out_dir).is_dir() else []:
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
            found[doc["student"]] = _summary(doc)
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            continue
    return found


def _what(before: dict, after: dict) -> str:
    moved = [
        f"{name} {before['problems'].get(name, 0):g} -> {score:g}"
        for name, score in after["problems"].items()
        if before["problems"].get(name) != score
    ]
    if before["penalty"] != after["penalty"]:
        moved.append(f"late penalty {before['penalty']:g} -> {after['penalty']:g}")
    moved += [a for a in after["adjustments"] if a not in before["adjustments"]]
    moved += [f"no longer: {a}" for a in before["adjustments"] if a not in after["adjustments"]]
    if before["status"] != after["status"]:
        moved.append(f"status {before['status']} -> {after['status']}")
    return "; ".join(moved)


def changes(before: dict[str, dict], after: dict[str, dict]) -> list[dict]:
    """One entry per student whose score file changed: ``student``, ``how`` (new, regraded,
    re-scored), ``before`` and ``after`` (scores), ``what`` (the text)."""
    found = []
    for student, now in sorted(after.items()):
        was = before.get(student)
        if was == now:
            continue
        if was is None:
            found.append(
                {
                    "student": student,
                    "how": "new",
                    "before": None,
                    "after": now["score"],
                    "what": f"{now['score']:g}" if now["score"] is not None else "",
                }
            )
            continue
        how = "regraded" if was["graded_at"] != now["graded_at"] else "re-scored"
        what = _what(was, now)
        if not what and was["score"] == now["score"]:  # graded again, nothing moved: no change
            continue
        found.append(
            {
                "student": student,
                "how": how,
                "before": was["score"],
                "after": now["score"],
                "what": what,
            }
        )
    return found


def record(out_dir: Path, found: list[dict], now: datetime | None = None) -> None:
    """Append ``found`` to ``OUT/.grade-log``, stamped with the run's time."""
    if not found:
        return
    stamp = (now or datetime.now(timezone.utc)).isoformat(timespec="milliseconds")
    with open(Path(out_dir) / LOG, "a", encoding="utf-8") as log:
        for change in found:
            log.write(
                json.dumps({"at": stamp, **change}, ensure_ascii=False, sort_keys=True) + "\n"
            )


def lines(found: list[dict], had_files: bool) -> list[str]:
    """What the run prints: one line per change (new files only counted), or that nothing
    changed."""
    changed = [c for c in found if c["how"] != "new"]
    new = len(found) - len(changed)
    if not had_files:
        return []
    out = [
        f"changed since the last run: {c['student']}: {c['before']:g} -> {c['after']:g} "
        f"({c['how']}" + (f": {c['what']}" if c["what"] else "") + ")"
        for c in changed
    ]
    if new:
        out.append(f"{new} new score file(s) since the last run")
    return out or ["no score changed since the last run"]


def say(out_dir: Path, before: dict[str, dict], quiet: bool) -> None:
    """Record and say (unless ``quiet``) what a run changed since ``before`` (:func:`snapshot`)."""
    found = changes(before, snapshot(out_dir))
    try:
        record(out_dir, found)
    except OSError as err:  # the grades are written; only the log is not
        click.echo(f"warning: {out_dir / LOG}: not written: {err}", err=True)
    if not quiet:
        for line in lines(found, bool(before)):
            click.echo(line, err=True)
