"""Which probes an edit of one answer cell can change: the grader-accuracy tool runs only those again.

Each probe hands its piece the grader's stand-ins for the pieces it builds on, so on the solution a probe runs the
code of its own answer cell and of no other. An edit of answer cell X can then change only the probes that, on the
solution, ran code of X or read a name X defines; the other probes' outputs are the solution's. That holds when

- X holds only definitions (def, class, import, a docstring), in the solution and in the edit alike; the edit
  keeps the solution's imports and names, and any name it adds is one the solution's program never binds;
- no other cell's top-level code runs code of X or reads a name it defines (on the solution);
- the probes run again leave the world as they found it: the bindings of the namespace and of the probe module,
  the attributes of the namespace's classes, torch's global settings and the functions of torch, torch.nn.functional,
  torch.Tensor and torch.nn.Module.

Otherwise, or when the edit changes several cells, every probe runs. One thing differs from a run of every probe:
the global random state a probe starts from (the probes draw their inputs from their own seeded generators, but
code that draws from the global one, such as dropout left on in eval mode, gets other draws, as it would after an
edit of another cell). Such code fails the same checks with other numbers in its messages: on every edit of the four
assignments' sets, reuse and a run of every probe gave the same verdicts, and the same messages but for two
mutants' numbers (compared at issue 22; tests/test_probe_reuse.py compares the two on the fixture assignment).

Only the grader-accuracy tool reuses probe data: the real grader runs every probe of every submission in the
sandbox (course.grading.probe).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from course import paths
from course.grading.probe import HIDDEN_RUNS, run_twice
from course.probe_runner import cell_file, execute_program, graded_program, load_probes, run_probes
from course.samples import sample_notebook

Program = list[tuple[str, str]]  # (cell id, source), as course.probe_runner.graded_program gives it


class Recorder(dict):
    """A namespace that records the names read from it: as the globals of exec'd code, every global lookup too
    (for a dict subclass, CPython looks globals up through __getitem__). Going through it reads every name."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.read: set[str] = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)

    def __iter__(self):
        self.read.update(dict.keys(self))
        return super().__iter__()

    def keys(self):
        self.read.update(dict.keys(self))
        return super().keys()

    def values(self):
        self.read.update(dict.keys(self))
        return super().values()

    def items(self):
        self.read.update(dict.keys(self))
        return super().items()


class CellTracer:
    """While active, records the cells whose code runs (any frame compiled as course.probe_runner.cell_file)."""

    def __init__(self, cell_ids):
        self.cells_of = {cell_file(cell_id): cell_id for cell_id in cell_ids}
        self.ran: set[str] = set()

    def __enter__(self) -> "CellTracer":
        self.ran = set()
        sys.setprofile(self._on_event)
        return self

    def __exit__(self, *exc) -> None:
        sys.setprofile(None)

    def _on_event(self, frame, event, arg) -> None:
        if event == "call" and frame.f_code.co_filename in self.cells_of:
            self.ran.add(self.cells_of[frame.f_code.co_filename])


@dataclass(frozen=True)
class Definitions:
    """What a cell made only of definitions binds: the names of its functions and classes, and its imports."""

    names: frozenset[str]
    imports: tuple[str, ...]  # each import statement, as ast.dump, sorted


def definitions(source: str) -> Definitions | None:
    """The definitions of a cell's code, or None if it holds anything else (or does not parse)."""
    try:
        body = ast.parse(source).body
    except SyntaxError:
        return None
    names, imports = set(), []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            imports.append(ast.dump(node))
        elif not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)):
            return None
    return Definitions(frozenset(names), tuple(sorted(imports)))


@dataclass(frozen=True)
class SolutionProbes:
    """The solution's probe data, and what each probe and each cell's top-level code used of the others."""

    program: dict[str, str]  # cell id -> source
    outputs: dict  # step id -> outputs, both runs (course.grading.probe.run_twice)
    errors: dict[str, str]  # step id -> error (none, for a solution)
    uses: dict[str, frozenset[str]]  # probe name -> the cells whose code it ran or whose names it read
    entangled: frozenset[str]  # cells whose code or names another cell's top-level code used
    bound: frozenset[str]  # every name the program binds


def cells_used(tracer: CellTracer, read: set[str], defined: dict[str, Definitions | None]) -> set[str]:
    """The cells whose code ran (traced) or whose defined names were read."""
    return tracer.ran | {cell for cell, d in defined.items() if d is not None and d.names & read}


@cache
def solution_probes(assignment: str) -> SolutionProbes:
    """Run the solution's program cell by cell and its probes one by one, in the grader's order, recording what
    each uses (this process keeps it: a pool process computes it once)."""
    program = graded_program(assignment, sample_notebook(assignment, "perfect"))
    defined = {cell_id: definitions(source) for cell_id, source in program}
    tracer, ns = CellTracer(defined), Recorder({"__name__": "__main__"})
    entangled = set()
    for cell_id, source in program:
        ns.read.clear()
        with tracer:
            execute_program([(cell_id, source)], paths.source_dir(assignment), ns)
        entangled |= cells_used(tracer, ns.read, defined) - {cell_id}
    module = load_probes(assignment)
    outputs, errors, uses = {}, {}, {name: set() for name in module.PROBES}
    for prefix in HIDDEN_RUNS:
        for name in module.PROBES:
            ns.read.clear()
            with tracer:
                found, failed = run_probes(module, ns, prefix=prefix, only={name})
            outputs.update(found)
            errors.update(failed)
            uses[name] |= cells_used(tracer, ns.read, defined)
    return SolutionProbes(dict(program), outputs, errors, {name: frozenset(cells) for name, cells in uses.items()},
                          frozenset(entangled), frozenset(ns))


def probes_to_run(solution: SolutionProbes, program: Program) -> set[str] | None:
    """The probes whose outputs `program` (the solution with edits) can change, or None: run them all."""
    if [cell_id for cell_id, _ in program] != list(solution.program):
        return None
    changed = [(cell_id, source) for cell_id, source in program if solution.program[cell_id] != source]
    if len(changed) != 1:
        return set() if not changed else None
    cell_id, source = changed[0]
    before, after = definitions(solution.program[cell_id]), definitions(source)
    if (cell_id in solution.entangled or before is None or after is None or after.imports != before.imports
            or not before.names <= after.names or (after.names - before.names) & solution.bound):
        return None
    return {name for name, cells in solution.uses.items() if cell_id in cells}


def world(ns: dict, module: ModuleType) -> tuple:
    """What probes must leave as they found it: the bindings of the namespace and of the probe module, the
    attributes of the namespace's classes (by identity), torch's global settings and its functions (by identity).
    (The stand-ins of the probe module keep their own records, which the probes reset.)"""
    spaces = {"namespace": ns, "probes": vars(module)}
    spaces |= {f"class {key}": vars(value) for key, value in ns.items() if isinstance(value, type)}
    bindings = {label: {key: id(value) for key, value in space.items()} for label, space in spaces.items()}
    torch = sys.modules.get("torch")
    if torch is None:
        return bindings, None, None
    settings = (torch.get_default_dtype(), torch.is_grad_enabled(), torch.is_inference_mode_enabled(),
                torch.are_deterministic_algorithms_enabled(), torch.is_anomaly_enabled(), torch.get_num_threads())
    library = {label: {key: id(value) for key, value in vars(space).items()} for label, space in
               (("torch", torch), ("functional", torch.nn.functional), ("Tensor", torch.Tensor),
                ("Module", torch.nn.Module))}
    return bindings, settings, library


def left_alone(before: tuple, after: tuple) -> bool:
    """Whether `after` (world()) is `before`, but for names torch added (its lazily loaded attributes)."""
    (bindings, settings, library), (bindings_after, settings_after, library_after) = before, after
    return (bindings == bindings_after and settings == settings_after
            and all({key: library_after[label].get(key) for key in names} == names
                    for label, names in (library or {}).items()))


def probe_data(assignment: str, program: Program) -> tuple[dict, dict[str, str]]:
    """Both runs' outputs and errors of every probe on `program` (the solution with edits), by step id, as
    course.grading.probe.run_twice gives them: the probes its edit can change are run, the others' are the
    solution's (the module docstring says when)."""
    solution, module, workdir = solution_probes(assignment), load_probes(assignment), paths.source_dir(assignment)
    ns, _ = execute_program(program, workdir)
    rerun = probes_to_run(solution, program)
    if rerun is not None:
        before = world(ns, module)
        outputs, errors = run_twice(module, ns, HIDDEN_RUNS, only=rerun)
        if left_alone(before, world(ns, module)):
            kept = {prefix + name for prefix in HIDDEN_RUNS for name in module.PROBES if name not in rerun}
            return ({step: data for step, data in solution.outputs.items() if step in kept} | outputs,
                    {step: error for step, error in solution.errors.items() if step in kept} | errors)
        ns, _ = execute_program(program, workdir)  # the rerun changed the world: run everything on a fresh program
    return run_twice(module, ns, HIDDEN_RUNS)
