"""The instructor notebook: generated from its authoring file, and wired to the checks."""

from __future__ import annotations

import re
import subprocess
import sys

import nbformat

from course import paths
from course.checks import checks_for
from course.notebook_format import check_cell_source, parse_cells
from helpers import ASSIGNMENT, grade_cells

SOURCE_NB = nbformat.read(paths.source_notebook(ASSIGNMENT), as_version=4)


def test_source_notebook_is_built_from_the_authoring_file():
    result = subprocess.run([sys.executable, "-m", "course.build_source", "--check"], cwd=paths.ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_each_test_cell_is_one_check_and_runs_nothing_in_the_kernel():
    test_cells = grade_cells(SOURCE_NB, grade=True, solution=False)
    ids = [c.metadata["nbgrader"]["grade_id"] for c in test_cells]
    assert ids == list(checks_for(ASSIGNMENT)), "test cells and checks must correspond one to one, in order"
    for cell in test_cells:
        meta = cell.metadata["nbgrader"]
        assert cell.source == check_cell_source(meta["grade_id"], meta["points"])
        assert all(line.startswith("#") for line in cell.source.splitlines()), "only comments: the check runs outside"


def test_points_add_up_to_fifty_autograded_and_fifteen_by_hand():
    auto = sum(c.metadata["nbgrader"]["points"] for c in grade_cells(SOURCE_NB, grade=True, solution=False))
    manual = sum(c.metadata["nbgrader"]["points"] for c in grade_cells(SOURCE_NB, grade=True, solution=True))
    assert (auto, manual) == (50, 15)


def test_answer_cells_are_the_graded_names_of_the_probe_module():
    from course.probes import load_probes

    defined = set()
    for cell in grade_cells(SOURCE_NB, solution=True):
        defined |= set(re.findall(r"^(?:class|def) (\w+)", cell.source, flags=re.M))
    assert defined == set(load_probes(ASSIGNMENT).GRADED_NAMES)


def test_authoring_format_rejects_a_graded_cell_without_points_or_with_a_body():
    import pytest

    from course.notebook_format import build_notebook

    with pytest.raises(KeyError):
        build_notebook(parse_cells("%% tests id=some_check\n"))
    with pytest.raises(ValueError, match="leave its body empty"):
        build_notebook(parse_cells("%% tests id=some_check points=2\nassert True\n"))
    with pytest.raises(ValueError, match="bad cell header"):
        parse_cells("%% tests id=a points=two words\n")
