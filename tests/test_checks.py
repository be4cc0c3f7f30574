"""Verdicts: a check passes only if every expectation holds, and its message never shows the reference."""

from __future__ import annotations

import numpy as np
import pytest

from course.checks import Check, Expect, judge


CHECK = Check("demo", "demo piece", (Expect("x", "hint about x"), Expect("y", "y must equal x", same_as="x")))


@pytest.mark.parametrize("outputs, message", [
    ({"x": np.ones(3), "y": np.ones(3)}, None),
    ({"x": np.ones(3) + 1e-3, "y": np.ones(3) + 1e-3}, "values differ"),
    ({"x": np.ones(4), "y": np.ones(4)}, "shape (4,) where (3,) was expected"),
    ({"x": np.array([1.0, np.nan, 1.0]), "y": np.ones(3)}, "NaN"),
    ({"x": np.ones(3), "y": np.zeros(3)}, "y must equal x"),
    ({"x": np.ones(3)}, "no output 'y'"),
])
def test_judge_compares_with_reference_and_relations(outputs, message):
    result = judge(CHECK, outputs, None, {"x": np.ones(3)})
    assert result.passed == (message is None)
    if message:
        assert message in result.message


def test_judge_reports_the_error_a_piece_raised_and_never_the_reference():
    result = judge(CHECK, None, "ValueError: boom", {"x": np.full(3, 12345.0)})
    assert not result.passed and "ValueError: boom" in result.message
    wrong = judge(CHECK, {"x": np.zeros(3), "y": np.zeros(3)}, None, {"x": np.full(3, 12345.0)})
    assert "12345" not in wrong.message
