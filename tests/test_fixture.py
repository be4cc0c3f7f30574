"""The fixture assignment the machinery's tests grade: its reference data and corpus hold, like a real one's."""

from __future__ import annotations

import numpy as np
import pytest

from course.checks import reference_for
from course.grader_accuracy import corpus, evaluate_all, failed_checks, report
from course.reference import solution_outputs
from course.samples import sample_notebook
from helpers import ASSIGNMENT

pytestmark = pytest.mark.usefixtures("on_fixture")


def test_committed_reference_matches_a_fresh_run_of_the_solution():
    fresh = solution_outputs(ASSIGNMENT)
    committed = {f"{c}/{k}": v for c, data in reference_for(ASSIGNMENT).items() for k, v in data.items()}
    assert sorted(fresh) == sorted(committed), "rebuild it as its notebook.py says"
    for key, value in fresh.items():
        np.testing.assert_allclose(value, committed[key], atol=1e-9, err_msg=key)


def test_solution_full_marks_and_every_mutant_caught():
    assert failed_checks(ASSIGNMENT, sample_notebook(ASSIGNMENT, "perfect")) == {}
    mutants, alternatives = corpus(ASSIGNMENT)
    outcomes = evaluate_all(ASSIGNMENT, mutants + alternatives)
    assert "mutants caught: 100%, alternatives accepted: 100%" in report(ASSIGNMENT, outcomes[:len(mutants)],
                                                                         outcomes[len(mutants):])
