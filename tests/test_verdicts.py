"""Verdicts: a check passes only if every expectation holds; a failing one names the most specific mistake its
evidence supports, from the catalogue; its message never shows the reference."""

from __future__ import annotations

import numpy as np
import pytest

from course import verdicts
from course.grading.judge import runs_differ
from course.probe_runner import run_probes
from course.verdicts import Check, Clue, Diagnosis, Expect, judge, unknown_names, with_evidence

MISTAKES = {"x-wrong": "advice about x", "y-not-x": "y must equal x", "both-wrong": "x and y are both off",
            "raises-error": "read the error", "not-attempted": "write it"}
CHECK = Check("demo", "demo piece", (Expect("x", "x-wrong"), Expect("y", "y-not-x", same_as="x")))
REFERENCE = {"x": np.ones(3)}


@pytest.mark.parametrize("outputs, message", [
    ({"x": np.ones(3), "y": np.ones(3)}, None),
    ({"x": np.ones(3) + 1e-3, "y": np.ones(3) + 1e-3}, "values differ"),
    ({"x": np.ones(4), "y": np.ones(4)}, "shape (4,) where (3,) was expected"),
    ({"x": np.array([1.0, np.nan, 1.0]), "y": np.ones(3)}, "NaN"),
    ({"x": np.ones(3), "y": np.zeros(3)}, "y must equal x"),
    ({"x": np.ones(3)}, "(y): no output was recorded"),
])
def test_judge_compares_with_reference_and_relations(outputs, message):
    result = judge(CHECK, outputs, None, REFERENCE, MISTAKES)
    assert result.passed == (message is None)
    if message:
        assert message in result.message


def test_judge_reports_the_error_a_piece_raised_by_name_and_never_the_reference():
    result = judge(CHECK, None, "ValueError: boom", {"x": np.full(3, 12345.0)}, MISTAKES)
    assert not result.passed and "ValueError" in result.message and result.mistake == "raises-error"
    wrong = judge(CHECK, {"x": np.zeros(3), "y": np.zeros(3)}, None, {"x": np.full(3, 12345.0)}, MISTAKES)
    assert "12345" not in wrong.message


SMUGGLED = "PROBES = {'cube': lambda ns: ns['cube'](np.arange(7))}"  # what a piece could read of the hidden probes


@pytest.mark.parametrize("outputs, error", [
    (None, f"ValueError: {SMUGGLED}"),
    (None, SMUGGLED),
    ({"x": np.array(f"RuntimeError: {SMUGGLED}"), "y": np.ones(3)}, None),
    ({"x": np.array(SMUGGLED), "y": np.ones(3)}, None),
])
def test_text_the_students_code_made_where_the_probes_ran_is_never_quoted_back(outputs, error):
    """A piece called by the hidden probes can read them (they run in its process): whatever it raises or returns as
    text reaches the student's feedback by an exception's name at most."""
    result = judge(CHECK, outputs, error, REFERENCE, MISTAKES)
    assert not result.passed and "PROBES" not in result.message and "lambda" not in result.message
    texts = Check("t", "text piece", (Expect("x", "x-wrong"),))
    mismatch = judge(texts, {"x": np.array(["ok", SMUGGLED])}, None, {"x": np.array(["ok", "fine"])}, MISTAKES)
    assert "item 1 is not what was expected" in mismatch.message and "PROBES" not in mismatch.message


def test_without_diagnoses_the_first_failing_expectation_names_the_mistake():
    result = judge(CHECK, {"x": np.zeros(3), "y": np.ones(3)}, None, REFERENCE, MISTAKES)
    assert result.mistake == "x-wrong"
    assert "demo piece (x): values differ" in result.message and "Likely mistake `x-wrong`: advice about x" in result.message


BROAD = Check("demo", "demo piece", (Expect("x", "x-wrong", observed="with two keys, the output differs"),
                                     Expect("y", "y-not-x")), clues=(Clue("z"),),
              diagnoses=(Diagnosis("both-wrong", wrong=("x", "z")),))


def test_a_broad_output_that_fails_alone_names_no_mistake_but_says_what_was_observed_and_the_candidates():
    reference = {key: np.ones(2) for key in "xyz"}
    result = judge(BROAD, {"x": np.zeros(2), "y": np.ones(2), "z": np.ones(2)}, None, reference, MISTAKES)
    assert not result.passed and result.mistake is None
    assert "Observed: with two keys, the output differs" in result.message
    assert "Possible causes: `x-wrong`: advice about x; `both-wrong`: x and y are both off" in result.message
    assert "Likely mistake" not in result.message


def test_a_broad_output_names_a_mistake_when_a_diagnosis_singles_it_out():
    reference = {key: np.ones(2) for key in "xyz"}
    assert judge(BROAD, {"x": np.zeros(2), "y": np.ones(2), "z": np.zeros(2)}, None, reference, MISTAKES).mistake == \
        "both-wrong"


@pytest.mark.parametrize("outputs, error", [
    (None, "NotImplementedError: write this"),
    ({"x": np.array("NotImplementedError: "), "y": np.ones(3)}, None),  # an error a probe caught, as an output
])
def test_the_release_stub_is_not_attempted_not_an_error_to_debug(outputs, error):
    result = judge(CHECK, outputs, error, REFERENCE, MISTAKES)
    assert (result.passed, result.mistake) == (False, "not-attempted")
    assert "not attempted" in result.message and "write it" in result.message and "shapes" not in result.message


DIAGNOSED = Check("demo", "demo piece", (Expect("x", "x-wrong"), Expect("y", "y-not-x")), clues=(Clue("z"),),
                  diagnoses=(Diagnosis("both-wrong", wrong=("x", "y"), right=("z",)),))


@pytest.mark.parametrize("wrong, mistake", [
    ({"x", "y"}, "both-wrong"),  # the whole pattern holds: the most specific diagnosis wins
    ({"x", "y", "z"}, "x-wrong"),  # a clue the pattern needs right is wrong: back to the first failing expectation
    ({"y"}, "y-not-x"),
])
def test_the_most_specific_diagnosis_the_evidence_supports_names_the_mistake(wrong, mistake):
    reference = {key: np.ones(2) for key in "xyz"}
    outputs = {key: np.zeros(2) if key in wrong else np.ones(2) for key in "xyz"}
    assert judge(DIAGNOSED, outputs, None, reference, MISTAKES).mistake == mistake


def test_an_output_that_was_not_recorded_is_no_evidence_for_a_diagnosis():
    reference = {key: np.ones(2) for key in "xyz"}
    result = judge(DIAGNOSED, {"x": np.zeros(2), "z": np.ones(2)}, None, reference, MISTAKES)
    assert result.mistake == "x-wrong"


def test_a_clue_costs_nothing():
    reference = {key: np.ones(2) for key in "xyz"}
    assert judge(DIAGNOSED, {"x": np.ones(2), "y": np.ones(2), "z": np.zeros(2)}, None, reference, MISTAKES).passed


def test_evidence_is_derived_once_for_equal_outputs_and_again_for_any_other(monkeypatch):
    derived = []

    def evidence(outputs):
        derived.append(outputs)
        return {"doubled": outputs["x"] * 2}

    monkeypatch.setattr(verdicts, "evidence_for", lambda assignment: {"demo": evidence})
    monkeypatch.setattr(verdicts, "DERIVED", {})
    first = with_evidence("any", "demo", {"x": np.arange(3.0)})
    again = with_evidence("any", "demo", {"x": np.arange(3.0)})
    assert len(derived) == 1 and np.array_equal(again["doubled"], [0.0, 2.0, 4.0]) and again is not first
    for other in ({"x": np.arange(3.0) + 1}, {"x": np.arange(3)}, {"x": np.arange(3.0).reshape(3, 1)},
                  {"x": np.arange(3.0), "y": np.zeros(1)}):
        assert np.array_equal(with_evidence("any", "demo", other)["doubled"], other["x"] * 2)
    assert len(derived) == 5, "values, dtype, shape and keys each tell outputs apart"


def test_a_check_naming_a_mistake_or_output_it_does_not_have_is_an_authoring_error():
    check = Check("demo", "demo piece", (Expect("x", "x-typo"),), diagnoses=(Diagnosis("x-wrong", wrong=("w",)),))
    assert unknown_names(check, MISTAKES) == ["mistake 'x-typo'", "output 'w'"]
    assert unknown_names(DIAGNOSED, MISTAKES) == []


class StandInThing:
    """A grader stand-in whose name must never reach a student."""


def test_errors_name_what_a_stand_in_stands_for_never_its_class():
    module = type("probes", (), {"STAND_INS": {"StandInThing": "the grader's own Thing"},
                                 "PROBES": {"demo": lambda ns: StandInThing().missing}})
    _, errors = run_probes(module, {})
    assert errors["demo"] == "AttributeError: 'the grader's own Thing' object has no attribute 'missing'"


@pytest.mark.parametrize("first, second, differ", [
    (np.array([1.0, np.nan, np.inf]), np.array([1.0, np.nan, np.inf]), False),  # the same NaN every time: repeatable
    (np.array([1.0, np.nan]), np.array([1.0, 2.0]), True),
    (np.array([np.inf]), np.array([-np.inf]), True),
    (np.array([1.0, 2.0]), np.array([1.0, 2.0 + 1e-3]), True),
    (np.array("text"), np.array("text"), False),
])
def test_two_runs_of_the_same_code_agree_when_their_outputs_match_nan_for_nan(first, second, differ):
    assert runs_differ({"out": first}, {"out": second}) == differ


def test_a_probe_input_changed_in_place_by_student_code_is_restored_for_the_next_probe():
    import torch

    inputs = torch.ones(3)

    def changes_its_argument(x):  # student code: `x /= 2`
        x /= 2
        return x.sum().item()

    module = type("probes", (), {"INPUTS": inputs, "PROBES": {
        "first": lambda ns: {"sum": changes_its_argument(inputs)}, "second": lambda ns: {"sum": inputs.sum().item()}}})
    outputs, _ = run_probes(module, {})
    assert (outputs["first"]["sum"], outputs["second"]["sum"]) == (1.5, 3.0) and torch.equal(inputs, torch.ones(3))


def test_student_code_that_turns_gradients_off_for_the_whole_program_costs_only_its_own_probe():
    """A generate that calls torch.set_grad_enabled(False) outside a with leaves gradients off for whatever runs next
    in the kernel: the next probe (a training step, another piece) must still get them, and so must the first probe
    after a notebook that left them off."""
    import torch

    def leaves_gradients_off():  # student code: `torch.set_grad_enabled(False)` where `with torch.no_grad():` was meant
        torch.set_grad_enabled(False)
        return 1

    def trains():  # another piece, which needs gradients
        weight = torch.ones(2, requires_grad=True)
        (2 * weight).sum().backward()
        return weight.grad.sum().item()

    module = type("probes", (), {"PROBES": {"generate": lambda ns: {"ids": leaves_gradients_off()},
                                            "train_step": lambda ns: {"gradient": trains()}}})
    torch.set_grad_enabled(False)  # as the notebook left them
    try:
        outputs, errors = run_probes(module, {})
        after = torch.is_grad_enabled()
    finally:
        torch.set_grad_enabled(True)
    assert errors == {} and outputs["train_step"]["gradient"] == 4.0 and after
