"""The authoring format: jupytext percent cells with headers that say what nbgrader makes of them."""

from __future__ import annotations

import pytest

from course.notebook_format import AuthoringError, build_notebook, check_cell_source, parse_cells

GOOD = '''# A comment about the file: not a cell.

# %% [markdown]
# # Title
# Text with <PAD> in it.

# %% code id="setup-imports"
import math

# %% solution id="answer-square"
def square(x):
    return x * x

# %% tests id="square_values" points=2

# %% code id="demo-train" runtime="long"
print(math.pi)

# %% answer [markdown] id="reflection" points=5
# Write your answer here.
'''


def test_cells_get_their_kind_and_nbgrader_metadata():
    nb = build_notebook(parse_cells(GOOD))
    kinds = [(c.cell_type, c.metadata.get("nbgrader", {}).get("grade_id")) for c in nb.cells]
    assert kinds == [("markdown", None), ("code", "setup-imports"), ("code", "answer-square"),
                     ("code", "square_values"), ("code", "demo-train"), ("markdown", "reflection")]
    meta = {c.id: c.metadata.get("nbgrader") for c in nb.cells}
    assert meta["answer-square"] == {"grade_id": "answer-square", "schema_version": 3, "grade": False,
                                     "solution": True, "locked": False}
    assert meta["square_values"]["points"] == 2 and meta["square_values"]["grade"] and meta["square_values"]["locked"]
    assert meta["reflection"]["points"] == 5 and meta["reflection"]["solution"]
    assert nb.cells[0].source == "# Title\nText with <PAD> in it."
    assert nb.cells[3].source == check_cell_source("square_values", 2)
    assert nb.cells[4].metadata["course"] == {"long_running": True}
    assert nb.cells[5].source == "Write your answer here."


@pytest.mark.parametrize("header, error", [
    ('# %% tests id="a"', 'line 3: a tests cell needs points'),
    ('# %% tests id="a" points="2"', "line 3: points is a whole number"),
    ('# %% solution', "line 3: a solution cell needs id"),
    ('# %% solution id=answer', "line 3: 'id=answer' is not key=\"text\""),
    ('# %% solution id="a" points=2', "line 3: a solution cell takes no points"),
    ('# %% markdown', "line 3: a header starts"),
    ('# %%', "line 3: a header starts"),
    ('# %% answer id="r" points=5', "line 3: a header starts"),
    ('# %% code [markdown] id="x"', "line 3: a code cell is code"),
    ('# %% code id="x" runtime="short"', 'line 3: runtime can only be "long"'),
])
def test_a_wrong_header_is_an_error_that_names_its_line(header, error):
    with pytest.raises(AuthoringError, match=error.replace("(", r"\(")):
        parse_cells(f"# %% [markdown]\n# Text\n{header}\nx = 1\n")


def test_a_tests_cell_with_a_body_and_a_duplicated_id_are_errors():
    with pytest.raises(AuthoringError, match="line 1: leave the tests cell 'a' empty"):
        parse_cells('# %% tests id="a" points=2\nassert True\n')
    with pytest.raises(AuthoringError, match="line 3: cell id 'a' is already used on line 1"):
        build_notebook(parse_cells('# %% code id="a"\nx = 1\n# %% solution id="a"\ny = 2\n'))
