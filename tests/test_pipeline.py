"""Every assignment through the whole pipeline: a class of its perfect and blank samples.

Release, hand-in, `course.grading.batch` (sandboxed probe, judge, nbgrader), as `make autograde` grades an
assignment, one scratch course per assignment (so that `make test`'s workers can share the assignments out): the
solution gets full marks and the blank release zero, and nbgrader's gradebook holds the judge's points for each. Each sample is handed in as a student would, with the
submission_log.json its code writes, but without running the notebook's demonstrations first: nbgrader runs the
whole notebook, training included, when it grades, and a second training run per assignment would test nothing
more (running the samples in real kernels is `make all`'s, and the fixture's in tests/test_grading_end_to_end.py).
The partial samples are judged on the fast path (tests/test_assignments.py: each loses exactly its bugs' points);
the two paths' agreement on failing checks is tested on the fixture assignment's class, with the machinery's own
behaviour (bad submissions, stopping, hand grades: tests/test_grading_end_to_end.py).
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import nbformat
import pytest

from course import paths
from course.checks import grade_cells
from course.samples import sample_notebook
from helpers import course_env, paths_of, released_course, run

SAMPLES = ("perfect", "blank")
# The log a student's last cell writes, from the answers' definitions (their graded pieces), in the submission folder.
WRITE_LOG = """
import sys, nbformat
from pathlib import Path
from course.probes import execute_program, graded_program
from submission_log import write_submission_log
assignment, folder = sys.argv[1], Path(sys.argv[2])
ns, _ = execute_program(graded_program(assignment, nbformat.read(folder / f"{assignment}.ipynb", as_version=4)), folder)
write_submission_log(ns, {}, folder / "submission_log.json")
"""


def hand_in(root: Path, env: dict, assignment: str, sample: str) -> None:
    """submitted/<sample>/<assignment>/: the release folder, the sample's notebook and the log its code writes."""
    folder = root / "submitted" / sample / assignment
    shutil.copytree(root / "release" / assignment, folder)
    with paths_of(root, paths.ASSIGNMENTS_DIR):
        nbformat.write(sample_notebook(assignment, sample), folder / f"{assignment}.ipynb")
    run([sys.executable, "-c", WRITE_LOG, assignment, str(folder)], {**env, "PYTHONPATH": f"{folder}:{paths.ROOT}"})


@pytest.mark.parametrize("assignment", paths.assignments())
def test_the_solution_gets_full_marks_and_the_blank_release_zero_on_both_paths(tmp_path, assignment):
    env = course_env(tmp_path, paths.ASSIGNMENTS_DIR)
    released_course(tmp_path, env, assignment)
    for sample in SAMPLES:
        hand_in(tmp_path, env, assignment, sample)
    run([sys.executable, "-m", "course.grading.batch", assignment], env)
    records = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "build" / "results" / assignment).glob("*.json")}
    auto, _ = grade_cells(assignment)
    assert {student: record["points"] for student, record in records.items()} == {
        "perfect": auto, "blank": dict.fromkeys(auto, 0)}
    assert all(record["gradebook"] == record["points"] for record in records.values()), "the gradebook shows the judge's"
    assert {student: (record["status"], record["flags"]) for student, record in records.items()} == {
        student: ("ok", []) for student in SAMPLES}
    assert all((tmp_path / "feedback" / student / assignment / "feedback.md").exists() for student in SAMPLES)
