"""Each real assignment through the whole pipeline, once: a small class of its three samples.

Release, samples run in real kernels, `course.grading.batch` (sandboxed probe, judge, nbgrader):
the solution gets full marks, the blank release zero, the partial sample loses exactly its
bugs' points, and nbgrader's gradebook holds the judge's points for each. The machinery's own
behaviour (bad submissions, stopping, hand grades) is tested once, on the fixture assignment
(tests/test_grading_end_to_end.py).
"""

from __future__ import annotations

import json
import sys

import pytest

from course import paths
from course.grading.judge import grade_cells
from course.parts import part
from helpers import course_env, released_course, run


@pytest.mark.parametrize("assignment", paths.assignments())
def test_a_class_of_the_three_samples_gets_the_same_points_on_both_paths(assignment, tmp_path):
    env = course_env(tmp_path, paths.ASSIGNMENTS_DIR)
    released_course(tmp_path, env, assignment)
    run([sys.executable, "-m", "course.samples", assignment], env)
    run([sys.executable, "-m", "course.grading.batch", assignment], env)
    records = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "build" / "results" / assignment).glob("*.json")}
    auto, _ = grade_cells(assignment)
    bugs = {check for _, check in part(assignment, "corpus").SAMPLE_BUGS}
    expected = {"perfect": auto, "blank": dict.fromkeys(auto, 0),
                "partial": {check: 0 if check in bugs else points for check, points in auto.items()}}
    assert {student: record["points"] for student, record in records.items()} == expected
    assert all(record["gradebook"] == record["points"] for record in records.values()), "the gradebook shows the judge's"
    assert all(record["status"] == "ok" and record["flags"] == [] for record in records.values())
    assert all((tmp_path / "feedback" / student / assignment / "feedback.md").exists() for student in expected)
