"""Grader accuracy: every mutant is caught by its own piece's check only; every alternative gets full marks.

The same evaluation prints the table of `make grader-report`.
"""

from __future__ import annotations

import pytest

from grader_accuracy.alternatives import ALTERNATIVES
from grader_accuracy.mutants import MUTANTS
from grader_accuracy.report import checks_of_cell, evaluate_all, report


@pytest.fixture(scope="module")
def outcomes() -> dict[str, object]:
    results = evaluate_all(MUTANTS + ALTERNATIVES)
    return {o.edit.name: o for o in results}


def test_corpus_is_large_enough_and_covers_every_piece():
    assert len(MUTANTS) >= 40 and len(ALTERNATIVES) >= 8
    assert len({m.name for m in MUTANTS + ALTERNATIVES}) == len(MUTANTS) + len(ALTERNATIVES), "names are unique"
    for cell in checks_of_cell():
        assert sum(m.cell == cell for m in MUTANTS) >= 2, f"fewer than 2 mutants for {cell}"


@pytest.mark.parametrize("mutant", MUTANTS, ids=lambda m: m.name)
def test_mutant_loses_points_on_its_own_piece_only(mutant, outcomes):
    outcome = outcomes[mutant.name]
    assert outcome.failed, f"{mutant.description}: no check failed"
    assert set(outcome.failed) <= outcome.own_checks, f"{mutant.description}: other pieces failed too: {outcome.failed}"


@pytest.mark.parametrize("alternative", ALTERNATIVES, ids=lambda a: a.name)
def test_alternative_gets_full_marks(alternative, outcomes):
    assert outcomes[alternative.name].failed == {}


def test_report_shows_both_targets_met(outcomes):
    text = report([outcomes[m.name] for m in MUTANTS], [outcomes[a.name] for a in ALTERNATIVES])
    print(text)
    assert "mutants caught: 100%, alternatives accepted: 100%" in text
