"""nbgrader's Validate, as students run it (the Validate button runs `nbgrader validate` with the course's
configuration, course.student_nbgrader): it fails on a stub, an error or a failed visible test, naming the cell and
its message, passes a notebook whose visible tests pass, and runs no hidden check (there is none in the notebook)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from course import paths
from course.notebook_format import check_cell_source
from course.samples import sample_notebook
from course.grading.sandbox import grading_env
from helpers import ASSIGNMENT

SQUARE_CUBES = "return np.asarray(x, dtype=float) ** 3"


def validate(folder: Path, nb: nbformat.NotebookNode) -> str:
    """`nbgrader validate` of `nb` beside the release's other files in `folder`: what it prints."""
    shutil.copytree(paths.release_dir(ASSIGNMENT), folder, dirs_exist_ok=True)
    nbformat.write(nb, folder / f"{ASSIGNMENT}.ipynb")
    result = subprocess.run([sys.executable, "-m", "course.grading.nbgrader_cli", "validate",
                             str(folder / f"{ASSIGNMENT}.ipynb")], cwd=paths.ROOT, env=grading_env(),
                            capture_output=True, text=True)
    return result.stdout + result.stderr


@pytest.fixture(scope="module")
def notebooks(on_fixture) -> dict[str, nbformat.NotebookNode]:
    solution = sample_notebook(ASSIGNMENT, "perfect")
    cell = next(c for c in solution.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "answer-square")
    wrong = sample_notebook(ASSIGNMENT, "perfect")
    next(c for c in wrong.cells if c.id == cell.id).source = cell.source.replace(
        "return np.asarray(x, dtype=float) ** 2", SQUARE_CUBES)
    written_only = sample_notebook(ASSIGNMENT, "blank")
    for c in written_only.cells:
        if c.cell_type == "markdown" and c.metadata.get("nbgrader", {}).get("solution"):
            c.source = "My answer, written in full."
    return {"solution": solution, "visible test fails": wrong, "written answers only": written_only}


def test_a_notebook_whose_visible_tests_pass_validates(notebooks, tmp_path):
    assert "Success! Your notebook passes all the tests." in validate(tmp_path, notebooks["solution"])


def test_a_release_validates_with_its_unwritten_answers_first_and_knock_on_failures_said_so(notebooks, tmp_path):
    printed = validate(tmp_path, sample_notebook(ASSIGNMENT, "blank"))
    answers = [c.metadata["nbgrader"]["grade_id"] for c in sample_notebook(ASSIGNMENT, "blank").cells
               if c.metadata.get("nbgrader", {}).get("solution")]
    assert "VALIDATION FAILED" in printed and "Success!" not in printed
    listed = printed.split("receive full credit.", 1)[1].split("=====", 1)[0].split()
    assert " ".join(listed) == " ".join(f"{answer}: not written yet" for answer in answers), printed
    assert "visible-square: assert square([1, 2])" in printed, "a failing cell by its first line"
    assert "fails because answer-square above is not written yet" in printed
    assert "def square(x):" not in printed and '"""Elementwise' not in printed.split("not written yet")[0], \
        "no code before the list"


def test_stubs_fail_validation_naming_each_stub(notebooks, tmp_path):
    printed = validate(tmp_path, notebooks["written answers only"])
    assert "VALIDATION FAILED" in printed and "Success!" not in printed
    assert "answer-square: not written yet" in printed and "reflection-hardest: not written yet" not in printed


def test_a_failed_visible_test_fails_validation_with_its_cell_and_message(notebooks, tmp_path):
    printed = validate(tmp_path, notebooks["visible test fails"])
    assert "VALIDATION FAILED ON 1 CELL(S)" in printed, printed[-2000:]
    assert "assert square([1, 2]).tolist() == [1.0, 4.0]" in printed and "AssertionError" in printed


def test_validation_runs_no_hidden_check(notebooks, tmp_path):
    """The graded test cells hold a comment only: whatever validation reports, it never reports one of them."""
    printed = validate(tmp_path, notebooks["written answers only"])
    assert "VALIDATION FAILED" in printed
    test_cells = [c.source for c in notebooks["solution"].cells if c.metadata.get("nbgrader", {}).get("grade")
                  and c.cell_type == "code"]
    assert test_cells and all(source.splitlines()[0] not in printed for source in test_cells)
    assert all(source == check_cell_source(c.metadata["nbgrader"]["grade_id"], c.metadata["nbgrader"]["points"])
               for c, source in zip([c for c in notebooks["solution"].cells if c.source in test_cells], test_cells))
