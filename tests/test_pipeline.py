"""Every assignment through the whole pipeline: its solution handed in and graded as a class is graded.

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
def test_the_solution_gets_full_marks_in_the_judge_and_the_gradebook(tmp_path, assignment):
    env = course_env(tmp_path, paths.ASSIGNMENTS_DIR)
    released_course(tmp_path, env, assignment)
    hand_in(tmp_path, env, assignment, "perfect")
    run([sys.executable, "-m", "course.grading.batch", assignment], env)
    record = json.loads((tmp_path / "build" / "results" / assignment / "perfect.json").read_text())
    auto, _ = grade_cells(assignment)
    assert (record["points"], record["status"], record["flags"]) == (auto, "ok", [])
    assert record["gradebook"] == record["points"], "the gradebook shows the judge's"
    assert (tmp_path / "feedback" / "perfect" / assignment / "feedback.md").exists()
    graded = nbformat.read(tmp_path / "autograded" / "perfect" / assignment / f"{assignment}.ipynb", as_version=4)
    errors = {cell.id: output["ename"] for cell in graded.cells if cell.cell_type == "code"
              for output in cell.outputs if output["output_type"] == "error"}
    assert errors == {}, "every cell of the solution runs in nbgrader's sandboxed kernel, training included"
