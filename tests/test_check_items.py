"""An assignment's hidden checks as pytest items: what an instructor debugging one student runs, and what the judge
runs to give points (course.grading.check_items).

    pytest <assignment folder>/checks.py --submission <a submission folder or its notebook> [-k ...] [-x] [--tb ...]
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bad_submissions import hand_in
from course import paths
from course.grading.checking import probe_step
from course.grading.judge import judge_checks, read_probe_data
from course.grading.record import new_record
from course.samples import sample_notebook
from course.verdicts import checks_for, grade_cells
from helpers import ASSIGNMENT, course_env


@pytest.fixture(scope="module")
def partial(on_fixture, tmp_path_factory) -> Path:
    """The partial sample handed in: one check (normalize_values, 3 points) fails on a named mistake."""
    folder = tmp_path_factory.mktemp("partial") / ASSIGNMENT
    hand_in(folder, sample_notebook(ASSIGNMENT, "partial"))
    return folder


def checks(on_fixture, *args: str) -> subprocess.CompletedProcess:
    """pytest on the fixture assignment's checks.py, from the repository (its pytest.ini loads the plugin)."""
    checks_file = paths.assignment_dir(ASSIGNMENT) / "checks.py"
    return subprocess.run([sys.executable, "-m", "pytest", str(checks_file), "-p", "no:cacheprovider", *args],
                          cwd=paths.ROOT, env=course_env(on_fixture), capture_output=True, text=True, timeout=300)


def test_each_check_is_an_item_that_passes_or_fails_with_the_judges_message_points_and_named_mistake(on_fixture,
                                                                                                    partial):
    result = checks(on_fixture, "--submission", str(partial), "-v")
    assert result.returncode == 1, result.stdout[-3000:] + result.stderr[-3000:]
    for check_id in checks_for(ASSIGNMENT):
        assert f"checks.py::{check_id} {'FAILED' if check_id == 'normalize_values' else 'PASSED'}" in result.stdout
    assert "(0 / 3 points; named mistake: normalize-shift)" in result.stdout
    assert f"12 / {sum(grade_cells(ASSIGNMENT)[0].values())} points for the checks run" in result.stdout


def test_k_picks_one_check_and_x_stops_at_the_first_failure(on_fixture, partial):
    one = checks(on_fixture, "--submission", str(partial), "-k", "square_values")
    assert one.returncode == 0 and "1 passed, 5 deselected" in one.stdout, one.stdout[-2000:]
    blank = partial.parent.parent / "blank" / ASSIGNMENT
    hand_in(blank, sample_notebook(ASSIGNMENT, "blank"))
    stopped = checks(on_fixture, "--submission", str(blank / f"{ASSIGNMENT}.ipynb"), "-x", "--tb=line")
    assert stopped.returncode == 1 and "1 failed" in stopped.stdout and "passed" not in stopped.stdout.splitlines()[-1]
    assert "not-attempted" in stopped.stdout


def test_the_judge_gets_the_same_verdicts_from_the_same_collection(on_fixture, partial, tmp_path):
    """The judge's data (judge_checks) on a probe run's folder, and the command line's on the same folder."""
    record = new_record(ASSIGNMENT, "partial", partial)
    assert probe_step(record, partial, tmp_path / "sandbox")
    judged = judge_checks(ASSIGNMENT, *read_probe_data(tmp_path / "sandbox"))
    assert [j["check_id"] for j in judged.values() if not j["passed"]] == ["normalize_values"]
    result = checks(on_fixture, "--probe-dir", str(tmp_path / "sandbox"), "--tb=short")
    assert judged["normalize_values"]["message"] in " ".join(result.stdout.split())


def test_checks_named_without_a_submission_say_what_to_give(on_fixture):
    result = checks(on_fixture)
    assert result.returncode != 0 and "--submission" in result.stdout + result.stderr


def test_a_submission_that_cannot_be_graded_says_why(on_fixture, tmp_path):
    result = checks(on_fixture, "--submission", str(tmp_path))
    shown = result.stdout + result.stderr
    assert result.returncode != 0 and f"no notebook named {ASSIGNMENT}.ipynb was submitted" in shown
    assert "passed" not in result.stdout and "failed" not in result.stdout, "no check ran"


def test_make_test_collects_no_checks_file(on_fixture):
    """checks.py files are data for the judge: a plain run over the repository's testpaths never collects them."""
    listed = subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider",
                             "assignments"], cwd=paths.ROOT, capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0 and "test_solution.py" in listed.stdout and "checks.py" not in listed.stdout
