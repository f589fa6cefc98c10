"""The floor of `grade autograde` on copies of the reference: the same sandboxed work with nothing
graded.

For each submission, as the runner does: its private copy, then for each phase
(grader.grading.phases) a worker forked from the zygote, confined, given the reference's modules the
phase holds, importing the submission's modules, then every call a correct submission's grading
makes in that phase (recorded once from a real grading, with its real arguments), sent in one batch
and answered by the student's real functions. No suite runs, nothing is compared, scored, signed or
written: what is left of a submission's cost is the sandbox, the student's arithmetic and the wire.

    python tests/bench/floor.py --submissions 300 --jobs 2 [--sandbox bwrap]
Run it inside a cgroup (tests/bench/cgroup.py) to count the zygotes' and the workers' CPU too.
"""

from __future__ import annotations

import argparse
import multiprocessing
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from grader.course.manifest import load  # noqa: E402
from grader.errors import StudentError  # noqa: E402
from grader.grading import phases  # noqa: E402
from grader.sandbox.policy import available_levels  # noqa: E402

COURSE = load(ROOT / "course.json", "the-block")


def recorded_calls() -> dict[frozenset, list[tuple]]:
    """Every call one correct submission's grading makes, by phase (its problems): (module,
    function, args, kwargs, return_inputs), recorded from a real grading of the reference."""
    from grader.grading.executors import run
    from grader.grading.results import Job
    from grader.sandbox import client

    calls: dict[tuple, list[tuple]] = {}
    original = client.Worker.call

    def recording(self, module, function, args, kwargs, timeout, return_inputs=False, **rest):
        calls.setdefault(tuple(self._flight.modules), []).append(
            (module, function, args, kwargs, return_inputs)
        )
        return original(self, module, function, args, kwargs, timeout, return_inputs, **rest)

    client.Worker.call = recording
    try:
        run(COURSE, [Job("reference", COURSE.solutions)], lambda _: None, hidden=True, warm=False)
    finally:
        client.Worker.call = original
    return {phase.problems: calls.get(tuple(phase.modules), []) for phase in phases.plan(COURSE)}


def grade_floor(submissions: list[Path], calls: dict[frozenset, list[tuple]], level: str) -> None:
    """The sandboxed part of grading ``submissions``, one after another, in this process."""
    from grader.sandbox.client import Worker
    from grader.sandbox.inflight import Spent
    from grader.sandbox.process import Copy
    from grader.sandbox.zygote import Zygote

    plan = phases.plan(COURSE)
    with Zygote(level, imports=COURSE.limits.imports) as zygote:
        for folder in submissions:
            copy = Copy(folder, zygote.spool, zygote.run_as, shared=True)
            spent = Spent()
            try:
                for phase in plan:
                    with Worker(
                        folder,
                        COURSE.limits,
                        level,
                        zygote,
                        None,
                        phase.modules,
                        reference=phase.reference,
                        spent=spent,
                        copy=copy,
                    ) as worker:
                        made = calls[phase.problems]
                        encoded = [worker.encode_call(f, a, k, r) for _, f, a, k, r in made]
                        tickets = worker.ahead(
                            [(m, f, r, e) for (m, f, _, _, r), e in zip(made, encoded)]
                        )
                        for (module, function, args, kwargs, inputs), ticket, call in zip(
                            made, tickets, encoded
                        ):
                            try:
                                worker.call(
                                    module,
                                    function,
                                    args,
                                    kwargs,
                                    COURSE.limits.call_timeout,
                                    return_inputs=inputs,
                                    ticket=ticket,
                                    encoded=call,
                                )
                            except StudentError:  # (a test of an error the function must raise)
                                pass
            finally:
                copy.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=300)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--sandbox", default=available_levels()[0])
    args = parser.parse_args()
    calls = recorded_calls()
    with tempfile.TemporaryDirectory(prefix="floor-") as tmp:
        folders = []
        for i in range(args.submissions):
            folder = Path(tmp) / f"c{i:04d}"
            folder.mkdir()
            for module in COURSE.modules:
                shutil.copy(COURSE.solutions / f"{module}.py", folder)
            folders.append(folder)
        shares = [folders[i :: args.jobs] for i in range(args.jobs)]
        processes = [
            multiprocessing.get_context("fork").Process(
                target=grade_floor, args=(share, calls, args.sandbox)
            )
            for share in shares
        ]
        for process in processes:
            process.start()
        for process in processes:
            process.join()
            if process.exitcode:
                raise SystemExit(f"floor: a process failed (exit code {process.exitcode})")


if __name__ == "__main__":
    main()
