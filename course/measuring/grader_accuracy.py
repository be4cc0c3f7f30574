"""Grader accuracy: run every mutant and alternative of an assignment's corpus.py through its checks.

    python -m course.measuring.grader_accuracy [ASSIGNMENT ...]      (or: make grader-report)

A mutant is caught when it fails at least one check of the piece its cell
defines and no check of another piece. A caught mutant is then named right
(its failing verdicts name its mistake, the catalogue name it carries, and
no other), named wrong (a verdict names another mistake: feedback that sends
the student after a bug they do not have), or observational (no verdict
names a mistake; they say what was observed). An alternative is accepted
when it fails nothing.

Each corpus.py has up to three sets, reported apart: MUTANTS and ALTERNATIVES,
the corpus the rules were written with; FRESH_MUTANTS and FRESH_ALTERNATIVES,
written after the rules were frozen and then used to adjust them; and
HELD_OUT_MUTANTS and HELD_OUT_ALTERNATIVES, written after that adjustment
(their figures say how the rules do on the next student's mistakes). Prints
the table per piece and the figures per set; exits 1 when a mutant of a set
that must catch all (ALL_CAUGHT) is missed, an alternative of any set is
rejected, more than WRONG_NAME_LIMIT of a set's caught mutants
are named wrong, fewer than its NAMED_TARGET are named right, or a message
names one of the grader's stand-ins.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import re
import resource
import sys
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from functools import cache

import nbformat

from course import paths
from course.assignment_parts import part
from course.grading.judge import judge_checks
from course.grading.probe import HIDDEN_RUNS, plain_outputs, run_twice
from course.measuring.probe_reuse import probe_data, solution_probes
from course.probe_runner import execute_program, graded_program, load_probes, stand_ins
from course.samples import Edit, apply_edits, sample_notebook
from course.verdicts import OBSERVATIONS, checks_for, grade_cells


WRONG_NAME_LIMIT = 0.03  # the largest share of a set's caught mutants whose feedback may name a wrong mistake
# What each set must meet: the share of its mutants named right, and whether every mutant must be caught. The
# held-out set measures the rules on mistakes nobody tuned them to: it must never name a wrong mistake nor reject
# correct code, and its catches and right names are reported, not required.
NAMED_TARGET = {"corpus": 0.9, "fresh": 0.8, "held_out": 0.0}
ALL_CAUGHT = {"corpus": True, "fresh": True, "held_out": False}


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
    def names(self) -> set[str]:
        """The mistakes the failing verdicts name (an error raised is an observation, not a name)."""
        return {r["mistake"] for r in self.failed.values() if r["mistake"] not in (None, *OBSERVATIONS)}

    @property
    def named_right(self) -> bool:
        """For a mutant: caught, and its verdicts name its mistake and no other."""
        return self.caught and self.names == {self.edit.mistake}

    @property
    def named_wrong(self) -> bool:
        """For a mutant: caught, and a verdict names a mistake it does not have."""
        return self.caught and bool(self.names - {self.edit.mistake})

    @property
    def observational(self) -> bool:
        """For a mutant: caught, and no verdict names a mistake."""
        return self.caught and not self.names

    @property
    def accepted(self) -> bool:
        """For an alternative: fails nothing."""
        return not self.failed


@dataclass(frozen=True)
class Corpus:
    """One set of an assignment's corpus: mutants and alternatives, and the share of mutants it must name right."""

    name: str
    mutants: tuple[Edit, ...]
    alternatives: tuple[Edit, ...]

    @property
    def edits(self) -> tuple[Edit, ...]:
        return self.mutants + self.alternatives


@dataclass(frozen=True)
class Figures:
    """How a set's mutants and alternatives fared."""

    mutants: list[Outcome]
    alternatives: list[Outcome]

    def count(self, attribute: str) -> int:
        return sum(getattr(o, attribute) for o in (self.alternatives if attribute == "accepted" else self.mutants))


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


def failed_checks(assignment: str, nb: nbformat.NotebookNode, reuse: bool = False) -> dict[str, dict]:
    """Judge every check of a notebook's answers in this process (the fast path: no nbgrader, no sandbox),
    with the judge's own rules: each probe runs twice, as in the sandbox. With `reuse`, a notebook that is the
    solution with one answer cell edited runs only the probes the edit can change (course.measuring.probe_reuse).

    Returns the judge's result of each failing check ("message", "mistake", ...), by check id.
    """
    program = graded_program(assignment, nb)
    if reuse:
        outputs, errors = probe_data(assignment, program)
    else:
        ns, _ = execute_program(program, paths.source_dir(assignment))
        outputs, errors = run_twice(load_probes(assignment), ns, HIDDEN_RUNS)
    return {check_id: result for check_id, result in judge_checks(assignment, *plain_outputs(outputs, errors)).items()
            if not result["passed"]}


def evaluate(assignment: str, edit: Edit) -> Outcome:
    """Apply one edit to the solution and judge every check, running only the probes the edit can change."""
    import torch

    torch.set_num_threads(1)
    edited = apply_edits(sample_notebook(assignment, "perfect"), [edit])
    return Outcome(assignment, edit, failed_checks(assignment, edited, reuse=True))


FAST_PATH_MEMORY_MB = 4096  # what a fast-path process may allocate beyond what it had when it was forked


def limit_memory(megabytes: int = FAST_PATH_MEMORY_MB) -> None:
    """Cap this process's private memory (RLIMIT_DATA) at what it holds now plus `megabytes`: code that asks for more
    (a pasted class that takes ids for a tensor's shape) gets an allocation error, which the probes catch, instead of
    filling the machine's memory until the kernel's OOM killer takes a process. The fast path runs student-like code
    outside the sandbox (it measures the grader; grading itself is capped by the sandbox's cgroup)."""
    with open("/proc/self/status") as status:
        held = next(int(line.split()[1]) * 1024 for line in status if line.startswith("VmData:"))
    limit = held + megabytes * 2**20
    resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))


def fast_path_pool() -> ProcessPoolExecutor:
    """The processes that judge notebooks on the fast path: COURSE_FAST_PATH_PROCESSES of them, 2 by default (the
    machines' two cores), forked from this process, so that they share what it has built, each with its memory
    capped (`limit_memory`). Each builds what the probes cache (models, a trained check) once, on its first notebook,
    unless this process has; `make test` gives each of its workers one process, as each worker already has a core of
    its own."""
    return ProcessPoolExecutor(max_workers=int(os.environ.get("COURSE_FAST_PATH_PROCESSES", "2")),
                               mp_context=multiprocessing.get_context("fork"), initializer=limit_memory)


def evaluate_all(assignment: str, edits) -> list[Outcome]:
    """The outcome of each edit, judged by the fast path's pool. The solution's probes, which every edit's judgement
    starts from (course.measuring.probe_reuse.solution_probes), run here first, on one thread as the pool's do: run once, they
    serve every process of the pool, and the solution's own judgement (`failed_checks` with `reuse`) after."""
    import torch

    torch.set_num_threads(1)
    solution_probes(assignment)
    with fast_path_pool() as pool:
        return list(pool.map(evaluate, [assignment] * len(edits), edits))


SETS = {"corpus": "", "fresh": "FRESH_", "held_out": "HELD_OUT_"}  # set name -> prefix of its tuples in corpus.py


def corpora(assignment: str) -> tuple[Corpus, ...]:
    """The sets of the assignment's corpus.py (SETS): the corpus the rules were written with, the fresh set written
    after they were frozen, and the held-out set written after they were adjusted to the fresh one."""
    module = part(assignment, "corpus")
    return tuple(Corpus(name, tuple(getattr(module, f"{prefix}MUTANTS", ())),
                        tuple(getattr(module, f"{prefix}ALTERNATIVES", ()))) for name, prefix in SETS.items())


def corpus(assignment: str) -> tuple[tuple[Edit, ...], tuple[Edit, ...]]:
    """(mutants, alternatives) of both sets of the assignment's corpus.py."""
    sets = corpora(assignment)
    return sum((s.mutants for s in sets), ()), sum((s.alternatives for s in sets), ())


KERNEL_SAMPLE_EVERY = 10  # of each set's mutants, every 10th is graded again on other CPU kernels (tests)


def kernel_sample(assignment: str) -> tuple[Edit, ...]:
    """The edits the tests grade on torch's generic CPU kernels as well: every alternative of both sets and every
    KERNEL_SAMPLE_EVERY-th mutant."""
    return tuple(e for c in corpora(assignment) for e in c.alternatives + c.mutants[::KERNEL_SAMPLE_EVERY])


def failed_by_edit(assignment: str) -> dict[str, list[str]]:
    """The failing checks of the solution ('(solution)') and of each edit of the kernel sample, by name, graded as
    the figures are (each edit runs the probes it can change, course.measuring.probe_reuse; the solution's probes are the
    ones its edits start from)."""
    edits = {o.edit.name: sorted(o.failed) for o in evaluate_all(assignment, kernel_sample(assignment))}
    return {"(solution)": sorted(failed_checks(assignment, sample_notebook(assignment, "perfect"), reuse=True))} | edits


def evaluate_corpora(assignment: str, sets: tuple[Corpus, ...]) -> dict[str, Figures]:
    """The figures of each set, by name: every edit of every set graded by one pool of processes, so that what a
    process builds once (the probes' models, a trained check's cache) serves every set."""
    outcomes = iter(evaluate_all(assignment, [e for c in sets for e in c.edits]))
    return {c.name: Figures([next(outcomes) for _ in c.mutants], [next(outcomes) for _ in c.alternatives])
            for c in sets}


def stand_ins_named(assignment: str, outcomes: list[Outcome]) -> dict[str, list[str]]:
    """Edit name -> the grader's stand-in classes its messages name (none may: students never see them)."""
    names = stand_ins(load_probes(assignment))
    found = {o.edit.name: sorted(n for n in names if any(n in r["message"] for r in o.failed.values()))
             for o in outcomes}
    return {edit: named for edit, named in found.items() if named}


def share(part: int, whole: int) -> str:
    return f"{100 * part / whole:.0f}%" if whole else "-"


COLUMNS = (("caught", "caught"), ("named right", "named_right"), ("named wrong", "named_wrong"),
           ("observational", "observational"))


def piece_table(assignment: str, figures: Figures) -> list[str]:
    """One line per answer cell: its points, then each column's count over its mutants, then alternatives accepted."""
    auto_points, _ = grade_cells(assignment)
    width = max(32, *(len(cell) + 2 for cell in checks_of_cell(assignment)))
    lines = [f"{'piece (answer cell)':<{width}}{'points':>7}" + "".join(f"{title:>15}" for title, _ in COLUMNS)
             + f"{'alternatives accepted':>24}"]

    def row(label: str, points: int, mutants: list[Outcome], alternatives: list[Outcome]) -> str:
        counts = "".join(f"{sum(getattr(o, attr) for o in mutants):>10}/{len(mutants):<4}" for _, attr in COLUMNS)
        return f"{label:<{width}}{points:>7}{counts}{sum(o.accepted for o in alternatives):>19}/{len(alternatives):<4}"

    for cell, checks in checks_of_cell(assignment).items():
        lines.append(row(cell, sum(auto_points[c] for c in checks), [o for o in figures.mutants if o.edit.cell == cell],
                         [o for o in figures.alternatives if o.edit.cell == cell]))
    lines.append(row("overall", sum(auto_points.values()), figures.mutants, figures.alternatives))
    return lines


def summary(name: str, figures: Figures) -> str:
    """The set's figures in one line: caught, named right, named wrong and observational, alternatives accepted."""
    n, caught = len(figures.mutants), figures.count("caught")
    return (f"{name} mutants: {n}, caught {figures.count('caught')} ({share(caught, n)}), "
            f"named right {figures.count('named_right')} ({share(figures.count('named_right'), n)}, target "
            f"{NAMED_TARGET[name]:.0%}{'' if ALL_CAUGHT[name] else ', reported'}), "
            f"named wrong {figures.count('named_wrong')} "
            f"({share(figures.count('named_wrong'), caught)} of caught, limit {WRONG_NAME_LIMIT:.0%}), "
            f"observational {figures.count('observational')}; alternatives accepted "
            f"{figures.count('accepted')}/{len(figures.alternatives)}")


def report(assignment: str, results: dict[str, Figures]) -> str:
    """The report of one assignment: per set, the table per piece, its summary, and each miss."""
    lines = [assignment]
    for name, figures in results.items():
        lines += [f"-- {name}", *piece_table(assignment, figures), summary(name, figures)]
        for o in figures.mutants:
            if not o.caught:
                lines.append(f"MISSED mutant {o.edit.name} ({o.edit.description}): failed {sorted(o.failed) or 'nothing'}")
            elif o.named_wrong:
                lines.append(f"NAMED WRONG mutant {o.edit.name}: {o.edit.mistake}, named {', '.join(sorted(o.names))}")
        for o in figures.alternatives:
            if not o.accepted:
                lines.append(f"REJECTED alternative {o.edit.name}: {sorted(o.failed)}")
        for edit, named in stand_ins_named(assignment, figures.mutants + figures.alternatives).items():
            lines.append(f"STAND-IN NAMED by the messages of {edit}: {', '.join(named)}")
    return "\n".join(lines)


def acceptable(assignment: str, name: str, figures: Figures) -> bool:
    """Every mutant caught (where the set requires it), every alternative accepted, wrong names within the limit, the
    set's naming target met, no stand-in named."""
    caught = figures.count("caught")
    return ((caught == len(figures.mutants) or not ALL_CAUGHT[name])
            and figures.count("accepted") == len(figures.alternatives)
            and figures.count("named_wrong") <= WRONG_NAME_LIMIT * caught
            and figures.count("named_right") >= NAMED_TARGET[name] * len(figures.mutants)
            and not stand_ins_named(assignment, figures.mutants + figures.alternatives))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="default: all")
    parser.add_argument("--failed-checks", action="store_true",
                        help="print, as JSON, the failing checks of the solution and of the kernel sample instead")
    args = parser.parse_args()
    if args.failed_checks:
        print(json.dumps({a: failed_by_edit(a) for a in paths.select_assignments(args.assignments)}))
        return
    failed = False
    for assignment in paths.select_assignments(args.assignments):
        results = evaluate_corpora(assignment, corpora(assignment))
        print(report(assignment, results), end="\n\n")
        failed |= not all(acceptable(assignment, name, figures) for name, figures in results.items())
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
