"""The fixture assignment the machinery's tests grade: its reference data and corpus hold, like a real one's;
and the judge's rule for probes that give other results when run again, on its checks."""

from __future__ import annotations

import pytest

from course.grading.judge import judge_checks
from course.grading.probe import AGAIN_PREFIX
from course.measuring.grader_accuracy import acceptable, corpora, evaluate_corpora, failed_checks, report
from course.samples import sample_notebook
from course.verdicts import reference_for
from helpers import ASSIGNMENT, assert_reference_is_fresh

pytestmark = pytest.mark.usefixtures("on_fixture")


def test_committed_reference_matches_a_fresh_run_of_the_solution():
    assert_reference_is_fresh(ASSIGNMENT, "rebuild it as its notebook.py says")


def test_solution_full_marks_and_every_mutant_caught_and_named_right():
    assert failed_checks(ASSIGNMENT, sample_notebook(ASSIGNMENT, "perfect")) == {}
    results = evaluate_corpora(ASSIGNMENT, tuple(c for c in corpora(ASSIGNMENT) if c.edits))
    text = report(ASSIGNMENT, results)
    figures = results["corpus"]
    assert figures.count("named_right") == figures.count("caught") == len(figures.mutants), text
    assert acceptable(ASSIGNMENT, "corpus", figures), text


def test_a_check_whose_second_run_differs_fails_saying_so_unless_the_grader_cut_it_short():
    reference = reference_for(ASSIGNMENT)
    first = {check_id: dict(data) for check_id, data in reference.items()}
    second = {AGAIN_PREFIX + check_id: dict(data) for check_id, data in reference.items()}
    second[AGAIN_PREFIX + "square_values"] = {key: value + 1 for key, value in reference["square_values"].items()}
    results = judge_checks(ASSIGNMENT, {**first, **second}, {})
    assert [check_id for check_id, result in results.items() if not result["passed"]] == ["square_values"]
    assert "run a second time on the same inputs, it gave other results" in results["square_values"]["message"]
    assert results["square_values"]["mistake"] == "state-between-calls"
    del second[AGAIN_PREFIX + "square_values"]
    cut_short = {AGAIN_PREFIX + "square_values": "TimeLimitExceeded: did not finish within 60 s"}
    assert all(result["passed"] for result in judge_checks(ASSIGNMENT, {**first, **second}, cut_short).values())
