"""Grader accuracy: run every mutant and alternative of an assignment's corpus.py through its checks.

    python -m course.grader_accuracy [ASSIGNMENT ...]      (or: make grader-report)

A mutant is caught when it fails at least one check of the piece its cell
defines and no check of another piece, and diagnosed when every check it
fails names its mistake (the catalogue name the mutant carries); an
alternative is accepted when it fails nothing. Prints the table per piece and
overall, per assignment; exits 1 when a mutant is missed, an alternative
rejected, fewer than DIAGNOSIS_TARGET of the mutants are diagnosed, or a
message names one of the grader's stand-ins.
"""

from __future__ import annotations

import argparse
import re
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache

import nbformat

from course import paths
from course.checks import checks_for
from course.grading.judge import grade_cells, judge_checks
from course.grading.probe import HIDDEN_RUNS, plain_outputs, run_twice
from course.parts import part
from course.probes import execute_program, graded_program, load_probes, stand_ins
from course.samples import Edit, apply_edits, sample_notebook


DIAGNOSIS_TARGET = 0.9  # the share of mutants whose every failing verdict must name the mutant's mistake


@dataclass(frozen=True)
class Outcome:
    assignment: str
    edit: Edit
    failed: dict[str, dict]  # check id -> the judge's result ("message", "mistake", ...)

    @property
    def own_checks(self) -> set[str]:
        return checks_of_cell(self.assignment)[self.edit.cell]

    @property
    def caught(self) -> bool:
        """For a mutant: fails its own piece and nothing else."""
        return bool(self.failed) and set(self.failed) <= self.own_checks

    @property
    def diagnosed(self) -> bool:
        """For a mutant: caught, and every failing verdict names its mistake."""
        return self.caught and all(result["mistake"] == self.edit.mistake for result in self.failed.values())

    @property
    def accepted(self) -> bool:
        """For an alternative: fails nothing."""
        return not self.failed


@cache
def checks_of_cell(assignment: str) -> dict[str, set[str]]:
    """Answer cell id -> the checks of the names it defines (a check's piece is 'Name', 'Name.method', or
    several of these joined by ', ')."""
    source = nbformat.read(paths.source_notebook(assignment), as_version=4)
    result = {}
    for cell in source.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "code":
            names = set(re.findall(r"^(?:class|def) (\w+)", cell.source, flags=re.M))
            result[meta["grade_id"]] = {c.check_id for c in checks_for(assignment).values()
                                        if {piece.split(".")[0] for piece in c.piece.split(", ")} & names}
    return result


def failed_checks(assignment: str, nb: nbformat.NotebookNode) -> dict[str, dict]:
    """Judge every check of a notebook's answers in this process (the fast path: no nbgrader, no sandbox),
    with the judge's own rules: each probe runs twice, as in the sandbox.

    Returns the judge's result of each failing check ("message", "mistake", ...), by check id.
    """
    ns, _ = execute_program(graded_program(assignment, nb), paths.source_dir(assignment))
    outputs, errors = plain_outputs(*run_twice(load_probes(assignment), ns, HIDDEN_RUNS))
    return {check_id: result for check_id, result in judge_checks(assignment, outputs, errors).items()
            if not result["passed"]}


def evaluate(assignment: str, edit: Edit) -> Outcome:
    """Apply one edit to the solution and judge every check."""
    import torch

    torch.set_num_threads(1)
    return Outcome(assignment, edit, failed_checks(assignment, apply_edits(sample_notebook(assignment, "perfect"), [edit])))


def evaluate_all(assignment: str, edits) -> list[Outcome]:
    with ProcessPoolExecutor(max_workers=2) as pool:
        return list(pool.map(evaluate, [assignment] * len(edits), edits))


def corpus(assignment: str) -> tuple[tuple[Edit, ...], tuple[Edit, ...]]:
    """(mutants, alternatives) of the assignment's corpus.py."""
    module = part(assignment, "corpus")
    return tuple(module.MUTANTS), tuple(module.ALTERNATIVES)


def stand_ins_named(assignment: str, outcomes: list[Outcome]) -> dict[str, list[str]]:
    """Edit name -> the grader's stand-in classes its messages name (none may: students never see them)."""
    names = stand_ins(load_probes(assignment))
    found = {o.edit.name: sorted(n for n in names if any(n in r["message"] for r in o.failed.values()))
             for o in outcomes}
    return {edit: named for edit, named in found.items() if named}


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


def report(assignment: str, mutants: list[Outcome], alternatives: list[Outcome]) -> str:
    auto_points, _ = grade_cells(assignment)
    width = max(32, *(len(cell) + 2 for cell in checks_of_cell(assignment)))
    lines = [assignment, f"{'piece (answer cell)':<{width}}{'points':>7}{'mutants caught':>17}{'diagnosed':>11}"
                         f"{'alternatives accepted':>24}"]
    for cell, checks in checks_of_cell(assignment).items():
        m = [o for o in mutants if o.edit.cell == cell]
        a = [o for o in alternatives if o.edit.cell == cell]
        lines.append(f"{cell:<{width}}{sum(auto_points[c] for c in checks):>7}{sum(o.caught for o in m):>12}/{len(m):<4}"
                     f"{sum(o.diagnosed for o in m):>6}/{len(m):<4}{sum(o.accepted for o in a):>19}/{len(a):<4}")
    caught, diagnosed = sum(o.caught for o in mutants), sum(o.diagnosed for o in mutants)
    accepted = sum(o.accepted for o in alternatives)
    lines.append(f"{'overall':<{width}}{sum(auto_points.values()):>7}{caught:>12}/{len(mutants):<4}"
                 f"{diagnosed:>6}/{len(mutants):<4}{accepted:>19}/{len(alternatives):<4}")
    lines.append(f"mutants caught: {share(caught, len(mutants))}, diagnosed with the right mistake: "
                 f"{share(diagnosed, len(mutants))} (target {DIAGNOSIS_TARGET:.0%}), alternatives accepted: "
                 f"{share(accepted, len(alternatives))}")
    for o in mutants:
        if not o.caught:
            lines.append(f"MISSED mutant {o.edit.name} ({o.edit.description}): failed {sorted(o.failed) or 'nothing'}")
        elif not o.diagnosed:
            named = sorted({r["mistake"] for r in o.failed.values()})
            lines.append(f"MISDIAGNOSED mutant {o.edit.name}: {o.edit.mistake}, named {', '.join(named)}")
    for o in alternatives:
        if not o.accepted:
            lines.append(f"REJECTED alternative {o.edit.name}: {sorted(o.failed)}")
    for edit, named in stand_ins_named(assignment, mutants + alternatives).items():
        lines.append(f"STAND-IN NAMED by the messages of {edit}: {', '.join(named)}")
    return "\n".join(lines)


def acceptable(assignment: str, mutants: list[Outcome], alternatives: list[Outcome]) -> bool:
    """Every mutant caught, every alternative accepted, the diagnosis target met, no stand-in named."""
    return (all(o.caught for o in mutants) and all(o.accepted for o in alternatives)
            and not stand_ins_named(assignment, mutants + alternatives)
            and sum(o.diagnosed for o in mutants) >= DIAGNOSIS_TARGET * len(mutants))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="default: all")
    failed = False
    for assignment in paths.select_assignments(parser.parse_args().assignments):
        mutants, alternatives = corpus(assignment)
        outcomes = evaluate_all(assignment, mutants + alternatives)
        text = report(assignment, outcomes[: len(mutants)], outcomes[len(mutants):])
        print(text, end="\n\n")
        failed |= not acceptable(assignment, outcomes[: len(mutants)], outcomes[len(mutants):])
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
