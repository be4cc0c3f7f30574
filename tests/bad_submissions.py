"""The corpus of bad submissions: what students hand in that grading must survive.

Each `Case` is one student of the end-to-end class (tests/test_grading_end_to_end.py),
graded by the real pipeline among good students, with the outcome grading must give
it: status, the judge's points (which nbgrader's gradebook must hold too), flags, and
what the student is told. The class is of the fixture assignment
(tests/fixture/assignments/tiny: five small functions, 15 points, a notebook that runs
in seconds); most cases start from its solution and break one thing in it.

    python tests/bad_submissions.py     # rewrite docs/bad_submissions.md from this file

tests/test_docs.py fails if that table is stale.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import nbformat

sys.path[:0] = [str(Path(__file__).resolve().parents[1])]
from course import paths  # noqa: E402
from course.assignment_parts import load_module  # noqa: E402
from course.samples import apply_edits, run_notebook, sample_notebook  # noqa: E402

ASSIGNMENT = "tiny"
FIXTURE_ASSIGNMENTS = paths.ROOT / "tests" / "fixture" / "assignments"  # the machinery's tests point COURSE_ASSIGNMENTS_DIR here
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
DOC = paths.ROOT / "docs" / "bad_submissions.md"
FULL = 15
VICTIM = "answer-cube"  # the cell most cases break: its check is worth 2 points
NORMALIZE_BUG = next(edit for edit, check in load_module(FIXTURE_ASSIGNMENTS / ASSIGNMENT / "corpus.py").SAMPLE_BUGS
                     if check == "normalize_values")  # costs 3 points


@dataclass(frozen=True)
class Case:
    """One bad submission and the outcome grading must give it."""

    student: str
    listed: str  # the kinds of bad input it stands for
    what: str  # what the submission does
    write: Callable[[Path], None]  # fills submitted/<student>/<assignment>/ (the folder exists, empty)
    status: str
    points: int  # the judge's, and so the gradebook's (an invalid submission has no gradebook entry)
    flags: tuple[str, ...] = ()  # flags the record must carry (it may carry more, e.g. log-missing)
    told: tuple[str, ...] = ()  # what the student's feedback must say
    folder_name: str | bytes | None = None  # the folder in submitted/, if not the student id


def cell(nb: nbformat.NotebookNode, grade_id: str) -> nbformat.NotebookNode:
    return next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def solution() -> nbformat.NotebookNode:
    return sample_notebook(ASSIGNMENT, "perfect")


def hand_in(folder: Path, nb: nbformat.NotebookNode) -> None:
    """Write `nb` into `folder` beside the release's other files, as a student hands it in."""
    shutil.copytree(paths.release_dir(ASSIGNMENT), folder, dirs_exist_ok=True)
    nbformat.write(nb, folder / NOTEBOOK)


def solution_with(prefix: str, grade_id: str = VICTIM) -> Callable[[Path], None]:
    """The solution with `prefix` run at the top of one answer cell."""
    def write(folder: Path) -> None:
        nb = solution()
        cell(nb, grade_id).source = prefix + cell(nb, grade_id).source
        hand_in(folder, nb)
    return write


# ------------------------------------------------------------- unreadable


def write_file(name: str, text: str) -> Callable[[Path], None]:
    return lambda folder: (folder / name).write_text(text)


def write_oversized(folder: Path) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x" * 60 * 2**20)])
    nbformat.write(nb, folder / NOTEBOOK)


# ------------------------------------------------------------- cells that misbehave

MISBEHAVIOUR = {  # on the blank release, with the log copied from the perfect sample
    "answer-square": "def square(:\n    pass",
    "answer-cube": "raise ValueError('my cell is broken')",
    "answer-clip": "import sys\nsys.exit('leaving early')",
    "answer-mean": "print('spam ' * 5_000_000)",
    "answer-normalize": "def normalize(x):\n    return np.full(len(x), np.nan)",
}


def write_misbehaving(folder: Path) -> None:
    nb = sample_notebook(ASSIGNMENT, "blank")
    for grade_id, source in MISBEHAVIOUR.items():
        cell(nb, grade_id).source = source
    hand_in(folder, nb)
    shutil.copyfile(folder.parents[1] / "perfect" / ASSIGNMENT / "submission_log.json", folder / "submission_log.json")


STATEFUL_CUBE = '''def cube(x, _calls=[]):
    """x ** 3, times the number of calls so far: state kept in a mutable default argument."""
    _calls.append(1)
    return np.asarray(x, dtype=float) ** 3 * len(_calls)
'''


def write_stateful(folder: Path) -> None:
    """The solution with a cube that keeps state between calls, run as the student ran it (so its log is honest)."""
    nb = solution()
    cell(nb, VICTIM).source = STATEFUL_CUBE
    hand_in(folder, nb)
    nbformat.write(run_notebook(nb, folder), folder / NOTEBOOK)


# ------------------------------------------------------------- attacks on the grader

SNOOP = """
import json, os, pathlib
import numpy as np
np.allclose = lambda *args, **kwargs: True  # harmless now: no check runs in this kernel
attempts = {}
for name, path in TARGETS.items():
    try:
        if name.startswith("write"):
            pathlib.Path(path).write_text("overwritten by another student")
        else:
            pathlib.Path(path).read_bytes()
        attempts[name] = "done"
    except OSError:
        attempts[name] = "blocked"
attempts["read_secret_variables"] = "done" if set(SECRET_VARIABLES) & set(os.environ) else "blocked"
pids = [pid for pid in os.listdir("/proc") if pid.isdigit() and int(pid) != os.getpid()]
through_proc = any(os.path.exists(f"/proc/{pid}/root" + TARGETS["read_solution"]) for pid in pids)
attempts["read_solution_through_proc"] = "done" if through_proc else "blocked"
def command_line(pid):
    try:
        return pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""
graders = [pid for pid in pids if "autograde" in command_line(pid).decode(errors="replace").split(chr(0))]
attempts["see_grader_processes"] = "done" if graders else "blocked"
pathlib.Path("snoop.json").write_text(json.dumps(attempts))
"""
EXTRA_SNOOPING = ("read_secret_variables", "read_solution_through_proc", "see_grader_processes")  # beyond the files
SECRET_VARIABLES = {"COURSE_TEST_SECRET": "the grader's secret", "JUPYTERHUB_API_TOKEN": "a hub token"}


def snoop_targets(course: Path) -> dict[str, str]:
    """Files outside the snooper's folder, in the course directory `course`."""
    return {"read_solution": str(course / "source" / ASSIGNMENT / NOTEBOOK),
            "read_reference": str(paths.reference_file(ASSIGNMENT)),
            "read_verdicts": str(paths.assignment_dir(ASSIGNMENT) / "checks.py"),
            "read_other_student": str(course / "submitted" / "perfect" / ASSIGNMENT / NOTEBOOK),
            "write_other_student": str(course / "submitted" / "perfect" / ASSIGNMENT / "submission_log.json"),
            "write_gradebook": str(course / "gradebook.db")}


def write_snooper(folder: Path) -> None:
    nb = sample_notebook(ASSIGNMENT, "blank")
    course = folder.parents[2]
    header = f"TARGETS = {json.dumps(snoop_targets(course))}\nSECRET_VARIABLES = {sorted(SECRET_VARIABLES)}\n"
    cell(nb, "answer-square").source = header + SNOOP + cell(nb, "answer-square").source
    hand_in(folder, nb)


def write_link_to_solution(folder: Path) -> None:
    """The release's files, with the notebook a symbolic link to the instructor's solution."""
    hand_in(folder, solution())
    (folder / NOTEBOOK).unlink()
    (folder / NOTEBOOK).symlink_to(folder.parents[2] / "source" / ASSIGNMENT / NOTEBOOK)


def write_link_attacker(folder: Path) -> None:
    """The solution whose cube cell, where it runs (the kernel's folder, the probe's folder), replaces the notebook
    nbgrader writes with a link to a classmate's, and the probe's progress file (in the probe's folder, which it
    finds) with a link to the solution."""
    course = folder.parents[2]
    probe_folder = course / "build" / "jail" / ASSIGNMENT / folder.parent.name / "probe"
    attack = (f"CLASSMATE = {str(course / 'submitted' / 'perfect' / ASSIGNMENT / NOTEBOOK)!r}\n"
              f"SOLUTION = {str(course / 'source' / ASSIGNMENT / NOTEBOOK)!r}\n"
              "import os\n"
              "for name, target in ((" + repr(NOTEBOOK) + ", CLASSMATE), ('progress.txt', SOLUTION), "
              f"({str(probe_folder / 'progress.txt')!r}, SOLUTION)):\n"
              "    if os.path.isdir(os.path.dirname(os.path.abspath(name))):\n"
              "        if os.path.lexists(name):\n"
              "            os.remove(name)\n"
              "        os.symlink(target, name)\n")
    solution_with(attack)(folder)


def write_display_updater(folder: Path) -> None:
    """The solution whose cube cell displays a line and starts a thread that, once the hidden probes are loaded in
    its kernel, notes it in a file and updates that line with their names."""
    watcher = ("import sys, threading, time\n"
               "from IPython.display import display, update_display\n"
               "display('nothing seen yet', display_id='leak')\n"
               "def _watch():\n"
               "    for _ in range(6000):\n"
               "        hidden = sys.modules.get('_course_hidden_probes')\n"
               "        if hidden is not None and hasattr(hidden, 'PROBES'):\n"
               "            open('saw_hidden_probes.txt', 'w').write(' '.join(hidden.PROBES))\n"
               "            update_display('LEAKED ' + ' '.join(hidden.PROBES), display_id='leak')\n"
               "            return\n"
               "        time.sleep(0.005)\n"
               "threading.Thread(target=_watch, daemon=True).start()\n")
    solution_with(watcher)(folder)


def write_extra_files(folder: Path) -> None:
    """The solution beside a fake `course` package whose judge passes everything, and doctored probe and log modules."""
    hand_in(folder, solution())
    fake = folder / "course" / "grading"
    fake.mkdir(parents=True)
    (folder / "course" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "judge.py").write_text("def judge(*args, **kwargs):\n    return {'checks': {}, 'log': []}\n")
    for name in ("visible_probes.py", "submission_log.py"):
        (folder / name).write_text((folder / name).read_text() + "\nPROBES = {}\n")
    (folder / "notes.txt").write_text("scratch notes\n" * 1000)


# Attacks on the probes' run in the notebook's own kernel: builtins.exec, which the grader's request calls
# (course.grading.probe.kernel_request), is wrapped so that the notebook's code sees each request's code (the hidden
# probes' source in it) and acts after it ran, with the probe folder it wrote in.
SPY_EXEC = """
import ast as _ast, builtins as _builtins
import numpy as _np
_real_exec = _builtins.exec
_grader = {}
def _spy_exec(code, *args, **kwargs):
    result = _real_exec(code, *args, **kwargs)
    if isinstance(code, str) and 'from course.grading.probe import' in code and args:
        try:
            call = _ast.parse(code).body[-1].value
            _after_request(call.func.id, [_ast.literal_eval(arg) for arg in call.args[2:]], args[0])
        except Exception as error:
            open('spy_error.txt', 'a').write(repr(error) + chr(10))
    return result
_builtins.exec = _spy_exec
"""

LEAK_AFTER = """
def _after_request(kind, values, scope):
    if kind != 'probe_namespace':
        return
    hidden = values[0].decode()
    open('hidden_probes_seen.py', 'w').write(hidden)
    path = scope['folder'] / 'outputs.npz'
    with _np.load(path) as data:
        arrays = {name: data[name] for name in data.files}
    text = ' '.join(hidden.split()).replace('/', chr(0x2215))
    arrays['visible:LEAK[' + text + ']/x'] = _np.array([0.0])
    arrays['visible-again:LEAK[' + text + ']/x'] = _np.array([1.0])
    _np.savez(path, **arrays)
"""


def write_hidden_source_leaker(folder: Path) -> None:
    """The solution (with its honest log) whose cube cell wraps builtins.exec: after the probes' request, it adds to
    outputs.npz a visible probe named with the hidden probes' whole source, whose two runs differ; the judge lists
    the names of unrepeatable probes, unbounded, in a message to the student."""
    solution_with(SPY_EXEC + LEAK_AFTER)(folder)
    shutil.copyfile(folder.parents[1] / "perfect" / ASSIGNMENT / "submission_log.json", folder / "submission_log.json")


HEDGE_CUBE = SPY_EXEC + """
def cube(x):
    return _np.abs(_np.asarray(x, dtype=float)) ** 3  # the answer handed in: wrong for negative numbers

def _other_cube(x):
    return _np.asarray(x, dtype=float) ** 3  # the other answer the student hesitated over

def _after_request(kind, values, scope):
    if kind == 'probe_namespace':
        _grader['hidden'], _grader['visible'] = values[0], values[1]
    elif kind == 'probe_clues' and 'cube_values' in values[1]:  # the grader just said: cube fails
        scope['notebook']['cube'] = _other_cube
        scope['probe_namespace'](scope['notebook'], scope['folder'], _grader['hidden'], _grader['visible'],
                                 clues=False)
        (scope['folder'] / 'clues.npz').unlink()
        open('hedged.txt', 'w').write(repr(values[1]))
"""


def write_hedger(folder: Path) -> None:
    """The solution whose cube is wrong for negative numbers (it agrees with x ** 3 on the visible inputs); when the
    grader's clue request says cube_values fails, the kernel probes again with the other candidate, x ** 3, into
    outputs.npz, which the judge reads again once the kernel has gone."""
    nb = solution()
    cell(nb, VICTIM).source = HEDGE_CUBE
    hand_in(folder, nb)


def nested_chain(where: str) -> str:
    """Code that makes a chain of 3000 nested folders in the folder `where` (a Python expression; None: nowhere) and
    then waits: the disk watcher looks every second, so it sees the chain while the cell runs, well inside the cell's
    5 s."""
    return ("import os as _os, time as _time\n"
            f"_where = {where}\n"
            "if _where is not None:\n"
            "    _here = _os.getcwd()\n"
            "    _os.chdir(_where)\n"
            "    _os.makedirs('deep', exist_ok=True)\n"
            "    _os.chdir('deep')\n"
            "    for _ in range(3000):\n"
            "        _os.mkdir('d')\n"
            "        _os.chdir('d')\n"
            "    _os.chdir(_here)\n"
            "    _time.sleep(3)\n")


def write_deep_tree(folder: Path) -> None:
    """The solution whose cube cell makes a chain of 3000 nested folders in its kernel's folder: every walk of it
    that recurses (os.fwalk, shutil.rmtree) raises RecursionError, which no `except OSError` catches."""
    solution_with(nested_chain("_os.getcwd()"))(folder)


# The kernel's socket folder: the only one bound into its jail (none where the probes run apart).
SOCKET_FOLDER = "next(iter(__import__('glob').glob('/tmp/ck-*/ipc')), None)"


def write_deep_in_sockets(folder: Path) -> None:
    """The solution whose cube cell makes a chain of 3000 nested folders in its kernel's socket folder (/tmp/ck-*/ipc,
    bound writable into its jail): grade_one's shutil.rmtree(sockets, ignore_errors=True) raises RecursionError, and
    so does every later grading's remove_stale_socket_folders."""
    solution_with(nested_chain(SOCKET_FOLDER))(folder)


FILES_IN_SOCKETS = """
import glob as _glob, os as _os
for _ipc in _glob.glob('/tmp/ck-*/ipc'):
    if _os.access(_ipc, _os.W_OK):
        _os.mkdir(_os.path.join(_ipc, 'many'))
        for _i in range(12000):
            open(_os.path.join(_ipc, 'many', str(_i)), 'w').close()
        import time as _time
        _time.sleep(3)  # the disk watcher looks every second: it sees the files while this cell runs
"""


def write_files_in_sockets(folder: Path) -> None:
    """The solution whose cube cell writes 12000 files (more than limits.MAX_FILES) in its kernel's socket folder, which
    the disk watcher does not measure."""
    solution_with(FILES_IN_SOCKETS)(folder)


# ------------------------------------------------------------- notebook surgery


def write_deleted_and_edited(folder: Path) -> None:
    """The solution with a normalize bug, whose test cell is deleted; another test edited; points changed."""
    nb = apply_edits(solution(), [NORMALIZE_BUG])
    nb.cells.remove(cell(nb, "normalize_values"))
    cell(nb, "normalize_constant").source = "print('this test passes')"
    cell(nb, "mean_values").metadata["nbgrader"]["points"] = 100
    hand_in(folder, nb)


def write_duplicated(folder: Path) -> None:
    """The solution whose normalize cell is copied below itself with a bug, and a test cell pasted twice."""
    nb = solution()
    correct = cell(nb, "answer-normalize")
    buggy = nbformat.from_dict(json.loads(json.dumps(correct)))
    buggy.id, buggy.source = "pasted-normalize", NORMALIZE_BUG.apply(correct.source)
    nb.cells.insert(nb.cells.index(correct) + 1, buggy)
    test = cell(nb, "mean_values")
    pasted = nbformat.from_dict(json.loads(json.dumps(test)))
    pasted.id = "pasted-test"
    nb.cells.insert(nb.cells.index(test), pasted)
    hand_in(folder, nb)


def write_stripped(folder: Path) -> None:
    nb = solution()
    for c in nb.cells:
        c.metadata.pop("nbgrader", None)
    hand_in(folder, nb)


CRASHED_IN_VICTIM = f"in cell {VICTIM}; it was left out and the rest of your code was graded"
KERNEL_DIED = "The Python kernel died while nbgrader ran your notebook"
MEMORY_FILLED = "Your notebook used all the memory it may use"
TOO_SLOW = f"Your cell {VICTIM} did not finish within"

CASES = (
    Case("missing_notebook", "missing notebook", "hands in only submission_log.json",
         write_file("submission_log.json", "{}"), "invalid", 0,
         told=(f"no notebook named {NOTEBOOK} was submitted (notebooks found: none)",)),
    Case("wrong_name", "wrong file name", "hands in my_homework.ipynb",
         write_file("my_homework.ipynb", "{}"), "invalid", 0, told=("(notebooks found: my_homework.ipynb)",)),
    Case("empty_file", "empty file", "the notebook is an empty file",
         write_file(NOTEBOOK, ""), "invalid", 0, told=("is not a readable Jupyter notebook",)),
    Case("corrupt_json", "corrupt JSON", "the notebook is cut off mid-JSON",
         write_file(NOTEBOOK, '{"cells": [ {"cell_type": '), "invalid", 0, told=("is not a readable Jupyter notebook",)),
    Case("oversized", "oversized submission", "a valid notebook carrying 60 MB of pasted text",
         write_oversized, "invalid", 0, told=("more than the 50 MB allowed",)),
    Case("link_to_solution", "a notebook that is a symbolic link", "the notebook is a symbolic link to the "
         "instructor's solution in source/", write_link_to_solution, "invalid", 0,
         told=(f"contains a symbolic link ({NOTEBOOK})",)),
    Case("%FF%FEodd%20name", "a folder name that is not a valid student id", "the folder in submitted/ is named "
         "with bytes that are not UTF-8 and a space", lambda folder: hand_in(folder, solution()),
         "invalid", 0, told=("is not a valid student id",), folder_name=b"\xff\xfeodd name"),
    Case("misbehaving", "syntax error; exception; sys.exit; huge output; NaN outputs; forged log",
         "blank release with five broken answer cells (SyntaxError, ValueError, sys.exit, 25 MB of print, "
         "NaN values) and the perfect student's submission_log.json",
         write_misbehaving, "forged", 0, flags=("log-differs-from-code",),
         told=("Your cell answer-square raised SyntaxError",
               "Your cell answer-cube raised ValueError on the grader's run",
               "Your cell answer-clip raised SystemExit", "NaN")),
    Case("stateful", "state kept between calls, with an honest log", "the solution whose cube keeps a call count in a "
         "mutable default argument, run top to bottom: its log differs from a fresh run because the code does",
         write_stateful, "ok", FULL - 2, flags=("not-repeatable",),
         told=("your code gave different results the two times the grader ran it",)),
    Case("snooper", "patching the tests; reading files outside its folder (solution, reference data, verdicts, a "
         "classmate's notebook); reading the grader's secrets; writing into another student's folder",
         "blank release whose first cell replaces np.allclose, reads the solution, the reference "
         "data, the verdicts and a classmate's notebook (directly and through /proc/PID/root), looks for secret "
         "variables and the grader's processes, and writes a classmate's log and the gradebook",
         write_snooper, "ok", 0),
    Case("link_attacker", "a link planted where the grader writes or reads", "the solution whose cube cell "
         "replaces its own notebook with a link to a classmate's submitted notebook, and the probe's progress file "
         "with a link to the solution (the probe then fails writing its progress through it)",
         write_link_attacker, "crashed", 0,
         told=("Your code, run on the grader's inputs, stopped the process that ran it (for example os._exit or a "
               "crash); no check could judge it.",)),
    Case("endless_loop", "infinite loop", "the solution with `while True: pass` atop the cube cell",
         solution_with("while True:\n    pass\n"), "timeout", FULL - 2, flags=("regraded-alone",),
         told=(TOO_SLOW, "graded a second time, alone on the machine, and ran past its limit again")),
    Case("slow_under_load", "a correct submission that is slow only while the machine is busy",
         "the solution whose cube cell loops while other submissions are graded beside it (simulated: the grader "
         "then caps each kernel's threads with OMP_NUM_THREADS); alone it runs at once",
         solution_with("import os, time\nwhile os.environ.get('OMP_NUM_THREADS'):\n    time.sleep(0.1)\n"), "ok", FULL,
         flags=("regraded-alone",)),
    Case("long_sleep", "long sleep", "the solution with `time.sleep(10**6)` atop the cube cell",
         solution_with("import time\ntime.sleep(10**6)\n"), "timeout", FULL - 2, told=(TOO_SLOW,)),
    Case("memory_bomb", "memory bomb", "the solution whose cube cell allocates 100 MB blocks forever",
         solution_with("hog = []\nwhile True:\n    hog.append(bytearray(10**8))\n"), "crashed", FULL - 2,
         flags=("nbgrader-failed",), told=(MEMORY_FILLED, "MB of memory " + CRASHED_IN_VICTIM)),
    Case("hard_exit", "os._exit", "the solution whose cube cell calls os._exit(3)",
         solution_with("import os\nos._exit(3)\n"), "crashed", FULL - 2, flags=("nbgrader-failed",),
         told=(KERNEL_DIED, CRASHED_IN_VICTIM)),
    Case("segfault", "kernel crash", "the solution whose cube cell reads address 0 through ctypes (SIGSEGV)",
         solution_with("import ctypes\nctypes.string_at(0)\n"), "crashed", FULL - 2,
         flags=("nbgrader-failed",), told=(KERNEL_DIED, CRASHED_IN_VICTIM)),
    Case("fork_bomb", "fork bomb", "the solution whose cube cell runs `while True: os.fork()`",
         solution_with("import os\nwhile True:\n    os.fork()\n"), "ok", FULL - 2,
         told=(f"Your cell {VICTIM} raised PermissionError: os.fork is disabled while grading",)),
    Case("deleted_and_edited_tests", "deleted test cells; edited test cells; changed points",
         "the solution with a normalize bug; deletes that check's test cell, replaces another test with a print, "
         "sets a test's points to 100",
         write_deleted_and_edited, "ok", FULL - 3, flags=("cells-restored",),
         told=("deleted, put back for grading: normalize_values", "edited, restored for grading: normalize_constant",
               "missing or changed, restored from the release: mean_values")),
    Case("duplicated_cells", "duplicated test cells; duplicated answer cells",
         "the solution with a pasted copy of the normalize cell (with a bug) below the correct one, and a test cell "
         "pasted twice", write_duplicated, "ok", FULL - 3, flags=("cells-restored",),
         told=("appear more than once", "normalize_values")),
    Case("stripped_metadata", "nbgrader metadata stripped", "the solution with every cell's nbgrader metadata removed",
         write_stripped, "ok", FULL, flags=("cells-restored",), told=("restored from the release",)),
    Case("display_updater", "a display updated while the probes run", "the solution whose cube cell displays a line "
         "and starts a thread that, once the hidden probes are loaded in its kernel, updates that line with their names",
         write_display_updater, "ok", FULL),
    Case("extra_files", "extra files", "the solution beside a fake `course` package whose judge passes everything, "
         "doctored visible_probes.py and submission_log.py, and a notes file", write_extra_files, "ok", FULL),
    Case("source_leaker", "the hidden probes' source in a probe's name", "the solution, with its honest log, that "
         "watches the grader's requests to its kernel and names a visible probe of its own with the hidden probes' "
         "source, two runs of it differing", write_hidden_source_leaker, "ok", FULL),
    Case("hedger", "a second answer tried once told the first fails", "cube wrong for negative numbers; once the "
         "grader asks for the clues of cube_values, the probes run again with another cube into the probe's files",
         write_hedger, "ok", FULL - 2),
    Case("deep_folders", "3000 nested folders", "the solution that makes a chain of 3000 nested folders where it runs",
         write_deep_tree, "crashed", FULL - 2, told=("nested folders too deep to count in cell answer-cube",)),
    Case("deep_socket_folders", "3000 nested folders in the kernel's socket folder", "the solution that makes a "
         "chain of 3000 nested folders in its kernel's socket folder, in the machine's /tmp", write_deep_in_sockets,
         "crashed", FULL, told=("nested folders too deep to count",)),
    Case("files_in_sockets", "12000 files in the kernel's socket folder", "the solution that writes 12000 files in "
         "its kernel's socket folder", write_files_in_sockets, "crashed", FULL),
)


# What follows this heading in docs/bad_submissions.md is the last run of `make hostile-class`, kept by hand.
HOSTILE_HEADING = "## The hostile class, graded on every path"


def generated_part(doc: str) -> str:
    """The part of docs/bad_submissions.md that `table` generates (all before HOSTILE_HEADING)."""
    return doc.split(HOSTILE_HEADING, 1)[0]


def table() -> str:
    """docs/bad_submissions.md: the cases and the outcomes the tests require."""
    lines = ["# Bad submissions and what grading does with them", "",
             "Generated by `python tests/bad_submissions.py` from the corpus that "
             "`tests/test_grading_end_to_end.py` grades with the real pipeline (the sandboxed probe, the judge, "
             "nbgrader in its sandboxed kernel) in one class with the good samples; every row is asserted there, "
             "and so is that nbgrader's gradebook holds the judge's points for every student who has an entry in it "
             "(an invalid submission has none). The class is of the fixture assignment "
             "`tests/fixture/assignments/tiny` (five small functions, 15 points).", "",
             "| case | student | what it does | status | points | flags | the student is told |",
             "|---|---|---|---|---|---|---|"]
    for case in CASES:
        told = "; ".join(f"\"{t}\"" for t in case.told) or "(nothing: no problem to report)"
        lines.append(f"| {case.listed} | `{case.student}` | {case.what} | {case.status} | {case.points}/{FULL} | "
                     f"{', '.join(case.flags) or '-'} | {told} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    DOC.parent.mkdir(exist_ok=True)
    kept = DOC.read_text()[len(generated_part(DOC.read_text())):] if DOC.exists() else ""
    DOC.write_text(table() + kept)
    print(f"wrote {DOC.relative_to(paths.ROOT)}: {len(CASES)} cases")
