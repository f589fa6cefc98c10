"""`make bench`: how fast the grader is, measured in one run on this machine.

Prints, with medians where a step is repeated:
- `grade check` wall time on the reference, against `python -c "import numpy"` as the baseline;
- `grade autograde` throughput (submissions per second, median of 3 runs) on N generated submissions (a
  mix of correct, partial and faulty ones) with --jobs 1 and --jobs 2, at every isolation level the machine
  offers;
- four ways, --jobs 2 at the best level: the mix and N copies of the reference (a real class's final hand-in
  is mostly correct), with the project (and its venv) where it is AND in a copy under /tmp with a venv of
  its own, as `make test` makes it (nbgrader extra installed; --skip-tmp-copy leaves the copy out);
- the floor: a worker forked from the zygote per submission importing five no-op modules, then the calls a
  correct submission makes (as many sent ahead and as many one at a time) to no-op functions: what the
  sandbox and the protocol cost with no grading and no student arithmetic, against the reference's rate;
- #12's defences on / off: the mix and the copies of the reference graded in turn by the project and by a
  copy with those defences switched off (tests/bench/defences.py says which; target <= 1.05; --skip-defences);
- the peak memory (RSS) of one worker and of one grader process, in a separate run (polling `ps`
  costs CPU that the throughput runs must not lose);
- the same N graded by a plain `pytest` run per submission (the student's code imported into the
  test process, as nbgrader- or otter-style graders do), two at a time, as the baseline;
- the time a submission that hangs costs (bounded by the call timeout and the time budgets);
- the peak memory of the autograde parent after 300 and after 3,000 submissions of the mix (flat in the class
  size: target ratio <= 1.2; --skip-class-memory leaves it out);
- the same N on a Dask LocalCluster of 2 single-threaded workers on loopback, against --jobs 2 (target >= 0.8x;
  needs the dask extra).

The machines are shared and noisy: compare figures from one run, never across runs.

    python tests/bench/bench.py [--submissions 500] [--repeat 5] [--skip-baseline] [--skip-tmp-copy] [--skip-defences]
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import defences  # tests/bench/defences.py (this script's folder is on sys.path)
from grader.course.manifest import load
from grader.sandbox.policy import BWRAP, PROCESS, available_levels

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
GRADE = [sys.executable, "-m", "grader"]
COURSE = ["-a", "the-block"]               # the class measured: the-block's
MODULES = load(ROOT / "course.json", "the-block").modules
HANG = "def gelu(x):\n    while True:\n        pass\n"
AUTOGRADE_RUNS = 3       # each throughput figure is the median of this many runs


def wall(cmd: list[str], cwd: Path = ROOT, **kwargs) -> float:
    started = time.perf_counter()
    proc = subprocess.run(cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, **kwargs)
    if proc.returncode not in (0, 1):                    # 1: `grade check` on code that fails a test
        raise SystemExit(f"bench: {' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.decode()[-500:]}")
    return time.perf_counter() - started


def make_class(folder: Path, n: int) -> None:
    """n submissions cycling through the reference, the stubs and the bundled examples (no hangs)."""
    sources = [ROOT / "solutions" / "the-block", ROOT / "exercises" / "the-block"] + sorted((ROOT / "examples" / "the-block").iterdir())
    for i in range(n):
        shutil.copytree(sources[i % len(sources)], folder / f"s{i:04d}")


def make_correct_class(folder: Path, n: int) -> None:
    """n copies of the reference's modules."""
    for i in range(n):
        (folder / f"c{i:04d}").mkdir(parents=True)
        for module in MODULES:
            shutil.copy(ROOT / "solutions" / "the-block" / f"{module}.py", folder / f"c{i:04d}")


def tmp_copy(tmp: Path) -> Path:
    """The project's tracked files copied under ``tmp`` (the system's temporary folder), with a venv of its
    own made as `make test` makes it (nbgrader extra installed)."""
    copy = defences.copy_tracked(ROOT, tmp / "project")
    made = subprocess.run(["make", "-s", ".venv/.installed-nbgrader", f"PYTHON={sys.executable}"], cwd=copy,
                          capture_output=True, text=True)
    if made.returncode != 0:
        raise SystemExit(f"bench: make install in {copy} failed: {made.stderr[-2000:]}")
    return copy


def calls_of_a_correct_submission() -> tuple[int, int]:
    """The calls one correct submission's grading makes: (sent ahead, made one at a time, wired ones included)."""
    from grader.grading.executors import run
    from grader.grading.results import Job
    from grader.sandbox import client

    counts = {"ahead": 0, "one": 0}
    original = client.Worker.call

    def counted(self, *args, ticket=None, **kwargs):
        counts["ahead" if ticket else "one"] += 1
        return original(self, *args, ticket=ticket, **kwargs)

    client.Worker.call = counted
    try:
        with tempfile.TemporaryDirectory() as tmp:
            make_correct_class(Path(tmp), 1)
            run(load(ROOT / "course.json", "the-block"), [Job("c", Path(tmp) / "c0000")], lambda _: None,
                hidden=True, level=PROCESS)
    finally:
        client.Worker.call = original
    return counts["ahead"], counts["one"]


def floor(level: str, ahead: int, one: int, n: int = 100) -> tuple[float, float]:
    """Seconds a submission, on one core: (a worker forked from the zygote that imports five no-op modules
    and answers one call; the same, then ``ahead`` calls sent ahead and ``one`` made one at a time, each to a
    no-op function on a 16x8 array)."""
    import numpy as np

    from grader.sandbox.client import Worker
    from grader.sandbox.zygote import Zygote

    course = load(ROOT / "course.json", "the-block")
    x = np.random.default_rng(0).normal(size=(16, 8))
    encoded = tuple(Worker.encode_call("f", [x], {}))
    figures = []
    with tempfile.TemporaryDirectory() as tmp, Zygote(level, imports=course.limits.imports) as zygote:
        for module in course.modules:
            Path(tmp, f"{module}.py").write_text("def f(*args, **kwargs):\n    return args[0] if args else None\n")
        module = course.modules[0]

        def submission(calls: bool) -> None:
            with Worker(Path(tmp), course.limits, level, zygote, None, course.modules, None,
                        course.functions) as worker:
                worker.call(module, "f", [x], {}, 5.0)
                if calls:
                    for start in range(0, ahead, 32):
                        for ticket in worker.ahead([(module, "f", False, encoded)] * min(32, ahead - start)):
                            worker.call(module, "f", [x], {}, 5.0, ticket=ticket, encoded=encoded)
                    for _ in range(one):
                        worker.call(module, "f", [x], {}, 5.0)

        for calls in (False, True):
            submission(calls)
            started = time.perf_counter()
            for _ in range(n):
                submission(calls)
            figures.append((time.perf_counter() - started) / n)
    return figures[0], figures[1]


def peak_rss(cmd: list[str]) -> tuple[float, float]:
    """Run ``cmd``; return the largest RSS (MiB) seen, polling `ps` every 20 ms, of one worker (a process
    running worker.py) and of one grader process among its descendants. The polling costs CPU, so
    throughput is measured in other runs."""
    peak = {"worker": 0.0, "grader": 0.0}
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    while proc.poll() is None:
        rows = [line.split(None, 3) for line in subprocess.run(
            ["ps", "-ww", "-eo", "pid=,ppid=,rss=,args="], capture_output=True, text=True).stdout.splitlines()]
        children: dict[str, list] = {}
        for row in rows:
            if len(row) == 4:
                children.setdefault(row[1], []).append(row)
        todo = [str(proc.pid)]
        while todo:
            for pid, _, rss, args in children.get(todo.pop(), []):
                todo.append(pid)
                kind = "worker" if "worker.py" in args and not args.startswith("bwrap") else "grader"
                if kind == "worker" or "python" in args:
                    peak[kind] = max(peak[kind], int(rss) / 1024)
        time.sleep(0.02)
    if proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd)} failed with exit status {proc.returncode}")
    return peak["worker"], peak["grader"]


def plain_pytest(folder: Path, **kwargs) -> subprocess.CompletedProcess:
    """The baseline's grading of one submission: one plain `pytest` run of the public and hidden suites
    with the student's modules imported into the test process (tests/bench/naive.py)."""
    suites = [str(p) for p in sorted((ROOT / "tests" / "the-block" / "public").glob("test_*.py"))
              + sorted((ROOT / "tests" / "the-block" / "hidden").glob("test_*.py"))]
    env = {**os.environ, "PYTHONPATH": str(HERE), "PYTHONDONTWRITEBYTECODE": "1", "SUBMISSION": str(folder)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "naive", "-p", "no:cacheprovider",
                           "--rootdir", str(ROOT), "-c", str(HERE / "naive.ini"), *suites],
                          cwd=ROOT, env=env, timeout=600, **kwargs)


def baseline(subs: Path, jobs: int) -> float:
    """Seconds to grade every submission with one plain `pytest` process each, `jobs` at a time."""
    def one(folder: Path) -> None:
        plain_pytest(folder, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    started = time.perf_counter()
    with ThreadPoolExecutor(jobs) as pool:
        list(pool.map(one, sorted(subs.iterdir())))
    return time.perf_counter() - started


def parent_peak_rss(cmd: list[str]) -> float:
    """Run ``cmd``; its own peak RSS (MiB, the kernel's VmHWM), not its grader processes'."""
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                peak = max([peak] + [int(line.split()[1]) for line in f if line.startswith("VmHWM:")])
        except OSError:
            pass
        time.sleep(0.2)
    if proc.returncode != 0:
        raise SystemExit(f"bench: {' '.join(cmd)} failed ({proc.returncode})")
    return peak / 1024


def class_memory(tmp: Path, level: str) -> None:
    """The parent's peak RSS grading 300 and 3,000 submissions: it keeps only what the summary shows."""
    peaks = {}
    for n in (300, 3000):
        subs = tmp / f"class-{n}"
        make_class(subs, n)
        peaks[n] = parent_peak_rss(GRADE + ["autograde", *COURSE, str(subs), "--out", str(tmp / f"out-class-{n}"),
                                            "--jobs", "2", "--sandbox", level, "--unsafe"])
        shutil.rmtree(subs)
    print(f"autograde parent peak RSS: {peaks[300]:5.1f} MiB for 300, {peaks[3000]:5.1f} MiB for 3,000 submissions "
          f"(ratio {peaks[3000] / peaks[300]:.2f}; target <= 1.2)")


def dask_seconds(cmd: list[str]) -> float | None:
    """``cmd`` (an autograde without the executor) on a LocalCluster of 2 single-threaded workers; None
    without dask."""
    try:
        import distributed
    except ImportError:
        return None
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, host="127.0.0.1",
                                  dashboard_address=None) as cluster:
        wall(cmd + ["--executor", "dask", "--scheduler", cluster.scheduler_address])          # warms the workers
        return wall(cmd + ["--executor", "dask", "--scheduler", cluster.scheduler_address, "--force"])


def four_ways(tmp: Path, mix: Path, n: int, level: str, mix_rate: float, skip_copy: bool) -> None:
    """--jobs 2 at ``level`` on the mix and on n copies of the reference, with the project here and (unless
    ``skip_copy``) in a copy under /tmp with a venv of its own; then the floor against the reference's rate."""
    correct = tmp / "correct"
    make_correct_class(correct, n)
    places = [("here", GRADE, ROOT)]
    if not skip_copy:
        copy = tmp_copy(tmp)
        places.append(("under /tmp", [str(copy / ".venv" / "bin" / "python"), "-m", "grader"], copy))
    nbgrader = subprocess.run([sys.executable, "-c", "import nbgrader"], capture_output=True).returncode == 0
    print(f"four ways (--jobs 2, --sandbox {level}, {n} submissions; nbgrader extra installed here: "
          f"{'yes' if nbgrader else 'NO'}; target >= 100/s each):")
    rates = {}
    for where, grade, cwd in places:
        for name, folder in (("the mix", mix), ("copies of the reference", correct)):
            if where == "here" and folder is mix:
                rates[where, name] = mix_rate                # measured above
            else:
                rates[where, name] = n / statistics.median(
                    wall(grade + ["autograde", *COURSE, str(folder), "--out", str(tmp / f"out-4-{i}"), "--jobs", "2",
                                  "--sandbox", level, "--unsafe", "--quiet", "--force"], cwd=cwd)
                    for i in range(AUTOGRADE_RUNS))
            print(f"  project {where:10}, {name:24}: {rates[where, name]:6.1f} submissions/s"
                  + (f" ({rates[where, name] / rates['here', name]:.2f}x here)" if where != "here" else ""))
    ahead, one = calls_of_a_correct_submission()
    cores = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(cores)})                # the zygote and its workers on this core too
    try:
        start, calls = floor(level, ahead, one)
    finally:
        os.sched_setaffinity(0, cores)
    print(f"floor, one core: a worker forked, confined, importing five no-op modules and answering one call "
          f"{start * 1000:5.1f} ms a submission; with a correct submission's {ahead + one} calls ({ahead} sent ahead, "
          f"{one} one at a time) to no-op functions {calls * 1000:5.1f} ms: {2 / calls:5.1f} submissions/s on two "
          f"cores; copies of the reference graded at {rates['here', 'copies of the reference'] * calls / 2:.2f}x "
          "the floor")


def defences_cost(tmp: Path, mix: Path, n: int, level: str) -> None:
    """#12's defences: the mix and the copies of the reference (four_ways made them), graded in turn by the
    project and by a copy with the defences switched off (tests/bench/defences.py)."""
    copy = defences.without_defences(ROOT, tmp / "no-defences")
    print(f"#12's defences, on / off (wall time, {AUTOGRADE_RUNS} pairs run in turn, --jobs 2, --sandbox {level}, "
          f"{n} submissions; target <= 1.05):")
    for name, folder in (("the mix", mix), ("copies of the reference", tmp / "correct")):
        args = ["autograde", *COURSE, str(folder), "--jobs", "2", "--sandbox", level, "--unsafe", "--quiet", "--force"]
        out = tmp / f"out-defences-{folder.name}"
        ratios = [wall(GRADE + args + ["--out", str(out / f"on-{i}")]) /
                  wall(GRADE + args + ["--out", str(out / f"off-{i}")], cwd=copy) for i in range(AUTOGRADE_RUNS)]
        print(f"  {name:24}: {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--skip-baseline", action="store_true", help="leave out the plain-pytest baseline")
    parser.add_argument("--skip-class-memory", action="store_true", help="leave out the 300 / 3,000 memory runs")
    parser.add_argument("--skip-tmp-copy", action="store_true", help="leave out the project's copy under /tmp")
    parser.add_argument("--skip-defences", action="store_true", help="leave out #12's defences on / off")
    args = parser.parse_args()
    n = args.submissions

    numpy_start = statistics.median(wall([sys.executable, "-c", "import numpy"]) for _ in range(args.repeat))
    check = statistics.median(wall(GRADE + ["check", *COURSE, "--path", "solutions/the-block"]) for _ in range(args.repeat))
    print(f"python -c 'import numpy':             {numpy_start:7.3f} s (median of {args.repeat})")
    print(f"grade check on the reference:         {check:7.3f} s (median of {args.repeat}; target < 0.5 s)")
    with tempfile.TemporaryDirectory(prefix="bench-") as tmp:
        subs = Path(tmp) / "subs"
        make_class(subs, n)
        rates = {}

        def autograde(level: str, jobs: int, out: str) -> list[str]:
            return GRADE + ["autograde", *COURSE, str(subs), "--out", str(Path(tmp) / out), "--jobs", str(jobs),
                            "--sandbox", level, "--unsafe", "--quiet"]

        for level in available_levels():
            for jobs in (1, 2):
                seconds = statistics.median(wall(autograde(level, jobs, f"out-{level}-{jobs}-{i}"))
                                            for i in range(AUTOGRADE_RUNS))
                rates[level, jobs] = n / seconds
                print(f"grade autograde --sandbox {level:7} --jobs {jobs}: {seconds:7.2f} s for {n} = "
                      f"{rates[level, jobs]:6.1f} submissions/s (median of {AUTOGRADE_RUNS})")
        best = available_levels()[0]
        four_ways(Path(tmp), subs, n, best, rates[best, 2], args.skip_tmp_copy)
        if not args.skip_defences:
            defences_cost(Path(tmp), subs, n, best)
        two = Path(tmp) / "two"
        make_class(two, 2)
        start = wall(GRADE + ["autograde", *COURSE, str(two), "--out", str(Path(tmp) / "out-two"), "--jobs", "2",
                              "--sandbox", best, "--unsafe", "--quiet"])
        total = n / rates[best, 2]
        print(f"fixed cost: grade autograde --jobs 2 on 2 submissions takes {start:5.2f} s (start-up, pytest "
              f"collection, the zygotes), so about {(n - 2) / max(total - start, 1e-9):.0f} submissions/s once started")
        worker, grader = peak_rss(autograde(best, 2, "out-memory"))
        print(f"peak RSS (--sandbox {best} --jobs 2, another run): {worker:5.1f} MiB a worker (target < 150), "
              f"{grader:5.1f} MiB a grader process")
        if (BWRAP, 2) in rates:
            print(f"sandbox cost: bwrap grades at {rates[BWRAP, 2] / rates[PROCESS, 2]:.2f}x the rate of process "
                  "isolation alone (--jobs 2; target >= 0.5x)")
        if not args.skip_baseline:
            seconds = baseline(subs, 2)
            print(f"baseline, one plain pytest run a submission, 2 at a time: {seconds:7.2f} s for {n} = "
                  f"{n / seconds:6.1f} submissions/s; grade autograde --jobs 2 ({best}) is "
                  f"{rates[best, 2] / (n / seconds):.1f}x faster (target >= 20x)")
        hangs = Path(tmp) / "hangs"
        for i in range(2):
            shutil.copytree(ROOT / "solutions" / "the-block", hangs / f"h{i}")
            (hangs / f"h{i}" / "gelu.py").write_text(HANG)
        seconds = wall(GRADE + ["autograde", *COURSE, str(hangs), "--out", str(Path(tmp) / "out-hangs"), "--jobs", "2",
                                "--unsafe", "--quiet"])
        print(f"2 submissions whose gelu never returns, --jobs 2: {seconds:6.2f} s "
              "(bounded by the call timeout and the problem budgets in course.json)")
        seconds = dask_seconds(autograde(best, 2, "out-dask"))
        if seconds is not None:
            print(f"Dask LocalCluster, 2 workers x 1 thread: {seconds:7.2f} s for {n} = {n / seconds:6.1f} "
                  f"submissions/s, {n / seconds / rates[best, 2]:.2f}x --jobs 2 (target >= 0.8x)")
        if not args.skip_class_memory and sys.platform == "linux":
            class_memory(Path(tmp), best)


if __name__ == "__main__":
    main()
