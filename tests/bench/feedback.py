"""`make feedback`: the feedback a student gets, measured where the student stands, in a release.

Builds the student release with `grade release` in a temporary folder, installs its grader into a
fresh venv (`pip install <release>`, as the release README's set-up does), and runs that venv's
`grade check --json` in the release on every single fault of tests/unit/mutants.py (FAULTS: the
catalogue's mistakes written as students write them, and uncatalogued ones) and on the reference.
Prints, per fault, the diagnoses its failed tests got, then the three figures of issue 14's "Done
when":

- catalogued faults named, of those that fail a public test of their own problem (target 100 %): a
  fault whose own problem passes every public test and that shows only in another problem's (a GELU
  with the course text's rounded constants, within gelu's tolerance, carried beyond it by the MLP's
  W_2) is named nowhere, since a component's mistake is named in another problem only where its own
  tests found it (issue 28); it is listed;
- wrong diagnoses: a diagnosis naming a mistake other than the fault's, or any on the reference
  (target 0);
- uncatalogued faults whose failed tests' messages contain the words recorded for them in mutants.py
  (the aspect to change), of those that fail a public test (target >= 80 %).

Faults that pass every public test (caught by the hidden tests only) have nothing to diagnose in a
release: they are listed, outside the shares. Exits 0 when the three targets are met.

    python tests/bench/feedback.py [--keep DIR]

tests/unit/test_feedback.py makes the same measurement on a copy of the checkout without the
solutions.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import venv
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests" / "the-block" / "checks"))  # mutants.py

from mutants import FAULTS, faulty  # noqa: E402

WORDS_SHARE = 0.8


@dataclass
class Result:
    """What one submission's `grade check --json` showed: the diagnoses and the text of its failed
    tests."""

    failed: int = 0
    diagnoses: list[str] = field(default_factory=list)  # known mistakes named
    text: str = ""
    hints: list[str] = field(default_factory=list)  # facts given where no known mistake explains
    problems: set[str] = field(default_factory=set)  # the problems with a failed test


def read_check(score_file: Path) -> Result:
    doc = json.loads(score_file.read_text())
    failed = [t for t in doc["tests"] if t["status"] != "passed"]
    said = [t["diagnosis"] for t in failed if t.get("diagnosis")]
    return Result(
        len(failed),
        [d for d in said if not d.startswith("hint.")],
        "\n".join(t.get("output", "") for t in failed),
        [d for d in said if d.startswith("hint.")],
        {t["problem"] for t in failed},
    )


def check_all(
    check: Callable[[Path, Path], None], subs: Path, out: Path, jobs: int = 2
) -> dict[str, Result]:
    """Every fault of FAULTS and the reference written into ``subs`` and checked by ``check(folder,
    json)``."""
    names = [*FAULTS, "reference"]
    for name in names:
        faulty(subs, name, FAULTS[name].edits if name in FAULTS else {})
    out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(lambda name: check(subs / name, out / f"{name}.json"), names))
    return {name: read_check(out / f"{name}.json") for name in names}


@dataclass
class Figures:
    named: int = 0
    catalogued: int = 0
    wrong: int = 0
    hinted: int = 0
    uncatalogued: int = 0
    public_pass: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)  # catalogued, failing another's tests only
    lines: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return (
            self.named == self.catalogued
            and not self.wrong
            and self.hinted >= WORDS_SHARE * self.uncatalogued
        )

    def summary(self) -> str:
        def share(a: int, b: int) -> str:
            return f"{a}/{b} ({100 * a / b:.0f} %)" if b else "0/0"

        return "\n".join(
            [
                f"catalogued faults named: {share(self.named, self.catalogued)} (target 100 %)",
                f"wrong diagnoses: {self.wrong} (target 0; the reference included)",
                "uncatalogued faults whose feedback names the aspect to change: "
                f"{share(self.hinted, self.uncatalogued)}"
                f" (target >= {WORDS_SHARE:.0%})",
                "faults that pass every public test (hidden tests only, nothing to diagnose "
                "here): "
                f"{len(self.public_pass)}: {', '.join(self.public_pass) or '-'}",
                "catalogued faults whose own problem passes every public test, seen only through "
                "another's (a component's mistake is named only where its own tests find it): "
                f"{len(self.elsewhere)}: {', '.join(self.elsewhere) or '-'}",
            ]
        )


def figures(results: dict[str, Result]) -> Figures:
    """The three figures from the checks' results."""
    fig = Figures()
    reference = results["reference"]
    fig.wrong += len(reference.diagnoses)
    fig.lines.append(f"{'reference':<30} {'ok' if not reference.diagnoses else 'DIAGNOSED'}")
    for name, fault in sorted(FAULTS.items()):
        got = results[name]
        wrong = [d for d in got.diagnoses if d != fault.mistake]
        fig.wrong += len(wrong)
        if not got.failed:
            fig.public_pass.append(name)
            verdict = "passes"
        elif fault.mistake and fault.problem not in got.problems:
            fig.elsewhere.append(name)
            verdict = "elsewhere"
        elif fault.mistake:
            fig.catalogued += 1
            fig.named += fault.mistake in got.diagnoses
            verdict = "named" if fault.mistake in got.diagnoses else "MISSED"
        else:
            fig.uncatalogued += 1
            missing = [w for w in fault.words if w.lower() not in got.text.lower()]
            hinted = bool(fault.words) and not missing
            fig.hinted += hinted
            verdict = (
                "hinted"
                if hinted
                else f"NO HINT (wants {', '.join(map(repr, missing or ['words']))})"
            )
        shown = ", ".join(sorted(set(got.diagnoses + got.hints))) or "-"
        fig.lines.append(f"{name:<30} {verdict:<12} {'WRONG ' if wrong else ''}{shown}")
    return fig


def build_release(tmp: Path) -> tuple[Path, Path]:
    """The release (`grade release`) and a fresh venv with its grader installed: (release, venv's
    grade)."""
    release = tmp / "release"
    run(
        [
            sys.executable,
            "-m",
            "grader",
            "release",
            "-a",
            "the-block",
            "--out",
            str(release),
            "--nbgrader-dir",
            str(tmp / "nb"),
        ],
        cwd=ROOT,
    )
    venv.create(tmp / "venv", with_pip=True)
    run([str(tmp / "venv" / "bin" / "pip"), "install", "--quiet", str(release)], cwd=tmp)
    return release, tmp / "venv" / "bin" / "grade"


def run(command: Sequence[str], cwd: Path) -> None:
    proc = subprocess.run(command, cwd=cwd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(
            f"feedback: {' '.join(command)} failed:\n{proc.stdout[-2000:]}{proc.stderr[-2000:]}"
        )


def checker(grade: Sequence[str], cwd: Path) -> Callable[[Path, Path], None]:
    """``check(folder, json)``: `grade check --path folder --json json` in ``cwd`` (its exit status
    is the verdict, 1 for a failed test; anything else with no score file is a failure of the
    measurement)."""

    def check(folder: Path, score_file: Path) -> None:
        proc = subprocess.run(
            [*grade, "check", "--path", str(folder), "--json", str(score_file)],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=600,
        )
        if not score_file.is_file():
            raise RuntimeError(
                f"grade check on {folder.name} wrote no score file:\n{proc.stdout}{proc.stderr}"
            )

    return check


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--keep", type=Path, help="build in this folder and keep it (default: a temporary one)"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="feedback-") as scratch:
        tmp = args.keep or Path(scratch)
        release, grade = build_release(tmp)
        results = check_all(checker([str(grade)], release), tmp / "subs", tmp / "out")
    fig = figures(results)
    print("\n".join(fig.lines))
    print("\n" + fig.summary())
    return 0 if fig.ok else 1


if __name__ == "__main__":
    sys.exit(main())
