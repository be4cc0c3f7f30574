"""Build an nbgrader instructor notebook from a plain-text authoring file.

The authoring file (``authoring/<assignment>.nb``) is a list of cells, each
opened by a header line::

    %% markdown                          instructions, shown as written
    %% code id=setup-imports             provided code, read-only for students
    %% solution id=answer-attention      student writes code (nbgrader solution)
    %% tests id=attention_values points=4  autograded check (read-only; its body is generated:
                                         the check runs outside the notebook, see course.grading.judge)
    %% answer id=reflection-1 points=5   manually graded written answer
    %% code id=demo-train runtime=long   a cell that may run for minutes (training):
                                         grading gives it the long per-cell time limit

nbgrader's cell metadata is the contract between the notebook and the grader;
it is generated here and never edited by hand.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

HEADER = re.compile(r"^%% (?P<kind>markdown|code|solution|tests|answer)(?P<attrs>( \w+=[\w.-]+)*)\s*$")
KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


@dataclass
class CellSpec:
    """One cell of the authoring file: its kind, attributes and source."""

    kind: str
    attrs: dict[str, str] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        return "\n".join(self.lines).strip("\n")


def parse_cells(text: str) -> list[CellSpec]:
    """Split an authoring file into cells; text before the first header is a comment."""
    cells: list[CellSpec] = []
    for line_no, line in enumerate(text.splitlines(), start=1):
        if line.startswith("%% "):
            match = HEADER.match(line)
            if not match:
                raise ValueError(f"line {line_no}: bad cell header {line!r}")
            attrs = dict(a.split("=", 1) for a in match["attrs"].split())
            cells.append(CellSpec(match["kind"], attrs))
        elif cells:
            cells[-1].lines.append(line)
    return cells


def check_cell_source(check_id: str, points: int) -> str:
    """The body of a test cell: the check itself runs outside the student's kernel."""
    unit = "point" if points == 1 else "points"
    return (f"# Graded check `{check_id}` ({points} {unit}): after you submit, the grader runs your code on its own\n"
            "# inputs, outside this notebook. Its verdict appears here, in your feedback, after grading.")


def _nbgrader_metadata(spec: CellSpec) -> dict | None:
    grade_id = spec.attrs.get("id")
    if spec.kind == "markdown":
        return None
    if not grade_id:
        raise ValueError(f"a {spec.kind} cell needs id=...: {spec.source[:60]!r}")
    flags = {
        "code": dict(grade=False, solution=False, locked=True),
        "solution": dict(grade=False, solution=True, locked=False),
        "tests": dict(grade=True, solution=False, locked=True),
        "answer": dict(grade=True, solution=True, locked=False),
    }[spec.kind]
    meta = {"grade_id": grade_id, "schema_version": 3, **flags}
    if flags["grade"]:
        meta["points"] = int(spec.attrs["points"])
    return meta


def build_notebook(specs: list[CellSpec]) -> nbformat.NotebookNode:
    """Turn cell specs into an nbformat v4 notebook with nbgrader metadata."""
    nb = nbformat.v4.new_notebook()
    nb.metadata = {"kernelspec": KERNELSPEC, "language_info": {"name": "python"}}
    seen: set[str] = set()
    for index, spec in enumerate(specs):
        meta = _nbgrader_metadata(spec)
        markdown = spec.kind in ("markdown", "answer")
        source = spec.source
        if spec.kind == "tests":
            if source.strip():
                raise ValueError(f"tests cell {meta['grade_id']!r}: leave its body empty, it is generated")
            source = check_cell_source(meta["grade_id"], meta["points"])
        cell = nbformat.v4.new_markdown_cell(source) if markdown else nbformat.v4.new_code_cell(source)
        cell.id = meta["grade_id"] if meta else f"md-{index:03d}"
        if cell.id in seen:
            raise ValueError(f"duplicate cell id {cell.id!r}")
        seen.add(cell.id)
        if meta:
            cell.metadata["nbgrader"] = meta
        if spec.attrs.get("runtime") == "long":
            cell.metadata["course"] = {"long_running": True}
        nb.cells.append(cell)
    return nb


def render(authoring_file: Path) -> str:
    """The instructor notebook for an authoring file, as ipynb text."""
    nb = build_notebook(parse_cells(authoring_file.read_text()))
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"
