"""Print what running student code as the jail's user costs per graded submission (course.grading.confine and the
folders and processes around it), part by part, on this machine.

    make bench-hardening [ASSIGNMENT=name]      (as root; default: every assignment)

Per graded submission: two confined starts (the probe's and the kernel's; a probe that crashes is started again),
the jail folders given to the jail's user and reclaimed (the probe's, and the kernel's copy of the submission and
the assignment's files), three scans for leftover processes (after the probe, nbgrader and the judge), and the
seccomp filter compiled once.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course import paths  # noqa: E402
from course.grading import sandbox  # noqa: E402
from course.grading.confine import compiled_filter  # noqa: E402
from course.grading.grade_one import prepare_kernel_folder  # noqa: E402

REPEATS = 20


def best_seconds(action: Callable[[], None], repeats: int = REPEATS) -> float:
    """The median wall-clock seconds of `action`."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def confine_start() -> float:
    """Seconds a confined start adds to a process: confine.py's own Python, dropping privileges, the filter."""
    python = [sys.executable, "-c", "pass"]
    plain = best_seconds(lambda: subprocess.run(python, check=True))
    confined = best_seconds(lambda: subprocess.run(sandbox.confined(python), check=True))
    return confined - plain


def folders(assignment: str) -> float:
    """Seconds to give the kernel's copy of a submission (the release's files) to the jail's user and reclaim it."""
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "kernel"
        prepare_kernel_folder(paths.release_dir(assignment), assignment, copy)

        def give_and_take() -> None:
            sandbox.give_to_jail(copy)
            sandbox.reclaim(copy)
        return best_seconds(give_and_take, 5)


def main() -> None:
    if os.geteuid() != 0:
        sys.exit("run it as root: the jail's user is taken by root")
    start = confine_start()
    scan = best_seconds(sandbox.kill_jail_processes)
    compile_filter = best_seconds(compiled_filter, 5)
    print(f"confined start: {start * 1000:.0f} ms a process; leftover scan: {scan * 1000:.1f} ms; "
          f"seccomp filter compiled: {compile_filter * 1000:.1f} ms")
    for assignment in paths.select_assignments(sys.argv[1:]):
        if not paths.release_dir(assignment).exists():
            sys.exit(f"no release of {assignment}: run `make release` first")
        give = folders(assignment)
        total = 2 * start + 2 * give + 3 * scan + compile_filter
        print(f"{assignment}: jail folders given and reclaimed {give * 1000:.1f} ms; "
              f"about {total * 1000:.0f} ms per graded submission")
    shutil.rmtree(Path(tempfile.gettempdir()) / "matplotlib", ignore_errors=True)


if __name__ == "__main__":
    main()
