"""The container image's entry point, in the image's system built from Debian's packages
(container/rootfs.sh: debootstrap, as container/Dockerfile builds it where docker cannot run),
grades with a real sandbox: `grade autograde` in that root made `/` as a container runtime makes it
(a mount namespace, pivot_root), as root and as the image's unprivileged user.

It takes minutes (debootstrap and pip download the system and the project's libraries), so it is out
of `make test`: marked `container`, and run by `make test-container` (GRADE_CONTAINER_TEST=1, as
root, with debootstrap installed); skipped elsewhere."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import EXAMPLES, PROJECT, THE_BLOCK

pytestmark = [
    pytest.mark.container,
    pytest.mark.skipif(
        os.environ.get("GRADE_CONTAINER_TEST") != "1",
        reason="minutes long: make test-container runs it (GRADE_CONTAINER_TEST=1)",
    ),
    pytest.mark.skipif(
        not hasattr(os, "geteuid") or os.geteuid() != 0, reason="debootstrap and chroot need root"
    ),
    pytest.mark.skipif(
        shutil.which("debootstrap") is None or shutil.which("unshare") is None,
        reason="needs debootstrap (apt-get install debootstrap) and unshare",
    ),
]


def _course(root: Path) -> Path:
    """The course folder the container gets at /course: course.json, what it names, two students."""
    course = root / "course"
    course.mkdir(parents=True)
    shutil.copy(PROJECT / "course.json", course / "course.json")
    for folder in (
        "exercises",
        "solutions",
        f"tests/{THE_BLOCK}/public",
        f"tests/{THE_BLOCK}/hidden",
        "tests/the-modern-block/public",
        "tests/the-modern-block/hidden",
    ):
        shutil.copytree(
            PROJECT / folder, course / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    (course / "overrides").mkdir()
    (course / "overrides" / f"{THE_BLOCK}.csv").write_text(
        "student,kind,problem,points,due,reason,by\n"
    )
    for student in ("ada_correct", "alan_ddof1"):
        shutil.copytree(EXAMPLES / student, course / "submissions" / student)
    return course


def _in_root(root: Path, user: str, *command: str) -> subprocess.CompletedProcess:
    """``command`` in ``root`` as a container runtime starts one: its own mount namespace, the root
    bind-mounted on itself and made ``/`` with pivot_root (bubblewrap refuses a chroot, whose ``/``
    is no mount point), proc and dev mounted (all gone when it ends), a clean environment, in
    /course, as ``user`` (uid:gid; setpriv drops root for the image's unprivileged user)."""
    uid, gid = user.split(":")
    drop = f"setpriv --reuid={uid} --regid={gid} --clear-groups " if uid != "0" else ""
    script = (
        f"mount --rbind {root} {root} && mount -t proc proc {root}/proc && "
        f"mount --rbind /dev {root}/dev && cd {root} && mkdir -p .oldroot && "
        "pivot_root . .oldroot && umount -l /.oldroot && cd /course && "
        f"exec /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin HOME=/tmp {drop}"
        + " ".join(command)
    )
    # timeout: a backstop against a hang, not a measurement (two students grade in seconds)
    return subprocess.run(
        ["unshare", "--mount", "--fork", "sh", "-c", script],
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_the_entry_point_grades_with_bubblewrap_in_the_images_system(tmp_path_factory):
    root = tmp_path_factory.mktemp("image") / "root"
    # timeout: a backstop, not a measurement (about 2 minutes on a 2-core machine)
    built = subprocess.run(
        [str(PROJECT / "container" / "rootfs.sh"), str(root), str(PROJECT)],
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-2000:]
    course = _course(root)
    shutil.chown(course, 1000, 1000)
    for path in course.rglob("*"):
        shutil.chown(path, 1000, 1000)
    # the image's user first: the course's key it makes is its own (root reads it too)
    for user, out in (("1000:1000", "scores"), ("0:0", "scores-root")):
        done = _in_root(
            root,
            user,
            "grade-entrypoint",
            "autograde",
            "-a",
            THE_BLOCK,
            "submissions",
            "--out",
            out,
            "-j",
            "2",
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert "sandbox: bwrap" in " ".join(done.stdout.split()), done.stdout
        assert "cannot make its namespaces" not in done.stderr
        ada = json.loads((course / out / "ada_correct.json").read_text())
        alan = json.loads((course / out / "alan_ddof1.json").read_text())
        assert ada["score"] == ada["max_score"] and alan["score"] < alan["max_score"]
        assert ada["sandbox"].startswith("bwrap")
    done = _in_root(root, "1000:1000", "grade-entrypoint", "--version")
    assert done.returncode == 0 and "grade, version" in done.stdout
