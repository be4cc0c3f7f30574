"""Mend the structure of a submitted notebook before it is graded, the same way on both paths.

Students and their editors break what nbgrader relies on: cells lose or change
their nbgrader metadata, graded cells are copied, test cells are deleted or
edited. nbgrader 0.9.6 restores edited read-only cells by itself
(OverwriteCells), but it gives up on the whole notebook with a KeyError when a
cell's metadata was stripped, when a graded cell appears twice, or when a
deleted test cell followed a read-only cell (its add_missing_cells looks the
neighbour up among graded cells only). `repair` fixes those, in place, before
nbgrader sees the notebook (the `RepairStructure` preprocessor) and before the
probe reads the answer cells (course.probe_runner.graded_program), and says what it
found:

- a cell whose id is a released cell's id gets that cell's nbgrader metadata
  back (stripped or changed points, flags, grade ids);
- of several cells with one grade id, the last is graded (the definition the
  kernel ends with); the others run as ordinary code;
- a deleted cell of the release (test, read-only or answer cell) is put back
  as released, after the released cell that preceded it; nbgrader then
  restores the hidden tests in it;
- edits to read-only cells are only reported: nbgrader undoes them.
"""

from __future__ import annotations

import copy
from collections import Counter

import nbformat


def _nbgrader(cell: nbformat.NotebookNode) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def _listed(ids: list[str], shown: int = 4) -> str:
    """'a, b' or, for many, 'a, b, c, d and 47 more'."""
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


def repair(nb: nbformat.NotebookNode, release: nbformat.NotebookNode) -> list[str]:
    """Repair `nb` (a submission of the `release` notebook) in place; one note per kind of repair."""
    released = {cell.id: cell for cell in release.cells if _nbgrader(cell)}
    restored, edited = [], []
    for cell in nb.cells:
        original = released.get(cell.get("id"))
        if original is None or original.cell_type != cell.cell_type:
            continue
        if _nbgrader(cell) != _nbgrader(original):
            restored.append(cell.id)
            cell.metadata["nbgrader"] = copy.deepcopy(_nbgrader(original))
        if _nbgrader(original).get("locked") and cell.source != original.source:
            edited.append(cell.id)
    for cell in nb.cells:  # left by other tools: nbgrader needs a grade_id on every nbgrader cell
        if "nbgrader" in cell.get("metadata", {}) and "grade_id" not in _nbgrader(cell):
            del cell.metadata["nbgrader"]
    counts = Counter(_nbgrader(cell).get("grade_id") for cell in nb.cells if _nbgrader(cell))
    duplicated = sorted(grade_id for grade_id, count in counts.items() if count > 1)
    seen: set[str] = set()
    for cell in reversed(nb.cells):  # the last copy of each graded cell keeps its metadata
        grade_id = _nbgrader(cell).get("grade_id")
        if grade_id in seen:
            del cell.metadata["nbgrader"]
        elif grade_id:
            seen.add(grade_id)
    missing = _put_back_deleted(nb, release)
    notes = []
    if restored:
        notes.append(f"Cells whose nbgrader metadata was missing or changed, restored from the release: "
                     f"{_listed(restored)}.")
    if duplicated:
        notes.append(f"Graded cells that appear more than once (the last copy was graded, earlier copies ran as "
                     f"ordinary code): {_listed(duplicated)}.")
    if missing:
        notes.append(f"Cells of the release that were deleted, put back for grading: {_listed(missing)}.")
    if edited:
        notes.append(f"Read-only cells that were edited, restored for grading: {_listed(edited)}.")
    return notes


def _put_back_deleted(nb: nbformat.NotebookNode, release: nbformat.NotebookNode) -> list[str]:
    """Insert each released nbgrader cell that `nb` lacks after the released cell before it; their ids."""
    graded = {_nbgrader(cell)["grade_id"]: cell for cell in nb.cells if _nbgrader(cell)}
    others = {cell.get("id"): cell for cell in nb.cells if not _nbgrader(cell)}
    missing, anchor = [], None
    for cell in release.cells:
        grade_id = _nbgrader(cell).get("grade_id")
        if grade_id and grade_id not in graded:
            missing.append(grade_id)
            position = next(i + 1 for i, c in enumerate(nb.cells) if c is anchor) if anchor is not None else 0
            graded[grade_id] = copy.deepcopy(cell)
            nb.cells.insert(position, graded[grade_id])
        anchor = graded.get(grade_id) if grade_id else others.get(cell.get("id"), anchor)
    return missing
