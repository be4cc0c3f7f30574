"""Every assignment of the course, by the same specification (parametrized by assignment folder).

Source built from its folder, release fresh and leak-free, reference data equal
to a fresh run of the solution, the solution full marks and the blank release
zero on the fast path, the partial sample losing exactly its bugs' points,
mutants caught and alternatives accepted. The full pipeline (sandbox, judge,
nbgrader) of each assignment is tests/test_pipeline.py.
"""

from __future__ import annotations

import ast
import filecmp
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import jupytext
import nbformat
import numpy as np
import pytest

from course import paths
from course.assignment_parts import part
from course.build_source import shipped_files
from course.measuring.grader_accuracy import (acceptable, checks_of_cell, corpora, corpus, failed_checks, fast_path_pool,
                                     kernel_sample, report)
from course.notebook_format import check_cell_source
from course.probe_runner import (LEFT_OUT, execute_program, graded_program, leaving_clues_out, load_probes,
                                  load_visible_probes, run_probes)
from course.rubrics import MODEL_ANSWER, page_path, rubric_page, written_questions
from course.samples import sample_notebook
from course.student_files.submission_log import to_numpy
from course.verdicts import checks_for, grade_cells as points_of, mistakes_for
from helpers import assert_reference_is_fresh, between, corpus_figures, grade_cells, nbgrader

ASSIGNMENTS = paths.assignments()
pytestmark = pytest.mark.parametrize("assignment", ASSIGNMENTS)


def source_nb(assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(paths.source_notebook(assignment), as_version=4)


def release_nb(assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(paths.release_dir(assignment) / f"{assignment}.ipynb", as_version=4)


def release_text(assignment: str) -> str:
    folder = paths.release_dir(assignment)
    return "\n".join(p.read_text(errors="replace") for p in folder.rglob("*") if p.is_file() and p.suffix != ".csv")


# ------------------------------------------------------------------ authoring and source


def test_source_folder_is_built_from_the_assignment_folder(assignment):
    result = subprocess.run([sys.executable, "-m", "course.build_source", assignment, "--check"], cwd=paths.ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_authoring_file_is_python_that_lints_and_a_notebook_jupytext_opens(assignment):
    authoring = paths.authoring_file(assignment)
    lint = subprocess.run([sys.executable, "-m", "pyflakes", str(authoring)], capture_output=True, text=True)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    built = source_nb(assignment).cells
    opened = jupytext.read(authoring, fmt="py:percent").cells[-len(built):]  # after the file's comment
    for as_opened, cell in zip(opened, built, strict=True):
        generated = cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code"  # a test cell
        assert (as_opened.cell_type, as_opened.source) == (cell.cell_type, "" if generated else cell.source)


def test_each_test_cell_is_one_check_and_runs_nothing_in_the_kernel(assignment):
    test_cells = grade_cells(source_nb(assignment), grade=True, solution=False)
    assert [c.metadata["nbgrader"]["grade_id"] for c in test_cells] == list(checks_for(assignment)), (
        "test cells and checks must correspond one to one, in order")
    for cell in test_cells:
        meta = cell.metadata["nbgrader"]
        assert cell.source == check_cell_source(meta["grade_id"], meta["points"])


def graded_names(cell_source: str) -> list[str]:
    return re.findall(r"^(?:class|def) (\w+)", cell_source, flags=re.M)


def test_every_written_question_has_a_model_answer_and_a_rubric_on_the_graders_page(assignment):
    """In the instructor notebook only (the release strips solution regions: the leak tests below), and on
    docs/rubrics/<assignment>.md, which formgrader's grader reads beside the student's answer."""
    questions = written_questions(assignment)
    assert questions, "every assignment has written questions"
    incomplete = [q.grade_id for q in questions
                  if not (q.question.startswith("**Question") and q.model_answer.startswith(MODEL_ANSWER)
                          and re.search(rf"Full\s+\({q.points:g}\).*Partial\s+\(.+\).*None\s+\(0\)", q.rubric, flags=re.S))]
    assert not incomplete, f"without a question, a model answer, or a full, partial and no-points rubric: {incomplete}"
    assert page_path(assignment).read_text() == rubric_page(assignment), "stale: run `make source`"


def test_answer_cells_define_the_graded_names_the_submission_log_records(assignment):
    defined = [name for cell in grade_cells(source_nb(assignment), solution=True) for name in graded_names(cell.source)]
    assert defined == list(load_visible_probes(assignment).GRADED_NAMES)


# ------------------------------------------------------------------ release


def test_release_is_what_nbgrader_generates_from_source(assignment, tmp_path):
    result = nbgrader("generate_assignment", assignment, "--force", "--no-db",
                      f"--CourseDirectory.root={paths.ROOT}", f"--CourseDirectory.release_directory={tmp_path}")
    assert result.returncode == 0, result.stderr
    fresh, committed = tmp_path / assignment, paths.release_dir(assignment)
    stale = []

    def walk(cmp: filecmp.dircmp, prefix: str = "") -> None:
        stale.extend(prefix + n for n in cmp.left_only + cmp.right_only + cmp.diff_files)
        stale.extend(prefix + n for n in cmp.same_files
                     if (Path(cmp.left) / n).read_bytes() != (Path(cmp.right) / n).read_bytes())
        for name, sub in cmp.subdirs.items():
            walk(sub, f"{prefix}{name}/")

    walk(filecmp.dircmp(fresh, committed))
    assert not stale, f"release/ is stale against source/ ({stale}): run `make release` and commit release/"


def test_release_ships_the_notebook_and_its_shipped_files_only(assignment):
    folder = paths.release_dir(assignment)
    files = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file())
    assert files == sorted([f"{assignment}.ipynb", *shipped_files(assignment)])


@pytest.mark.parametrize("marker", ["BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS",
                                    "course.grading", "course.verdicts", "import course"])
def test_release_has_no_solution_or_hidden_test_markers(assignment, marker):
    assert marker not in release_text(assignment)


def solution_regions(assignment: str) -> list[list[str]]:
    """The stripped, non-empty lines of each solution region of the source notebook."""
    return [[line.strip() for line in between(cell.source, "BEGIN SOLUTION", "END SOLUTION") if line.strip()]
            for cell in grade_cells(source_nb(assignment), solution=True)]


def test_release_answer_cells_contain_no_solution_line(assignment):
    answers = "\n".join(c.source for c in grade_cells(release_nb(assignment), solution=True))
    leaked = [line for region in solution_regions(assignment) for line in region
              if not line.startswith("#") and line in answers]
    assert not leaked, f"solution lines found in the release's answer cells: {leaked}"


def test_release_contains_no_solution_region_anywhere(assignment):
    """Instructions may quote a line of a solution, but no file may contain a whole solution."""
    text = "\n".join(line.strip() for line in release_text(assignment).splitlines())
    leaked = [region[0] for region in solution_regions(assignment) if len(region) > 1 and "\n".join(region) in text]
    assert not leaked, f"whole solutions found in release/, starting with: {leaked}"


def hidden_inputs(assignment: str) -> set[str]:
    """The text constants of the hidden probes' module-level data (inputs, vocabularies, ...)."""
    tree = ast.parse(paths.probes_file(assignment).read_text())
    found = set()
    for node in tree.body:
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            found |= {c.value for c in ast.walk(node) if isinstance(c, ast.Constant) and isinstance(c.value, str)
                      and len(c.value) >= 8}
    return found


def test_release_publishes_no_hidden_input(assignment):
    text = release_text(assignment)
    if not hidden_inputs(assignment):
        pytest.skip("the hidden probes have no text inputs (their inputs are seeds and sizes)")
    published = sorted(value for value in hidden_inputs(assignment) if value in text)
    assert not published, f"hidden inputs found in release/: {published}"


def every_answer_cell_filled(assignment: str, definition: str, name: str) -> nbformat.NotebookNode:
    """The blank release with `definition` pasted into each code answer cell, bound to that cell's graded names."""
    nb = release_nb(assignment)
    solutions = {c.metadata["nbgrader"]["grade_id"]: c.source for c in grade_cells(source_nb(assignment), solution=True)}
    for cell in grade_cells(nb, solution=True):
        if cell.cell_type == "code":
            aliases = [f"{graded} = {name}" for graded in graded_names(solutions[cell.metadata["nbgrader"]["grade_id"]])]
            cell.source = "\n".join([definition, *aliases])
    return nb


def shipped_definitions(assignment: str) -> dict[str, tuple[str, str]]:
    """Every function and class the release ships outside the answer cells: {label: (name, source)}."""
    folder = paths.release_dir(assignment)
    texts = {f"cell {c.id}": c.source for c in release_nb(assignment).cells
             if c.cell_type == "code" and not c.metadata.get("nbgrader", {}).get("solution")}
    texts.update({p.name: p.read_text() for p in folder.rglob("*.py")})
    found = {}
    for where, text in texts.items():
        for node in ast.parse(text).body:
            if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
                found[f"{where}: {node.name}"] = (node.name, ast.get_source_segment(text, node))
    return found


def points_earned(assignment: str, nb: nbformat.NotebookNode) -> int:
    import torch

    torch.set_num_threads(1)
    auto, _ = points_of(assignment)
    failed = failed_checks(assignment, nb)
    return sum(points for check_id, points in auto.items() if check_id not in failed)


def test_nothing_the_release_ships_earns_points_when_pasted_into_the_answer_cells(assignment):
    definitions = shipped_definitions(assignment)
    assert len(definitions) >= 5
    notebooks = [every_answer_cell_filled(assignment, source, name) for name, source in definitions.values()]
    with fast_path_pool() as pool:
        earned = dict(zip(definitions, pool.map(points_earned, [assignment] * len(notebooks), notebooks)))
    assert not {label: points for label, points in earned.items() if points}, "shipped code that earns points"


# ------------------------------------------------------------------ reference and the fast path


def test_committed_reference_matches_a_fresh_run_of_the_solution(assignment):
    assert_reference_is_fresh(assignment, "run `make reference` after changing probes or the solution")


def test_solution_passes_every_check(assignment):
    """Judged as the fast path judges every edit: from the solution's probes, run once for the group (the pool that
    judges the edits forks after, course.measuring.grader_accuracy.evaluate_all). The sandboxed probe runs them afresh where
    the solution is graded as a class's submissions are (tests/test_pipeline.py, tests/test_gradescope.py)."""
    assert failed_checks(assignment, sample_notebook(assignment, "perfect"), reuse=True) == {}


def test_blank_release_fails_every_check_as_not_attempted(assignment):
    failed = failed_checks(assignment, sample_notebook(assignment, "blank"))
    assert set(failed) == set(checks_for(assignment))
    assert {check_id: r["message"] for check_id, r in failed.items() if r["mistake"] != "not-attempted"} == {}
    assert all("not attempted" in r["message"] and "shapes" not in r["message"] for r in failed.values())


def test_partial_sample_fails_exactly_the_checks_of_its_bugs(assignment):
    failed = failed_checks(assignment, sample_notebook(assignment, "partial"))
    assert set(failed) == {check for _, check in part(assignment, "corpus").SAMPLE_BUGS}


@pytest.mark.parametrize("sample", ["perfect", "partial"])
def test_leaving_clues_out_changes_no_graded_output_and_leaves_out_every_like_output(assignment, sample, tmp_path):
    """The grader's first run of the probes leaves their clues out (course.probe_tools.clue), and runs again, with
    them, only the probes of the checks that fail (course.grading.probe): what the first run gives must be what a run
    with clues gives, but for its `like_*` outputs, every one of which is a clue left out."""
    ns, _ = execute_program(graded_program(assignment, sample_notebook(assignment, sample)), tmp_path)
    probes = load_probes(assignment)
    with leaving_clues_out():
        first, first_errors = run_probes(probes, ns)
    full, full_errors = run_probes(probes, ns)
    assert first_errors == full_errors
    for check_id, outputs in full.items():
        kept = {key: value for key, value in first[check_id].items() if value is not LEFT_OUT}
        assert set(kept) == {key for key in outputs if not key.startswith("like_")}, check_id
        for key, value in kept.items():
            np.testing.assert_array_equal(to_numpy(value), to_numpy(outputs[key]), err_msg=f"{check_id}/{key}")


def test_every_mutant_and_alternative_is_python_that_compiles(assignment):
    """A mutant that is a syntax error would be 'caught' for the wrong reason."""
    mutants, alternatives = corpus(assignment)
    solution = {c.metadata["nbgrader"]["grade_id"]: c.source for c in grade_cells(source_nb(assignment), solution=True)}
    for edit in mutants + alternatives:
        compile(edit.apply(solution[edit.cell]), f"<{edit.name}>", "exec")


def test_every_mutant_the_rules_were_written_or_adjusted_with_carries_a_mistake_of_the_catalogue(assignment):
    """The corpus and the fresh set. A held-out mutant carries its writer's name for its true mistake, which the
    catalogue may lack: then no verdict can name it right, only observe it (or name it wrong, which the report
    counts)."""
    mutants = [m for c in corpora(assignment) if c.name in ("corpus", "fresh") for m in c.mutants]
    assert {m.name: m.mistake for m in mutants if m.mistake not in mistakes_for(assignment)} == {}


@pytest.mark.parametrize("corpus_set", ["corpus", "fresh", "held_out"])
def test_grader_accuracy_every_mutant_caught_by_its_own_piece_and_named_honestly_every_alternative_accepted(
        assignment, corpus_set):
    """Every set: the corpus the rules were written with, the fresh mutants written after they were frozen, and the
    held-out mutants written after the rules were adjusted to the fresh ones."""
    chosen = {c.name: c for c in corpora(assignment)}[corpus_set]
    names = [e.name for e in corpus(assignment)[0] + corpus(assignment)[1]]
    assert len(set(names)) == len(names), "names are unique"
    if corpus_set == "corpus":
        for cell in checks_of_cell(assignment):
            assert sum(m.cell == cell for m in chosen.mutants) >= 2, f"fewer than 2 mutants for {cell}"
    else:
        least = {"fresh": 15, "held_out": 12}[corpus_set]
        assert len(chosen.mutants) >= least, f"at least {least} mutants in the {corpus_set} set"
    figures = corpus_figures(assignment, corpus_set)
    text = report(assignment, {corpus_set: figures})
    assert figures.count("accepted") == len(figures.alternatives), text
    assert acceptable(assignment, corpus_set, figures), text


def test_the_same_checks_fail_on_torchs_generic_cpu_kernels(assignment):
    """Another CPU rounds differently (other vector kernels, other orders of summation): graded with torch's generic
    kernels (ATEN_CPU_CAPABILITY=default), the solution, every alternative and a sample of mutants fail the same
    checks, so get the same points, as here."""
    generic = subprocess.run([sys.executable, "-m", "course.measuring.grader_accuracy", "--failed-checks", assignment],
                             cwd=paths.ROOT, env={**os.environ, "ATEN_CPU_CAPABILITY": "default"},
                             capture_output=True, text=True)
    assert generic.returncode == 0, generic.stderr[-3000:]
    sets = [corpus_figures(assignment, c.name) for c in corpora(assignment)]
    failed = {o.edit.name: sorted(o.failed) for figures in sets for o in figures.mutants + figures.alternatives}
    here = {"(solution)": []} | {edit.name: failed[edit.name] for edit in kernel_sample(assignment)}
    assert json.loads(generic.stdout)[assignment] == here


def test_submission_log_of_the_solution_records_every_visible_probe(assignment, tmp_path):
    sys.path.insert(0, str(paths.source_dir(assignment)))
    try:
        import submission_log
        from course.probe_runner import execute_program, solution_program

        ns, errors = execute_program(solution_program(assignment), paths.source_dir(assignment))
        log = submission_log.write_submission_log(ns, {"score": None}, tmp_path / "log.json")
    finally:
        sys.path.remove(str(paths.source_dir(assignment)))
        sys.modules.pop("submission_log", None)
        sys.modules.pop("visible_probes", None)
    assert log["assignment"] == assignment and log["probe_errors"] == {}
    assert set(log["probes"]) == set(load_visible_probes(assignment).PROBES)
    assert {name.split(".")[0] for name in log["sources"]} == set(load_visible_probes(assignment).GRADED_NAMES)
