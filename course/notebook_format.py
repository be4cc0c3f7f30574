"""Build an nbgrader instructor notebook from an assignment's authoring file.

The authoring file (``assignments/<assignment>/notebook.py``) is a notebook in
jupytext's percent format: valid Python that Jupyter opens as a notebook (with
jupytext) and that linters read. Each cell opens with a header line::

    # %% [markdown]                                  instructions, shown as written
    # %% code id="setup-imports"                     provided code, read-only for students
    # %% code id="demo-train" runtime="long"         provided code that may run for minutes
                                                     (training): grading gives it the long limit
    # %% solution id="answer-attention"              student writes code (nbgrader solution)
    # %% tests id="attention_values" points=4        graded check (read-only, empty in the file:
                                                     its body is generated; the check runs outside
                                                     the notebook, see course.grading.judge)
    # %% answer [markdown] id="reflection-1" points=5  written answer, graded by hand

Comment lines before the first header describe the file and are not a cell.
nbgrader's cell metadata is the contract between the notebook and the grader;
it is generated here and never edited by hand. A wrong header is an error that
names its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import jupytext
import nbformat

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}
HEADER = re.compile(r"# %%(?P<rest>.*)")
KINDS = {  # kind -> (is markdown, attributes it requires, attributes it may have)
    "markdown": (True, set(), set()),
    "code": (False, {"id"}, {"runtime"}),
    "solution": (False, {"id"}, set()),
    "tests": (False, {"id", "points"}, set()),
    "answer": (True, {"id", "points"}, set()),
}
ATTRIBUTE = re.compile(r'(?P<key>\w+)=(?:"(?P<text>[\w.-]+)"|(?P<number>\d+))$')
NBGRADER_FLAGS = {
    "code": dict(grade=False, solution=False, locked=True),
    "solution": dict(grade=False, solution=True, locked=False),
    "tests": dict(grade=True, solution=False, locked=True),
    "answer": dict(grade=True, solution=True, locked=False),
}


class AuthoringError(ValueError):
    """A mistake in an authoring file, with the line it is on."""


@dataclass
class CellSpec:
    """One cell of the authoring file: its kind, attributes, source and header line."""

    kind: str
    attrs: dict[str, str | int]
    line: int
    source: str = ""


def parse_header(text: str, line: int) -> CellSpec:
    """The kind and attributes of one `# %%` header line (numbered `line` in the file)."""
    words = HEADER.fullmatch(text)["rest"].split()
    kind = "code_or_markdown"
    if words and words[0] in KINDS and words[0] != "markdown":  # `# %% markdown` is code to jupytext
        kind = words.pop(0)
    if words and words[0] == "[markdown]":
        words.pop(0)
        kind = "markdown" if kind == "code_or_markdown" else kind
        if not KINDS[kind][0]:
            raise AuthoringError(f"line {line}: a {kind} cell is code; drop [markdown]")
    elif kind in ("answer", "code_or_markdown"):
        raise AuthoringError(f"line {line}: a header starts `# %% [markdown]`, `# %% answer [markdown]` or "
                             f"`# %% code|solution|tests`; got {text!r}")
    attrs: dict[str, str | int] = {}
    for word in words:
        match = ATTRIBUTE.match(word)
        if not match:
            raise AuthoringError(f'line {line}: {word!r} is not key="text" or key=number')
        attrs[match["key"]] = match["text"] if match["text"] is not None else int(match["number"])
    _, required, optional = KINDS[kind]
    if missing := required - attrs.keys():
        raise AuthoringError(f"line {line}: a {kind} cell needs {', '.join(sorted(missing))}")
    if unknown := attrs.keys() - required - optional:
        raise AuthoringError(f"line {line}: a {kind} cell takes no {', '.join(sorted(unknown))}")
    if "points" in attrs and not isinstance(attrs["points"], int):
        raise AuthoringError(f"line {line}: points is a whole number, without quotes")
    if attrs.get("runtime", "long") != "long":
        raise AuthoringError(f'line {line}: runtime can only be "long"')
    return CellSpec(kind, attrs, line)


def parse_cells(text: str) -> list[CellSpec]:
    """The cells of an authoring file, checked header by header; sources as Jupyter shows them."""
    specs = [parse_header(line, number) for number, line in enumerate(text.splitlines(), start=1)
             if line.startswith("# %%")]
    if not specs:
        raise AuthoringError("line 1: no `# %%` cell header in the file")
    cells = jupytext.reads(text, fmt="py:percent").cells
    cells = cells[len(cells) - len(specs):]  # comments before the first header become no cell
    for spec, cell in zip(specs, cells, strict=True):
        spec.source = cell.source
        if spec.kind == "tests" and spec.source.strip():
            raise AuthoringError(f"line {spec.line}: leave the tests cell {spec.attrs['id']!r} empty; "
                                 "its body is generated")
    return specs


def check_cell_source(check_id: str, points: int) -> str:
    """The body of a test cell: the check itself runs outside the student's kernel."""
    unit = "point" if points == 1 else "points"
    return (f"# Graded check `{check_id}` ({points} {unit}): after you submit, the grader runs your code on its own\n"
            "# inputs, outside this notebook. Its verdict appears here, in your feedback, after grading.")


def build_cell(spec: CellSpec, index: int) -> nbformat.NotebookNode:
    """One notebook cell, with nbgrader metadata for every cell that has an id."""
    markdown = KINDS[spec.kind][0]
    source = check_cell_source(spec.attrs["id"], spec.attrs["points"]) if spec.kind == "tests" else spec.source
    cell = nbformat.v4.new_markdown_cell(source) if markdown else nbformat.v4.new_code_cell(source)
    if spec.kind == "markdown":
        cell.id = f"md-{index:03d}"
        return cell
    cell.id = spec.attrs["id"]
    cell.metadata["nbgrader"] = {"grade_id": spec.attrs["id"], "schema_version": 3, **NBGRADER_FLAGS[spec.kind]}
    if "points" in spec.attrs:
        cell.metadata["nbgrader"]["points"] = spec.attrs["points"]
    if spec.attrs.get("runtime") == "long":
        cell.metadata["course"] = {"long_running": True}
    return cell


def build_notebook(specs: list[CellSpec]) -> nbformat.NotebookNode:
    """Turn cell specs into an nbformat v4 notebook with nbgrader metadata."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    seen: dict[str, int] = {}
    for index, spec in enumerate(specs):
        cell = build_cell(spec, index)
        if cell.id in seen:
            raise AuthoringError(f"line {spec.line}: cell id {cell.id!r} is already used on line {seen[cell.id]}")
        seen[cell.id] = spec.line
        nb.cells.append(cell)
    return nb


def render(authoring_file: Path) -> str:
    """The instructor notebook for an authoring file, as ipynb text."""
    try:
        nb = build_notebook(parse_cells(authoring_file.read_text()))
    except AuthoringError as error:
        raise AuthoringError(f"{authoring_file}: {error}") from None
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"
