"""Verdicts: each sample bug costs exactly its own check, with a message that names the mistake."""

from __future__ import annotations

import numpy as np
import pytest

from course.checks import Check, Expect, checks_for, judge
from course.samples import SAMPLE_BUGS, sample_notebook
from grader_accuracy.report import failed_checks
from helpers import ASSIGNMENT


def test_partial_sample_fails_exactly_the_checks_of_its_bugs():
    failed = failed_checks(sample_notebook(ASSIGNMENT, "partial"))
    assert set(failed) == {check for _, check in SAMPLE_BUGS[ASSIGNMENT]}


def test_blank_release_fails_every_check_with_not_implemented():
    failed = failed_checks(sample_notebook(ASSIGNMENT, "blank"))
    assert set(failed) == set(checks_for(ASSIGNMENT))
    assert all("NotImplementedError" in m or "is not defined" in m for m in failed.values()), failed


def test_messages_name_the_likely_mistake():
    failed = failed_checks(sample_notebook(ASSIGNMENT, "partial"))
    assert "sqrt(d_k)" in failed["attention_values"]
    assert "biased variance" in failed["layer_norm"]
    assert "padding" in failed["mini_transformer"].lower()


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
