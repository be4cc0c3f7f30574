"""Grading a class for real: nbgrader, a real kernel, the hidden pytest checks.

One isolated course directory (its own gradebook, submitted/, grades/) gets
the three generated sample submissions, one made of correct alternative
implementations from the grader-accuracy corpus, and every bad submission of
tests/bad_submissions.py, and is graded by the same batch command as
`make autograde`, three submissions at a time. Then a batch is killed midway and
resumed. This is the slow test (a few minutes); short time limits keep the
endless loops short.
"""

from __future__ import annotations

import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from bad_submissions import CASES, EXTRA_SNOOPING, hand_in, snoop_targets
from course import paths
from course.grading.batch import STATUS_MEANING
from course.grading.grade_one import grading_env, nbgrader_command
from course.samples import SAMPLE_BUGS, apply_edits, sample_notebook
from grader_accuracy.alternatives import ALTERNATIVES
from helpers import ASSIGNMENT

FULL = 50
GOOD = ("perfect", "blank", "partial", "alternatives")
LIMITS = {"COURSE_CELL_TIMEOUT": "15", "COURSE_PROBE_TIMEOUT": "120", "COURSE_NOTEBOOK_TIMEOUT": "300",
          "COURSE_MEMORY_MB": "2048", "COURSE_JOBS": "3"}


def run(args: list[str], env: dict) -> str:
    result = subprocess.run(args, cwd=paths.ROOT, env=env, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> dict:
    """Release, samples and grades of a fresh course directory; returns its paths, env and records."""
    root = tmp_path_factory.mktemp("course")
    build = root / "build"
    env = {**grading_env(), **LIMITS, "COURSE_DIR": str(root), "COURSE_BUILD_DIR": str(build)}
    env.update({name: str(build / sub) for name, sub in (("JUPYTER_CONFIG_DIR", "jupyter/config"),
               ("JUPYTER_DATA_DIR", "jupyter/data"), ("JUPYTER_RUNTIME_DIR", "jupyter/runtime"), ("IPYTHONDIR", "ipython"))})
    build.mkdir()
    shutil.copytree(paths.ROOT / "source", root / "source", ignore=shutil.ignore_patterns("submission_log.json"))
    run(nbgrader_command("generate_assignment", ASSIGNMENT), env)
    run([sys.executable, "-m", "course.samples", ASSIGNMENT], env)
    write_alternatives_student(root / "submitted" / "alternatives" / ASSIGNMENT)
    for case in CASES:
        folder = root / "submitted" / case.student / ASSIGNMENT
        folder.mkdir(parents=True)
        case.write(folder)
    batch_output = run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT], env)
    return {"root": root, "build": build, "env": env, "records": records_in(build), "batch_output": batch_output}


def records_in(build: Path) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (build / "results" / ASSIGNMENT).glob("*.json")}


def write_alternatives_student(folder: Path) -> None:
    """A submission made of the first correct alternative of each answer cell (not run: no log)."""
    first_per_cell = {}
    for alternative in ALTERNATIVES:
        first_per_cell.setdefault(alternative.cell, alternative)
    hand_in(folder, apply_edits(sample_notebook(ASSIGNMENT, "perfect"), first_per_cell.values()))


def totals(record: dict) -> tuple[float, float]:
    """(judge points, nbgrader points) of a record."""
    return sum(record["points"].values()), sum(record["nbgrader"].get(c, 0) for c in record["max_points"])


def test_perfect_submission_gets_full_marks_on_both_paths(course):
    record = course["records"]["perfect"]
    assert totals(record) == (FULL, FULL)
    assert record["status"] == "ok" and record["flags"] == []
    assert sum(record["manual_pending"].values()) == 15


def test_blank_release_gets_zero_on_both_paths(course):
    record = course["records"]["blank"]
    assert totals(record) == (0, 0)
    assert record["status"] == "ok"


def test_partial_submission_loses_exactly_the_points_of_its_bugs(course):
    record = course["records"]["partial"]
    broken = {check for _, check in SAMPLE_BUGS[ASSIGNMENT]}
    lost_judge = {c for c, p in record["points"].items() if p < record["max_points"][c]}
    lost_nbgrader = {c for c in record["max_points"] if record["nbgrader"][c] < record["max_points"][c]}
    assert lost_judge == broken and lost_nbgrader == broken
    assert totals(record) == (FULL - sum(record["max_points"][c] for c in broken),) * 2
    assert "paths-disagree" not in record["flags"] and record["status"] == "ok"


def test_alternative_implementations_get_full_marks_on_both_paths(course):
    record = course["records"]["alternatives"]
    assert totals(record) == (FULL, FULL)
    assert record["flags"] == ["log-missing"], "it was never run, so it has no log; nothing else is wrong"


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.student)
def test_bad_submission_gets_its_outcome_and_its_reason(course, case):
    record = course["records"][case.student]
    assert record["status"] == case.status, record["messages"]
    assert sum(record["points"].values()) == case.points, record["judge"]
    if case.nbgrader is None:
        assert record["nbgrader"] == {}
    else:
        assert totals(record)[1] == case.nbgrader, record["nbgrader"]
    assert set(case.flags) <= set(record["flags"]), record["flags"]
    feedback = (course["root"] / "feedback" / case.student / ASSIGNMENT / "feedback.md").read_text()
    assert all(told in feedback for told in case.told), feedback
    assert f"(status: {case.status}: {STATUS_MEANING[case.status]})" in feedback


def test_student_code_cannot_read_or_write_outside_its_folder(course):
    attempts = json.loads((course["root"] / "autograded" / "snooper" / ASSIGNMENT / "snoop.json").read_text())
    assert attempts == {name: "blocked" for name in [*snoop_targets(course["root"]), *EXTRA_SNOOPING]}
    assert json.loads((course["root"] / "submitted" / "perfect" / ASSIGNMENT / "submission_log.json").read_text())


def test_grades_csv_has_one_row_per_student_with_both_totals(course):
    with (course["root"] / "grades" / ASSIGNMENT / "grades.csv").open() as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert sorted(rows) == sorted([*GOOD, *(case.student for case in CASES)])
    assert rows["perfect"]["total"] == rows["perfect"]["nbgrader_total"] == str(FULL)
    assert rows["blank"]["total"] == "0"


def test_feedback_explains_lost_points_without_hidden_test_source(course):
    feedback = (course["root"] / "feedback" / "partial" / ASSIGNMENT / "feedback.md").read_text()
    assert "sqrt(d_k)" in feedback and "0 / 4" in feedback
    html = (course["root"] / "feedback" / "partial" / ASSIGNMENT / f"{ASSIGNMENT}.html").read_text()
    for text in (feedback, html):
        assert "BEGIN HIDDEN TESTS" not in text and "course.grading" not in text and "globals())" not in text


def test_report_lists_every_student(course):
    report = (course["root"] / "grades" / ASSIGNMENT / "report.md").read_text()
    assert all(f"| {name} | ok |" in report for name in ("blank", "partial", "perfect"))
    line = next(line for line in report.splitlines() if line.startswith("Statuses: "))
    counted = {status: int(n) for status, n in (item.split() for item in line.removeprefix("Statuses: ").split(", "))}
    assert counted == Counter(case.status for case in CASES) + Counter(ok=len(GOOD))


def test_grading_again_skips_unchanged_submissions_and_changes_nothing(course):
    results = course["build"] / "results" / ASSIGNMENT
    before = {p.name: p.read_bytes() for p in results.glob("*.json")}
    output = run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT], course["env"])
    assert output.count("already graded, unchanged") == len(GOOD) + len(CASES)
    assert {p.name: p.read_bytes() for p in results.glob("*.json")} == before


def running(pattern: str) -> bool:
    return subprocess.run(["pgrep", "-f", "--", pattern], capture_output=True).returncode == 0


def stop_batch_midway(course: dict, student: str, stop: signal.Signals) -> None:
    """Start a batch, and send `stop` to all of it while nbgrader runs `student`'s notebook."""
    batch = subprocess.Popen([sys.executable, "-m", "course.grading.batch", ASSIGNMENT], cwd=paths.ROOT,
                             env=course["env"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    deadline = time.monotonic() + 120
    while not running(f"--student {student}") and time.monotonic() < deadline:
        time.sleep(0.2)
    os.killpg(batch.pid, stop)
    batch.wait(timeout=60)
    time.sleep(1)


def test_a_stopped_batch_leaves_nothing_running_then_resumes_to_the_same_grades(course):
    student = "hard_exit"  # its record is removed, so the batch grades it again
    results = course["build"] / "results" / ASSIGNMENT
    (results / f"{student}.json").unlink()
    for stop in (signal.SIGINT, signal.SIGKILL):  # Ctrl-C in its terminal; kill -9 of the whole job
        stop_batch_midway(course, student, stop)
        assert not running(f"grade_one {ASSIGNMENT} {student}") and not running(f"--student {student}"), \
            f"grading went on after the batch got {stop.name}"
        assert not (results / f"{student}.json").exists(), f"grading stopped by {stop.name} left a record"

    output = run([sys.executable, "-m", "course.grading.batch", ASSIGNMENT], course["env"])
    assert output.count("already graded, unchanged") == len(GOOD) + len(CASES) - 1
    again = records_in(course["build"])[student]
    first = course["records"][student]
    assert {k: v for k, v in again.items() if k != "seconds"} == {k: v for k, v in first.items() if k != "seconds"}
    with (course["root"] / "grades" / ASSIGNMENT / "grades.csv").open() as f:
        students = [row["student"] for row in csv.DictReader(f)]
    assert sorted(students) == sorted([*GOOD, *(case.student for case in CASES)]), "each student once"
