"""The grader-accuracy tool's reuse of the solution's probe data (course.measuring.probe_reuse), on the fixture assignment: an
edit runs again the probes of the cell it changes, and every probe when it could reach further.

On every edit of the four real assignments' sets, reuse gave the verdicts of a run of every probe when it was
written (issue 22); here, every edit of the fixture's corpus is graded both ways at each run."""

from __future__ import annotations

import numpy as np
import pytest

from course import paths
from course.grading.probe import HIDDEN_RUNS, run_twice
from course.measuring.grader_accuracy import corpora, failed_checks
from course.measuring.probe_reuse import Recorder, probe_data, probes_to_run, solution_probes
from course.probe_runner import execute_program, graded_program, load_probes
from course.samples import Edit, apply_edits, sample_notebook
from helpers import ASSIGNMENT

pytestmark = pytest.mark.usefixtures("on_fixture")

BODY = "return np.asarray(x, dtype=float) ** 3"  # the cube cell's answer
NORMALIZE = "spread = x.max() - x.min()"


def edited(*edits: tuple[str, str, str]):
    """The graded program of the solution with each (cell, old text, new text) applied."""
    changes = [Edit(f"edit-{i}", cell, ((old, new),), "") for i, (cell, old, new) in enumerate(edits)]
    return graded_program(ASSIGNMENT, apply_edits(sample_notebook(ASSIGNMENT, "perfect"), changes))


def test_on_the_solution_each_probe_uses_the_cell_of_the_function_it_calls_and_no_other():
    solution = solution_probes(ASSIGNMENT)
    assert solution.uses == {"square_values": {"answer-square"}, "cube_values": {"answer-cube"},
                             "clip_values": {"answer-clip"}, "normalize_values": {"answer-normalize"},
                             "normalize_constant": {"answer-normalize"}, "mean_values": {"answer-mean"}}
    assert solution.entangled == set()


@pytest.mark.parametrize("read", [lambda ns: ns["square"], lambda ns: ns.get("square"), lambda ns: "square" in ns,
                                  lambda ns: exec("square", ns)], ids=["item", "get", "in", "a global in code"])
def test_a_name_read_from_the_namespace_is_recorded(read):
    ns = Recorder(square=1, cube=2)
    read(ns)
    assert ns.read == {"square"}


@pytest.mark.parametrize("walk", [list, lambda ns: list(ns.items()), lambda ns: list(ns.values()), dict],
                         ids=["iter", "items", "values", "a copy"])
def test_going_through_the_namespace_reads_every_name(walk):
    ns = Recorder(square=1, cube=2)
    walk(ns)
    assert ns.read == {"square", "cube"}


def test_an_edit_inside_a_function_runs_again_the_probes_of_its_cell_only():
    program = edited(("answer-normalize", NORMALIZE, "spread = x.max()"))
    assert probes_to_run(solution_probes(ASSIGNMENT), program) == {"normalize_values", "normalize_constant"}


def test_a_helper_with_a_name_the_program_does_not_bind_is_still_one_cells_edit():
    program = edited(("answer-cube", "def cube(x):", "def _power(x, n):\n    return x ** n\n\n\ndef cube(x):"))
    assert probes_to_run(solution_probes(ASSIGNMENT), program) == {"cube_values"}


def test_the_solution_itself_runs_no_probe_again():
    assert probes_to_run(solution_probes(ASSIGNMENT), edited()) == set()


@pytest.mark.parametrize("edits", [
    [("answer-cube", "def cube(x):", "SCALE = 1.0\n\n\ndef cube(x):")],  # a top-level statement
    [("answer-cube", "def cube(x):", "import numpy\n\n\ndef cube(x):")],  # an import of its own
    [("answer-cube", "def cube(x):", "def cubed(x):")],  # the name the probes call, gone
    [("answer-cube", "def cube(x):", "def square(x):\n    return x\n\n\ndef cube(x):")],  # another cell's name
    [("answer-cube", BODY, "return x"), ("answer-square", "** 2", "** 3")],  # two cells
], ids=["top-level statement", "import", "renamed", "another cell's name", "two cells"])
def test_an_edit_that_could_reach_beyond_its_cells_probes_runs_every_probe(edits):
    assert probes_to_run(solution_probes(ASSIGNMENT), edited(*edits)) is None


def full_run(program) -> tuple[dict, dict]:
    ns, _ = execute_program(program, paths.source_dir(ASSIGNMENT))
    return run_twice(load_probes(ASSIGNMENT), ns, HIDDEN_RUNS)


def assert_same_data(got: tuple[dict, dict], want: tuple[dict, dict]) -> None:
    (outputs, errors), (want_outputs, want_errors) = got, want
    assert errors == want_errors and sorted(outputs) == sorted(want_outputs)
    for step, data in want_outputs.items():
        assert sorted(outputs[step]) == sorted(data) and all(np.array_equal(outputs[step][k], v) for k, v in data.items())


def test_the_probe_data_of_an_edit_are_those_of_a_full_run():
    program = edited(("answer-normalize", NORMALIZE, "spread = x.max()"))
    assert_same_data(probe_data(ASSIGNMENT, program), full_run(program))


def test_an_edit_whose_code_rebinds_another_cells_name_when_called_is_judged_on_a_full_run():
    """Reused, the square probe's data would be the solution's; run again after cube's call, square is gone."""
    program = edited(("answer-cube", BODY, "global square\n    square = None\n    " + BODY))
    assert_same_data(probe_data(ASSIGNMENT, program), full_run(program))
    nb = apply_edits(sample_notebook(ASSIGNMENT, "perfect"),
                     [Edit("rebinds", "answer-cube", ((BODY, "global square\n    square = None\n    " + BODY),), "")])
    assert set(failed_checks(ASSIGNMENT, nb, reuse=True)) == set(failed_checks(ASSIGNMENT, nb)) >= {"square_values"}


def test_every_edit_of_the_corpus_fails_the_same_checks_with_the_same_messages_as_on_a_full_run():
    graded = {e.name: apply_edits(sample_notebook(ASSIGNMENT, "perfect"), [e]) for c in corpora(ASSIGNMENT)
              for e in c.edits}
    assert len(graded) >= 10
    assert [name for name, nb in graded.items()
            if failed_checks(ASSIGNMENT, nb, reuse=True) != failed_checks(ASSIGNMENT, nb)] == []
