"""Every assignment through the whole pipeline: its solution handed in and graded as a class is graded.

One exception: the assignment that tests/test_gradescope.py grades whole in Gradescope's container
(helpers.GRADED_IN_GRADESCOPE), through the same grading of one submission (course.grading.grade_one) and with the
same assertions (helpers.assert_graded_in_full); a second grading of its solution here would test nothing more.

Release, hand-in, `course.grading.batch` (sandboxed probe, judge, nbgrader), as `make autograde` grades an
assignment, one scratch course per assignment (the `graded_solution` fixture of the repository's conftest.py,
which an assignment's own tests may read too: `make test` keeps them on the same worker): the solution gets full
marks, and nbgrader's gradebook holds the judge's points. It is handed in as a student would, with the
submission_log.json its code writes, but without running the notebook's demonstrations first: nbgrader runs the
whole notebook, training included, when it grades, and a second training run would test nothing more (running the
samples in real kernels is `make all`'s, and the fixture's in tests/test_grading_end_to_end.py).
The blank release and the partial sample are judged on the fast path (tests/test_assignments.py: the blank is not
attempted, the partial sample loses exactly its bugs' points); the machinery's handling of blank and failing
submissions, and the two paths' agreement on failing checks, are tested on the fixture assignment's class
(tests/test_grading_end_to_end.py), whose notebooks cost seconds where an assignment's cost a minute.
"""

from __future__ import annotations

import pytest

from course import paths
from helpers import GRADED_IN_GRADESCOPE, SOLUTION_STUDENT, assert_graded_in_full


@pytest.mark.parametrize("assignment", [a for a in paths.assignments() if a != GRADED_IN_GRADESCOPE])
def test_the_solution_gets_full_marks_in_the_judge_and_the_gradebook(graded_solution, assignment):
    course = graded_solution(assignment)
    assert_graded_in_full(course, course / "build", assignment, SOLUTION_STUDENT)
    assert (course / "feedback" / SOLUTION_STUDENT / assignment / "feedback.md").exists(), "the batch's feedback too"
