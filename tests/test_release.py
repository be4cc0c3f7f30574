"""The student release: generated from source/ by nbgrader, and leaking nothing."""

from __future__ import annotations

import filecmp

import nbformat
import pytest

from course import paths
from course.grading import limits
from helpers import ASSIGNMENT, between, grade_cells, nbgrader

RELEASE = paths.ROOT / "release" / ASSIGNMENT
SOURCE_NB = nbformat.read(paths.source_notebook(ASSIGNMENT), as_version=4)
RELEASE_NB = nbformat.read(RELEASE / f"{ASSIGNMENT}.ipynb", as_version=4)


def release_text() -> str:
    return "\n".join(p.read_text(errors="replace") for p in RELEASE.rglob("*") if p.is_file() and p.suffix != ".csv")


def test_release_is_what_nbgrader_generates_from_source(tmp_path):
    result = nbgrader("generate_assignment", ASSIGNMENT, "--force", "--no-db",
                      f"--CourseDirectory.root={paths.ROOT}", f"--CourseDirectory.release_directory={tmp_path}")
    assert result.returncode == 0, result.stderr
    fresh = tmp_path / ASSIGNMENT
    comparison = filecmp.dircmp(fresh, RELEASE)
    stale = []
    def walk(cmp, prefix=""):
        stale.extend(prefix + n for n in cmp.left_only + cmp.right_only + cmp.diff_files)
        for name, sub in cmp.subdirs.items():
            walk(sub, f"{prefix}{name}/")
    walk(comparison)
    stale += [n for n in comparison.same_files if (fresh / n).read_bytes() != (RELEASE / n).read_bytes()]
    assert not stale, f"release/ is stale against source/ ({stale}): run `make release` and commit release/"


@pytest.mark.parametrize("marker", ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                                    "course.grading", "course.checks", "import course"])
def test_release_has_no_solution_or_hidden_test_markers(marker):
    assert marker not in release_text()


def solution_regions() -> list[list[str]]:
    """The stripped, non-empty lines of each solution region of the source notebook."""
    regions = []
    for cell in grade_cells(SOURCE_NB, solution=True):
        lines = [line.strip() for line in between(cell.source, "BEGIN SOLUTION", "END SOLUTION") if line.strip()]
        regions.append(lines)
    return regions


def test_release_answer_cells_contain_no_solution_line():
    answers = "\n".join(c.source for c in grade_cells(RELEASE_NB, solution=True))
    leaked = [line for region in solution_regions() for line in region if not line.startswith("#") and line in answers]
    assert not leaked, f"solution lines found in the release's answer cells: {leaked}"


def test_release_contains_no_solution_region_anywhere():
    """Instructions may quote a line of a solution, but no file may contain a whole solution."""
    text = "\n".join(line.strip() for line in release_text().splitlines())
    leaked = [region[0] for region in solution_regions() if len(region) > 1 and "\n".join(region) in text]
    assert not leaked, f"whole solutions found in release/, starting with: {leaked}"


def test_release_ships_only_the_notebook_probes_and_data():
    files = sorted(str(p.relative_to(RELEASE)) for p in RELEASE.rglob("*") if p.is_file())
    assert files == ["data/README.md", "data/rotten_tomatoes.csv", f"{ASSIGNMENT}.ipynb", "transformer_probes.py"]


def test_every_answer_cell_fails_loudly_until_written():
    code_answers = [c for c in grade_cells(RELEASE_NB, solution=True) if c.cell_type == "code"]
    written_answers = [c for c in grade_cells(RELEASE_NB, solution=True) if c.cell_type == "markdown"]
    assert len(code_answers) == 11 and len(written_answers) == 3
    assert all('raise NotImplementedError("Write your solution here' in c.source for c in code_answers)
    assert all(c.source == "YOUR ANSWER HERE" for c in written_answers)


def test_release_keeps_every_cell_and_its_grading_metadata():
    source_ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in SOURCE_NB.cells]
    release_ids = [c.metadata.get("nbgrader", {}).get("grade_id") for c in RELEASE_NB.cells]
    assert release_ids == source_ids
    points = lambda nb: {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"]
                         for c in grade_cells(nb, grade=True)}
    assert points(RELEASE_NB) == points(SOURCE_NB)


def test_only_the_training_cell_gets_the_long_time_limit():
    long_cells = [cell.id for cell in RELEASE_NB.cells
                  if cell.cell_type == "code" and limits.cell_timeout(cell) == limits.LONG_CELL_TIMEOUT_S]
    assert long_cells == ["demo-train"]
    assert limits.CELL_TIMEOUT_S < limits.LONG_CELL_TIMEOUT_S
