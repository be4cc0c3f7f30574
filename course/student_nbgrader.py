"""nbgrader as students use it: Validate that tells the truth, and Submit that keeps a submission private.

The course's nbgrader_config.py uses this module, and `make hub` copies this file into the students' Jupyter
configuration, whose nbgrader_config.py loads it the same way (students' servers cannot read the course's package).
It imports nothing of the course.

Validate: nbgrader checks only the graded test cells, and the course's hold only a comment (the grader runs its
checks outside the notebook), so a notebook of stubs would pass. With `Validator.validate_all`, every code cell that
raises fails validation: a stub's NotImplementedError, an error, a visible test's failed assertion. What a cell
writes to stderr (progress bars, warnings) would fail it too: validation drops it (keep_errors_only, after nbgrader's
own hook on each executed cell, which nbgrader does not let configuration replace), and only there. No hidden check
runs: there is none in the notebook. What Validate shows is made `readable`: the answers not written yet first, one
line each; each other failing cell by its first line and the end of its error, and a given cell that fails only
because an answer above it is not written says so.

Submit: nbgrader makes a submission's folder writable by every account and its files readable by every account,
hidden only by a random name. PrivateSubmit lets into it only the student and the instructor's group, which the
exchange's inbound folder passes on to it (course.hub.exchange.GroupInboundRelease).
"""

import os
import re

import nbformat
from nbconvert.filters import ansi2html
from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.preprocessors import Execute
from nbgrader.validator import Validator

NBGRADERS_CELL_HOOK = Execute.on_cell_executed
NBGRADERS_VALIDATE = Validator.validate
NBGRADERS_PRINT_ERROR = Validator._print_error
# The release's stubs (nbgrader_config.py gives them to nbgrader's ClearSolutions): every code stub raises with STUB.
STUB = "Write your solution here"
CODE_STUB = f'# YOUR CODE HERE\nraise NotImplementedError("{STUB}, then re-run this cell.")'
TEXT_STUB = "YOUR ANSWER HERE"
ANSI = re.compile(r"\x1b\[[0-9;]*m")
ERROR_LINES = 4  # of a traceback, the last ones: where it was raised, and the error


def keep_errors_only(cell) -> None:
    """While nbgrader validates, drop what an executed cell wrote to stderr, so that only errors fail it."""
    if os.environ.get("NBGRADER_EXECUTION") == "validate":
        cell.outputs = [o for o in cell.outputs if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]


def on_cell_executed(self, **kwargs) -> None:
    """nbgrader's hook after each executed cell, then keep_errors_only."""
    NBGRADERS_CELL_HOOK(self, **kwargs)
    keep_errors_only(kwargs["cell"])


def unwritten_answers(nb: nbformat.NotebookNode) -> list[nbformat.NotebookNode]:
    """The answer cells of `nb` still holding the release's stub."""
    return [cell for cell in nb.cells if cell.metadata.get("nbgrader", {}).get("solution")
            and (STUB in cell.source or cell.source.strip() == TEXT_STUB)]


def label(cell: nbformat.NotebookNode) -> str:
    return cell.metadata.get("nbgrader", {}).get("grade_id") or cell.get("id") or "a cell"


def error_end(error: str) -> str:
    """The last ERROR_LINES lines of a traceback, without colours: where it was raised, and the error."""
    lines = [line for line in ANSI.sub("", error).splitlines() if line.strip()]
    return "\n".join(lines[-ERROR_LINES:])


def cause(error: str, unwritten_above: list[nbformat.NotebookNode]) -> str | None:
    """Why a cell that is not an unwritten answer failed, where an unwritten answer above it singles the cause out:
    the stub's NotImplementedError raised through it, or a name that answer defines; None otherwise."""
    text = ANSI.sub("", error)
    named = [cell for cell in unwritten_above if STUB in text and
             any(f" in {name}(" in text or f", in {name}" in text
                 for name in re.findall(r"^\s*(?:def|class)\s+(\w+)", cell.source, flags=re.M))]
    missing = re.search(r"NameError: name '(\w+)' is not defined", text)
    if missing:
        named = [cell for cell in unwritten_above if re.search(rf"\b{missing[1]}\b", cell.source)]
    if len(named) == 1:
        return f"fails because {label(named[0])} above is not written yet"
    if STUB in text and unwritten_above:
        return f"fails because an answer above is not written yet ({', '.join(label(c) for c in unwritten_above)})"
    return None


def readable(results: dict, nb: nbformat.NotebookNode) -> dict:
    """nbgrader's validation `results` of the notebook `nb`, made readable: first the answers not written yet, one
    line each; then each other failing cell by its first line, with the end of its error, and, where an unwritten
    answer above it singles the cause out, that cause (not the student's own error)."""
    if "failed" not in results:
        return results
    unwritten = unwritten_answers(nb)
    by_source = {cell.source.strip(): cell for cell in nb.cells}
    failed = [{"source": f"{label(cell)}: not written yet", "error": "", "raw_error": ""} for cell in unwritten]
    for entry in results["failed"]:
        cell = by_source.get(entry["source"])
        if cell is not None and cell in unwritten:
            continue
        position = nb.cells.index(cell) if cell is not None else len(nb.cells)
        above = [c for c in unwritten if nb.cells.index(c) < position]
        told = cause(entry["raw_error"], above)
        lines = entry["source"].splitlines()
        shown = f"{label(cell) if cell is not None else 'a cell'}: {lines[0] if lines else ''}" + (
            f" ... ({len(lines) - 1} more lines)" if len(lines) > 1 else "")
        error = f"{told}:\n{error_end(entry['raw_error'])}" if told else error_end(entry["raw_error"])
        failed.append({"source": shown, "error": ansi2html(error), "raw_error": error})
    return {**results, "failed": failed}


def validate(self, filename: str) -> dict:
    """nbgrader's Validator.validate, its results made `readable`."""
    return readable(NBGRADERS_VALIDATE(self, filename), nbformat.read(filename, as_version=4))


def print_error(self, source: str, error: str) -> None:
    """`nbgrader validate`'s report of a failed cell; an answer not written yet (no error of its own) in one line."""
    if error:
        NBGRADERS_PRINT_ERROR(self, source, error)
    else:
        self.stream.write(f"\n  {source}")


def configure(c) -> None:
    """The students' side of the course's nbgrader configuration `c`."""
    c.Validator.validate_all = True
    Execute.on_cell_executed = on_cell_executed
    Validator.validate = validate
    Validator._print_error = print_error
    c.ExchangeFactory.submit = PrivateSubmit


class PrivateSubmit(ExchangeSubmit):
    def copy_files(self):
        super().copy_files()
        # The submission's folder has the instructor's group (inbound's setgid passed it on) and lets in the student
        # and that group only (0770), which may also remove it. Its files may be read by any account that gets in:
        # nbgrader writes its timestamp and secret after copying the folder's mode over, so they have the student's
        # own group.
        self.set_perms(os.path.join(self.inbound_path, self.assignment_filename), fileperms=0o644, dirperms=0o770)
