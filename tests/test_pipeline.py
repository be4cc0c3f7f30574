"""The whole course through the whole pipeline, once: a class of each assignment's perfect and blank samples.

Release, samples run in real kernels, `course.grading.batch` (sandboxed probe, judge, nbgrader),
every assignment in one batch as `make autograde` grades a course: each solution gets full marks
and each blank release zero, and nbgrader's gradebook holds the judge's points for each. The
partial samples are judged on the fast path (tests/test_assignments.py: each loses exactly its
bugs' points); the two paths' agreement on failing checks is tested on the fixture assignment's
class, with the machinery's own behaviour (bad submissions, stopping, hand grades:
tests/test_grading_end_to_end.py). A second training run per assignment here would test
nothing more.
"""

from __future__ import annotations

import json
import sys

from course import paths
from course.grading.judge import grade_cells
from helpers import course_env, released_course, run

SAMPLES = ("perfect", "blank")


def test_every_solution_gets_full_marks_and_every_blank_release_zero_on_both_paths(tmp_path):
    env = course_env(tmp_path, paths.ASSIGNMENTS_DIR)
    assignments = paths.assignments()
    released_course(tmp_path, env, *assignments)
    run([sys.executable, "-m", "course.samples", *assignments, "--samples", *SAMPLES], env)
    run([sys.executable, "-m", "course.grading.batch", *assignments], env)
    for assignment in assignments:
        records = {p.stem: json.loads(p.read_text())
                   for p in (tmp_path / "build" / "results" / assignment).glob("*.json")}
        auto, _ = grade_cells(assignment)
        assert {student: record["points"] for student, record in records.items()} == {
            "perfect": auto, "blank": dict.fromkeys(auto, 0)}, assignment
        assert all(record["gradebook"] == record["points"] for record in records.values()), "the gradebook shows the judge's"
        assert {student: (record["status"], record["flags"]) for student, record in records.items()} == {
            student: ("ok", []) for student in SAMPLES}, assignment
        assert all((tmp_path / "feedback" / student / assignment / "feedback.md").exists() for student in SAMPLES)
