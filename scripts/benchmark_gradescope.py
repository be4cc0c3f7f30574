"""Seconds from upload to results.json in Gradescope's container, for each assignment's partial sample.

    make bench-gradescope [ASSIGNMENT=name]      (default: every assignment)

For each assignment, in a scratch course: releases it, makes its partial sample, builds its autograder zip
(`make gradescope`), unpacks it into Gradescope's container (course.gradescope.container: bubblewrap, /autograder at
its place, the venv read-only), runs setup.sh once, then uploads the partial sample and times run_autograder until
results.json is written; prints those seconds, the score, and where the grading's time went (its record's steps).
Nothing here is a test: it prints figures. Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course import paths  # noqa: E402
from course.gradescope.container import Container  # noqa: E402
from course.gradescope.run import STUDENT  # noqa: E402
from course.grading.sandbox import grading_env  # noqa: E402

SAMPLE = "partial"


def course_command(env: dict, *args: str) -> None:
    done = subprocess.run([sys.executable, "-m", *args], cwd=paths.ROOT, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{' '.join(args)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")


def upload_seconds(assignment: str, scratch: Path) -> tuple[float, dict, dict]:
    """(seconds from upload to results.json, results.json, the grading record's seconds) for the partial sample."""
    course = scratch / "course"
    env = {**grading_env(), **paths.course_environment(course, course / "build"),
           "COURSE_ASSIGNMENTS_DIR": str(paths.ASSIGNMENTS_DIR)}
    for command in (["course.build_source", assignment], ["course.release", assignment],
                    ["course.samples", assignment, "--samples", SAMPLE], ["course.gradescope.build", assignment]):
        course_command(env, *command)
    container = Container(scratch / "box", course / "build" / "gradescope" / f"{assignment}.zip")
    container.setup()
    handed_in = course / "submitted" / SAMPLE / assignment

    def upload(folder: Path) -> None:
        for name in (f"{assignment}.ipynb", "submission_log.json"):
            shutil.copy(handed_in / name, folder / name)

    start = time.perf_counter()
    results = container.grade(upload)
    seconds = time.perf_counter() - start
    record = container.autograder / "source" / "build" / "results" / assignment / f"{STUDENT}.json"
    steps = json.loads(record.read_text())["seconds"] if record.exists() else {}
    return seconds, results, steps


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", default=paths.assignments())
    args = parser.parse_args()
    print(f"# Gradescope's container: upload of the {SAMPLE} sample to results.json\n")
    for assignment in args.assignments:
        with tempfile.TemporaryDirectory(prefix="bench-gradescope-") as scratch:
            seconds, results, steps = upload_seconds(assignment, Path(scratch))
        print(f"{assignment:26s} {seconds:6.1f} s  score {results['score']:g}  "
              f"(steps: {', '.join(f'{step} {value:g} s' for step, value in steps.items()) or 'no record found'})")


if __name__ == "__main__":
    main()
