"""course.repair: a broken notebook structure is mended the same way for nbgrader and the probe."""

from __future__ import annotations

import copy

import nbformat
import pytest

from bad_submissions import cell
from course import notebook_cache, paths
from course.probe_runner import graded_program
from course.repair import repair
from helpers import ASSIGNMENT


pytestmark = pytest.mark.usefixtures("on_fixture")


@pytest.fixture
def release() -> nbformat.NotebookNode:
    return nbformat.read(paths.release_dir(ASSIGNMENT) / f"{ASSIGNMENT}.ipynb", as_version=4)


def grade_ids(nb: nbformat.NotebookNode) -> list[str | None]:
    return [cell.metadata.get("nbgrader", {}).get("grade_id") for cell in nb.cells]


def test_an_untouched_submission_needs_no_repair(release):
    nb = copy.deepcopy(release)
    assert repair(nb, release) == [] and nb == release


def test_stripped_and_changed_metadata_comes_back_from_the_release(release):
    nb = copy.deepcopy(release)
    for each in nb.cells:
        each.metadata.pop("nbgrader", None)
    notes = repair(nb, release)
    assert grade_ids(nb) == grade_ids(release)
    assert "restored from the release" in notes[0]


def test_deleted_cells_return_after_their_released_predecessor(release):
    nb = copy.deepcopy(release)
    nb.cells = [c for c in nb.cells if c.get("id") not in ("setup-imports", "normalize_values", "normalize_constant")]
    notes = repair(nb, release)
    assert grade_ids(nb) == grade_ids(release)
    assert notes == ["Cells of the release that were deleted, put back for grading: "
                     "setup-imports, normalize_values, normalize_constant."]


def test_of_a_cell_pasted_twice_the_last_copy_is_graded(release):
    nb = copy.deepcopy(release)
    first = cell(nb, "answer-normalize")
    second = copy.deepcopy(first)
    second.id, second.source = "pasted", "NORMALIZE = 'the second copy'"
    nb.cells.insert(nb.cells.index(first) + 1, second)
    notes = repair(nb, release)
    assert cell(nb, "answer-normalize").source == "NORMALIZE = 'the second copy'"
    assert "nbgrader" not in first.metadata, "the earlier copy runs as ordinary code"
    assert "appear more than once" in notes[0]
    assert ("answer-normalize", "NORMALIZE = 'the second copy'") in graded_program(ASSIGNMENT, nb)


def test_edits_to_read_only_cells_are_reported(release):
    nb = copy.deepcopy(release)
    cell(nb, "visible-square").source = "pass"
    assert repair(nb, release) == ["Read-only cells that were edited, restored for grading: visible-square."]


def test_repairing_a_submission_leaves_the_course_notebooks_the_fast_path_shares_as_read(release):
    """graded_program repairs against the release and takes setup cells from the source, both shared by every
    notebook the fast path judges (course.notebook_cache.shared), never copied: they must stay as the files say."""
    nb = copy.deepcopy(release)
    nb.cells = [c for c in nb.cells if c.get("id") not in ("setup-imports", "normalize_values")]
    for each in nb.cells:
        each.metadata.pop("nbgrader", None)
    graded_program(ASSIGNMENT, nb)
    for path in (paths.release_dir(ASSIGNMENT) / f"{ASSIGNMENT}.ipynb", paths.source_notebook(ASSIGNMENT)):
        assert notebook_cache.shared(path) == nbformat.read(path, as_version=4), path
