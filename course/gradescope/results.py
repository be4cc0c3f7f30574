"""A graded submission's record, as Gradescope's results.json.

Plain data in, plain data out. One test per graded check (its points, the judge's message, and in extra_data the
mistake it names), one per visible test cell of the notebook (no points: did it pass when the grader ran the
notebook?), and one per written answer, listed as graded by hand. The top-level output gives the status, the flags
and the messages of the record; the student's own printed output (stdout) stays hidden. Nothing here shows a hidden
input or a reference value: the judge's messages never hold one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

import nbformat


from course import untrusted
from course.grading.record import STATUS_MEANING
from course.verdicts import checks_for

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")  # Gradescope's
SETTINGS_FILE = "gradescope.json"  # at the autograder's root
NOTEBOOK_LIMIT = 64 * 2**20  # bytes of the graded notebook read at most (its outputs came from student code)
VISIBLE_PREFIX = "visible-"  # the cells of visible tests (the authoring format's)


@dataclass(frozen=True)
class Settings:
    """What one autograder grades, and how: its assignment, when students see the graded (hidden) checks, and the
    grading limits (course.grading.limits' variables) the instructor built it with."""

    assignment: str
    hidden_checks: str = "after_due_date"
    limits: dict[str, str] = field(default_factory=dict)

    def __post_init__(self):
        if self.hidden_checks not in VISIBILITIES:
            raise ValueError(f"hidden_checks must be one of {', '.join(VISIBILITIES)}, not {self.hidden_checks!r}")

    def json(self) -> str:
        return json.dumps(asdict(self), indent=1, sort_keys=True) + "\n"

    @classmethod
    def read(cls, path: Path) -> Settings:
        return cls(**json.loads(path.read_text()))


def visible_test_errors(notebook: Path) -> dict[str, str | None] | None:
    """The graded notebook's visible test cells, by cell id: the error each showed, or None if it passed. None if
    nbgrader left no readable notebook. (Read as untrusted: student code made its outputs.)"""
    try:
        nb = nbformat.reads(untrusted.read_text(notebook, NOTEBOOK_LIMIT), as_version=4)
    except Exception:  # missing, a link, too large, not a notebook
        return None
    errors = {}
    for cell in nb.cells:
        if cell.cell_type == "code" and str(cell.get("id", "")).startswith(VISIBLE_PREFIX):
            shown = [o for o in cell.get("outputs", []) if o.get("output_type") == "error"]
            errors[cell.id] = untrusted.quoted(f"{shown[0].get('ename')}: {shown[0].get('evalue')}") if shown else None
    return errors


def check_test(record: dict, check_id: str, piece: str, visibility: str) -> dict:
    """One graded check as a Gradescope test."""
    verdict = record["judge"].get(check_id)
    if verdict is None:
        output = "Not judged: no check could run on your code (see the messages at the top)."
    elif verdict["passed"]:
        output = "Passed."
    else:
        output = verdict["message"]  # it gives the named mistake's advice, when it names one
    return {"name": f"{check_id} ({piece})", "score": record["points"][check_id],
            "max_score": record["max_points"][check_id],
            "status": "passed" if verdict and verdict["passed"] else "failed", "output": output,
            "visibility": visibility, "tags": ["check"], "extra_data": {"mistake": (verdict or {}).get("mistake")}}


def visible_test(cell_id: str, error: str | None) -> dict:
    """One visible test cell as a Gradescope test worth no points."""
    output = ("Passed when the grader ran your notebook." if error is None else
              f"Failed when the grader ran your notebook: {error}")
    return {"name": f"Visible tests: {cell_id.removeprefix(VISIBLE_PREFIX)}", "score": 0, "max_score": 0,
            "status": "passed" if error is None else "failed", "output": output, "visibility": "visible",
            "tags": ["visible test"]}


def written_answer(grade_id: str, points: int) -> dict:
    """One written answer: listed, worth nothing here; the instructor grades it by hand."""
    return {"name": f"Written answer: {grade_id}", "score": 0, "max_score": 0,
            "output": f"Graded by hand ({points} points), later: these points are not in the autograder's score.",
            "visibility": "visible", "tags": ["graded by hand"]}


def summary(record: dict) -> str:
    """The top-level output: score, status, flags and the record's messages."""
    total, possible = sum(record["points"].values()), sum(record["max_points"].values())
    written = sum(record["manual_pending"].values())
    lines = [f"Autograded score: {total:g} / {possible:g} points"
             + (f" (written answers, {written:g} points, are graded by hand later)." if written else "."),
             f"Status: {record['status']} ({STATUS_MEANING[record['status']]})."]
    if record["flags"]:
        lines.append(f"Flags for your instructor: {', '.join(record['flags'])}.")
    lines += [f"- {message}" for message in record["messages"]]
    return "\n".join(lines)


def results(record: dict, visible: dict[str, str | None] | None, settings: Settings) -> dict:
    """Gradescope's results.json of a record (course.grading.record's, as a dict) and the visible test cells'
    errors (`visible_test_errors`); execution_time is the caller's."""
    pieces = {check_id: check.piece for check_id, check in checks_for(record["assignment"]).items()}
    tests = [visible_test(cell_id, error) for cell_id, error in (visible or {}).items()]
    tests += [check_test(record, check_id, pieces.get(check_id, check_id), settings.hidden_checks)
              for check_id in record["max_points"]]
    tests += [written_answer(grade_id, points) for grade_id, points in record["manual_pending"].items()]
    return {"score": sum(record["points"].values()), "output": summary(record), "output_format": "text",
            "test_output_format": "text", "visibility": "visible", "stdout_visibility": "hidden", "tests": tests}


def crashed_results(output: str) -> dict:
    """The results.json of a grading that could not finish at all: no points, and why."""
    return {"score": 0, "output": output, "output_format": "text", "visibility": "visible",
            "stdout_visibility": "hidden", "tests": []}
