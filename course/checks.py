"""Verdicts: compare a probe's data with the instructor's reference data.

A check is all-or-nothing and is worth the points of its nbgrader test cell.
Its verdict is a pure function of data: the judge (course.grading.judge)
applies it in a process where no student code runs, and nbgrader's gradebook
stores what it decided (course.grading.nbgrader_hooks).

Messages say what probably went wrong; they never show reference values.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import numpy as np

from course import paths
from course.parts import part


@dataclass(frozen=True)
class Expect:
    """One output of a probe must match: the reference (default) or another output (`same_as`)."""

    key: str
    hint: str
    atol: float = 1e-4
    same_as: str | None = None
    shape_hint: str = ""


@dataclass(frozen=True)
class Check:
    """A named, graded check of one piece of the notebook."""

    check_id: str
    piece: str
    expects: tuple[Expect, ...]


@dataclass(frozen=True)
class Verdict:
    check_id: str
    passed: bool
    message: str


def mismatch(got: np.ndarray, want: np.ndarray, atol: float) -> str | None:
    """Why `got` differs from `want`, or None when they agree."""
    if got.shape != want.shape:
        return f"shape {got.shape} where {want.shape} was expected"
    if want.dtype.kind in "US" or got.dtype.kind in "US":
        if got.dtype.kind not in "US":
            return "numbers where text was expected"
        wrong = [i for i, (g, w) in enumerate(zip(got.ravel(), want.ravel())) if g != w]
        if not wrong:
            return None
        return f"item {wrong[0]} is {str(got.ravel()[wrong[0]])!r}, which is not what was expected"
    if want.dtype == bool or got.dtype == bool:
        return None if np.array_equal(got, want) else "the flag is not what was expected"
    got, want = got.astype(float), want.astype(float)
    if not np.all(np.isfinite(got)):
        return "it contains NaN or infinite values"
    error = np.abs(got - want)
    if np.all(error <= atol + 1e-4 * np.abs(want)):
        return None
    worst = np.unravel_index(np.argmax(error), error.shape) if error.ndim else ()
    return f"values differ (largest difference {error.max():.3g} at index {tuple(int(i) for i in worst)})"


def judge(check: Check, outputs: dict[str, np.ndarray] | None, error: str | None,
          reference: dict[str, np.ndarray]) -> Verdict:
    """The verdict on one check: passed only if every expectation holds."""
    if error is not None or outputs is None:
        return Verdict(check.check_id, False, f"{check.piece} raised an error on the grader's inputs: {error}")
    for expect in check.expects:
        if expect.key not in outputs:
            return Verdict(check.check_id, False, f"{check.piece}: no output {expect.key!r} was recorded.")
        want = outputs[expect.same_as] if expect.same_as else reference[expect.key]
        problem = mismatch(np.asarray(outputs[expect.key]), np.asarray(want), expect.atol)
        if problem:
            return Verdict(check.check_id, False, f"{check.piece} ({expect.key}): {problem}. {expect.hint}")
    return Verdict(check.check_id, True, f"{check.piece}: all hidden tests passed.")


@cache
def checks_for(assignment: str) -> dict[str, Check]:
    """The assignment's checks by id (CHECKS of assignments/<assignment>/checks.py)."""
    return {check.check_id: check for check in part(assignment, "checks").CHECKS}


@cache
def reference_for(assignment: str) -> dict[str, dict[str, np.ndarray]]:
    """Reference data by check id, then output key."""
    with np.load(paths.reference_file(assignment), allow_pickle=False) as data:
        reference: dict[str, dict[str, np.ndarray]] = {}
        for name in data.files:
            check_id, key = name.split("/", 1)
            reference.setdefault(check_id, {})[key] = data[name]
    return reference


def verdict(assignment: str, check_id: str, outputs: dict[str, np.ndarray] | None, error: str | None = None) -> Verdict:
    """Judge one probe's outputs against the assignment's reference."""
    return judge(checks_for(assignment)[check_id], outputs, error, reference_for(assignment).get(check_id, {}))
