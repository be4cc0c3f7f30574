"""Every assignment through the whole pipeline: its solution handed in and graded as a class is graded.

One exception: the assignment that tests/test_gradescope.py grades whole in Gradescope's container
(helpers.GRADED_IN_GRADESCOPE), through the same grading of one submission (course.grading.grade_one) and with the
same assertions (helpers.assert_graded_in_full); a second grading of its solution here would test nothing more.

Release, hand-in, `course.grading.batch` (sandboxed probe, judge, nbgrader), as `make autograde` grades an
assignment, one scratch course per assignment (so that `make test`'s workers can share the assignments out): the
solution gets full marks, and nbgrader's gradebook holds the judge's points. It is handed in as a student would,
with the submission_log.json its code writes, but without running the notebook's demonstrations first: nbgrader
runs the whole notebook, training included, when it grades, and a second training run would test nothing more
(running the samples in real kernels is `make all`'s, and the fixture's in tests/test_grading_end_to_end.py).
The blank release and the partial sample are judged on the fast path (tests/test_assignments.py: the blank is not
attempted, the partial sample loses exactly its bugs' points); the machinery's handling of blank and failing
submissions, and the two paths' agreement on failing checks, are tested on the fixture assignment's class
(tests/test_grading_end_to_end.py), whose notebooks cost seconds where an assignment's cost a minute.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from course import paths
from course.samples import sample_notebook
from helpers import (GRADED_IN_GRADESCOPE, assert_graded_in_full, course_env, hand_in_with_log, paths_of,
                     released_course, run)


def hand_in(root: Path, env: dict, assignment: str, sample: str) -> None:
    """submitted/<sample>/<assignment>/: the release folder, the sample's notebook and the log its code writes."""
    with paths_of(root, paths.ASSIGNMENTS_DIR):
        notebook = sample_notebook(assignment, sample)
    hand_in_with_log(root / "release" / assignment, root / "submitted" / sample / assignment, notebook, env)


@pytest.mark.parametrize("assignment", [a for a in paths.assignments() if a != GRADED_IN_GRADESCOPE])
def test_the_solution_gets_full_marks_in_the_judge_and_the_gradebook(tmp_path, assignment):
    env = course_env(tmp_path, paths.ASSIGNMENTS_DIR)
    released_course(tmp_path, env, assignment)
    hand_in(tmp_path, env, assignment, "perfect")
    run([sys.executable, "-m", "course.grading.batch", assignment], env)
    assert_graded_in_full(tmp_path, tmp_path / "build", assignment, "perfect")
    assert (tmp_path / "feedback" / "perfect" / assignment / "feedback.md").exists(), "the batch's feedback too"
