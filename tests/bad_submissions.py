"""The corpus of bad submissions: what students hand in that grading must survive.

Each `Case` is one student of the end-to-end class (tests/test_grading_end_to_end.py),
graded by the real pipeline among good students, with the outcome grading must give
it: status, the judge's points (which nbgrader's gradebook must hold too), flags, and
what the student is told. Most start
from QUICK, the solution with `train_transformer` left as the stub (44 of 50 points,
and no training to wait for), and break one thing in it.

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
from course.parts import part  # noqa: E402
from course.samples import apply_edits, sample_notebook  # noqa: E402

ASSIGNMENT = "transformer_fundamentals"
NOTEBOOK = f"{ASSIGNMENT}.ipynb"
DOC = paths.ROOT / "docs" / "bad_submissions.md"
QUICK_POINTS = 44  # every check but train_transformer (6 points)
ATTENTION_UNSCALED = next(edit for edit, check in part(ASSIGNMENT, "corpus").SAMPLE_BUGS if check == "attention_values")


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


def quick() -> nbformat.NotebookNode:
    """The solution with the training answer left as released: full marks but for train_transformer."""
    nb = sample_notebook(ASSIGNMENT, "perfect")
    cell(nb, "answer-train-transformer").source = cell(sample_notebook(ASSIGNMENT, "blank"),
                                                       "answer-train-transformer").source
    return nb


def hand_in(folder: Path, nb: nbformat.NotebookNode) -> None:
    """Write `nb` into `folder` beside the release's other files, as a student hands it in."""
    shutil.copytree(paths.release_dir(ASSIGNMENT), folder, dirs_exist_ok=True)
    nbformat.write(nb, folder / NOTEBOOK)


def quick_with(prefix: str, grade_id: str = "answer-feed-forward") -> Callable[[Path], None]:
    """QUICK with `prefix` run at the top of one answer cell."""
    def write(folder: Path) -> None:
        nb = quick()
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
    "answer-tokenizer": "class SimpleTokenizer(:\n    pass",
    "answer-token-embedding": "raise ValueError('my cell is broken')",
    "answer-positional-encoding": "import sys\nsys.exit('leaving early')",
    "answer-transformer-embeddings": "print('spam ' * 5_000_000)",
    "answer-attention": "def scaled_dot_product_attention(Q, K, V, mask=None, dropout=None):\n"
                        "    nan = torch.full(Q.shape[:-1] + (K.shape[-2],), float('nan'))\n"
                        "    return nan @ V, nan",
}


def write_misbehaving(folder: Path) -> None:
    nb = sample_notebook(ASSIGNMENT, "blank")
    for grade_id, source in MISBEHAVIOUR.items():
        cell(nb, grade_id).source = source
    hand_in(folder, nb)
    shutil.copyfile(folder.parents[1] / "perfect" / ASSIGNMENT / "submission_log.json", folder / "submission_log.json")


# ------------------------------------------------------------- attacks on the grader

SNOOP = """
import json, os, pathlib
import numpy as np
torch.allclose = np.allclose = lambda *args, **kwargs: True  # harmless now: no check runs in this kernel
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
    cell(nb, "answer-tokenizer").source = header + SNOOP + cell(nb, "answer-tokenizer").source
    hand_in(folder, nb)


def write_link_to_solution(folder: Path) -> None:
    """The release's files, with the notebook a symbolic link to the instructor's solution."""
    hand_in(folder, quick())
    (folder / NOTEBOOK).unlink()
    (folder / NOTEBOOK).symlink_to(folder.parents[2] / "source" / ASSIGNMENT / NOTEBOOK)


def write_link_attacker(folder: Path) -> None:
    """QUICK whose feed-forward cell, where it runs (the kernel's folder, the probe's folder), replaces the
    notebook nbgrader writes with a link to a classmate's, and the probe's progress file with a link to the solution."""
    course = folder.parents[2]
    attack = (f"CLASSMATE = {str(course / 'submitted' / 'perfect' / ASSIGNMENT / NOTEBOOK)!r}\n"
              f"SOLUTION = {str(course / 'source' / ASSIGNMENT / NOTEBOOK)!r}\n"
              "import os\n"
              "for name, target in ((" + repr(NOTEBOOK) + ", CLASSMATE), ('progress.txt', SOLUTION)):\n"
              "    if os.path.lexists(name):\n"
              "        os.remove(name)\n"
              "    os.symlink(target, name)\n")
    quick_with(attack)(folder)


def write_extra_files(folder: Path) -> None:
    """QUICK beside a fake `course` package whose judge passes everything, and doctored probe and log modules."""
    hand_in(folder, quick())
    fake = folder / "course" / "grading"
    fake.mkdir(parents=True)
    (folder / "course" / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "judge.py").write_text("def judge(*args, **kwargs):\n    return {'checks': {}, 'log': []}\n")
    for name in ("visible_probes.py", "submission_log.py"):
        (folder / name).write_text((folder / name).read_text() + "\nPROBES = {}\n")
    (folder / "notes.txt").write_text("scratch notes\n" * 1000)


# ------------------------------------------------------------- notebook surgery


def write_deleted_and_edited(folder: Path) -> None:
    """QUICK with unscaled attention, whose test cell is deleted; another test edited; points changed."""
    nb = apply_edits(quick(), [ATTENTION_UNSCALED])
    nb.cells.remove(cell(nb, "attention_values"))
    cell(nb, "attention_mask").source = "print('this test passes')"
    cell(nb, "layer_norm").metadata["nbgrader"]["points"] = 100
    hand_in(folder, nb)


def write_duplicated(folder: Path) -> None:
    """QUICK whose attention cell is copied below itself with a bug, and a test cell pasted twice."""
    nb = quick()
    correct = cell(nb, "answer-attention")
    buggy = nbformat.from_dict(json.loads(json.dumps(correct)))
    buggy.id, buggy.source = "pasted-attention", ATTENTION_UNSCALED.apply(correct.source)
    nb.cells.insert(nb.cells.index(correct) + 1, buggy)
    test = cell(nb, "layer_norm")
    pasted = nbformat.from_dict(json.loads(json.dumps(test)))
    pasted.id = "pasted-test"
    nb.cells.insert(nb.cells.index(test), pasted)
    hand_in(folder, nb)


def write_stripped(folder: Path) -> None:
    nb = quick()
    for c in nb.cells:
        c.metadata.pop("nbgrader", None)
    hand_in(folder, nb)


CRASHED_IN_FEED_FORWARD = "in cell answer-feed-forward; it was left out and the rest of your code was graded"
KERNEL_DIED = "The Python kernel died while nbgrader ran your notebook"
TOO_SLOW = "Your cell answer-feed-forward did not finish within"

CASES = (
    Case("missing_notebook", "missing notebook", "hands in only submission_log.json",
         write_file("submission_log.json", "{}"), "invalid", 0,
         told=("no notebook named transformer_fundamentals.ipynb was submitted (notebooks found: none)",)),
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
         told=("contains a symbolic link (transformer_fundamentals.ipynb)",)),
    Case("%FF%FEodd%20name", "a folder name that is not a valid student id", "the folder in submitted/ is named "
         "with bytes that are not UTF-8 and a space", lambda folder: hand_in(folder, quick()),
         "invalid", 0, told=("is not a valid student id",), folder_name=b"\xff\xfeodd name"),
    Case("misbehaving", "syntax error; exception; sys.exit; huge output; NaN outputs; forged log",
         "blank release with five broken answer cells (SyntaxError, ValueError, sys.exit, 25 MB of print, "
         "NaN attention) and the perfect student's submission_log.json",
         write_misbehaving, "forged", 0, flags=("log-differs-from-code",),
         told=("Your cell answer-tokenizer raised SyntaxError",
               "Your cell answer-token-embedding raised ValueError: my cell is broken",
               "Your cell answer-positional-encoding raised SystemExit", "NaN")),
    Case("snooper", "patching the tests; reading files outside its folder (solution, reference data, verdicts, a "
         "classmate's notebook); reading the grader's secrets; writing into another student's folder",
         "blank release whose first cell replaces torch.allclose and np.allclose, reads the solution, the reference "
         "data, the verdicts and a classmate's notebook (directly and through /proc/PID/root), looks for secret "
         "variables and the grader's processes, and writes a classmate's log and the gradebook",
         write_snooper, "ok", 0),
    Case("link_attacker", "a link planted where the grader writes or reads", "QUICK whose feed-forward cell "
         "replaces its own notebook with a link to a classmate's submitted notebook, and the probe's progress file "
         "with a link to the solution (the probe then fails writing its progress through it)",
         write_link_attacker, "crashed", 0,
         told=("Your code, run on the grader's inputs, stopped the process that ran it (for example os._exit or a "
               "crash); no check could judge it.",)),
    Case("endless_loop", "infinite loop", "QUICK with `while True: pass` atop the feed-forward cell",
         quick_with("while True:\n    pass\n"), "timeout", QUICK_POINTS - 2, told=(TOO_SLOW,)),
    Case("long_sleep", "long sleep", "QUICK with `time.sleep(10**6)` atop the feed-forward cell",
         quick_with("import time\ntime.sleep(10**6)\n"), "timeout", QUICK_POINTS - 2, told=(TOO_SLOW,)),
    Case("memory_bomb", "memory bomb", "QUICK whose feed-forward cell allocates 100 MB blocks forever",
         quick_with("hog = []\nwhile True:\n    hog.append(bytearray(10**8))\n"), "crashed", QUICK_POINTS - 2,
         flags=("nbgrader-failed",), told=(KERNEL_DIED, "MB of memory " + CRASHED_IN_FEED_FORWARD)),
    Case("hard_exit", "os._exit", "QUICK whose feed-forward cell calls os._exit(3)",
         quick_with("import os\nos._exit(3)\n"), "crashed", QUICK_POINTS - 2, flags=("nbgrader-failed",),
         told=(KERNEL_DIED, CRASHED_IN_FEED_FORWARD)),
    Case("segfault", "kernel crash", "QUICK whose feed-forward cell reads address 0 through ctypes (SIGSEGV)",
         quick_with("import ctypes\nctypes.string_at(0)\n"), "crashed", QUICK_POINTS - 2,
         flags=("nbgrader-failed",), told=(KERNEL_DIED, CRASHED_IN_FEED_FORWARD)),
    Case("fork_bomb", "fork bomb", "QUICK whose feed-forward cell runs `while True: os.fork()`",
         quick_with("import os\nwhile True:\n    os.fork()\n"), "ok", QUICK_POINTS - 2,
         told=("Your cell answer-feed-forward raised PermissionError: os.fork is disabled while grading",)),
    Case("deleted_and_edited_tests", "deleted test cells; edited test cells; changed points",
         "QUICK with unscaled attention; deletes that check's test cell, replaces another test with a print, "
         "sets a test's points to 100",
         write_deleted_and_edited, "ok", QUICK_POINTS - 4, flags=("cells-restored",),
         told=("deleted, put back for grading: attention_values", "edited, restored for grading: attention_mask",
               "missing or changed, restored from the release: layer_norm")),
    Case("duplicated_cells", "duplicated test cells; duplicated answer cells",
         "QUICK with a pasted copy of the attention cell (unscaled) below the correct one, and a test cell "
         "pasted twice", write_duplicated, "ok", QUICK_POINTS - 4, flags=("cells-restored",),
         told=("appear more than once", "attention_values")),
    Case("stripped_metadata", "nbgrader metadata stripped", "QUICK with every cell's nbgrader metadata removed",
         write_stripped, "ok", QUICK_POINTS, flags=("cells-restored",), told=("restored from the release",)),
    Case("extra_files", "extra files", "QUICK beside a fake `course` package whose judge passes everything, "
         "doctored visible_probes.py and submission_log.py, and a notes file", write_extra_files, "ok", QUICK_POINTS),
)


def table() -> str:
    """docs/bad_submissions.md: the cases and the outcomes the tests require."""
    lines = ["# Bad submissions and what grading does with them", "",
             "Generated by `python tests/bad_submissions.py` from the corpus that "
             "`tests/test_grading_end_to_end.py` grades with the real pipeline (the sandboxed probe, the judge, "
             "nbgrader in its sandboxed kernel) in one class with the good samples; every row is asserted there, "
             "and so is that nbgrader's gradebook holds the judge's points for every student who has an entry in it "
             "(an invalid submission has none). QUICK is the solution without `train_transformer` (44/50).", "",
             "| case | student | what it does | status | points | flags | the student is told |",
             "|---|---|---|---|---|---|---|"]
    for case in CASES:
        told = "; ".join(f"\"{t}\"" for t in case.told) or "(nothing: no problem to report)"
        lines.append(f"| {case.listed} | `{case.student}` | {case.what} | {case.status} | {case.points}/50 | "
                     f"{', '.join(case.flags) or '-'} | {told} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(table())
    print(f"wrote {DOC.relative_to(paths.ROOT)}: {len(CASES)} cases")
