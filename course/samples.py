"""Sample submissions, generated from the notebooks (never hand-edited copies).

    python -m course.samples [ASSIGNMENT ...]      (default: every assignment)

writes submitted/<sample>/<assignment>/ as a student would hand it in: the
release folder with the notebook filled in and run top to bottom, so that its
last cell wrote submission_log.json.

- perfect: every answer cell holds the instructor solution;
- blank:   the release as it is;
- partial: the solution with a few classic bugs (SAMPLE_BUGS of the assignment's
  corpus.py), each of which must cost exactly the points of its own check.

`Edit` is also how the mutants and alternatives of each corpus.py change the
solution (course.measuring.grader_accuracy).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbclient import NotebookClient
from traitlets.config import Config

from course import notebook_cache, paths
from course.assignment_parts import part
from course.grading import limits


@dataclass(frozen=True)
class Edit:
    """A small, named change to one answer cell of the instructor solution."""

    name: str
    cell: str
    replacements: tuple[tuple[str, str], ...]  # (old text, new text), applied in order
    description: str
    mistake: str = ""  # for a wrong edit (a mutant): the catalogue name its verdicts must give

    def apply(self, source: str) -> str:
        for old, new in self.replacements:
            if old not in source:
                raise ValueError(f"edit {self.name!r}: {old!r} is not in cell {self.cell}")
            source = source.replace(old, new)
        return source


def apply_edits(nb: nbformat.NotebookNode, edits) -> nbformat.NotebookNode:
    """`nb` with each edit applied to its answer cell (in place)."""
    cells = _cells_by_id(nb)
    for edit in edits:
        cells[edit.cell].source = edit.apply(cells[edit.cell].source)
    return nb




SAMPLE_ANSWER = "(Sample answer written by the course's sample generator; graded by hand.)"
SAMPLES = ("perfect", "blank", "partial")


def _cells_by_id(nb: nbformat.NotebookNode) -> dict[str, nbformat.NotebookNode]:
    return {cell.metadata["nbgrader"]["grade_id"]: cell for cell in nb.cells if "nbgrader" in cell.metadata}


def sample_notebook(assignment: str, sample: str) -> nbformat.NotebookNode:
    """The release notebook with its answer cells filled in as `sample` requires."""
    nb = notebook_cache.read(paths.release_dir(assignment) / f"{assignment}.ipynb")
    if sample == "blank":
        return nb
    solution = _cells_by_id(notebook_cache.shared(paths.source_notebook(assignment)))
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution"):
            continue
        cell.source = solution[meta["grade_id"]].source if cell.cell_type == "code" else SAMPLE_ANSWER
    if sample == "partial":
        apply_edits(nb, [edit for edit, _ in part(assignment, "corpus").SAMPLE_BUGS])
    return nb


def run_notebook(nb: nbformat.NotebookNode, workdir: Path, cell_timeout: int = 300) -> nbformat.NotebookNode:
    """Execute `nb` top to bottom in `workdir` with a real kernel, going on past errors, as Run All does.

    The kernel is a python3 kernel on this machine that talks over IPC sockets in a private temporary folder (no
    TCP port for other users to reach, and no warning from ipykernel that TCP is unencrypted); the client owns it
    and shuts it down with the notebook (a kernel left to notice its parent's exit says so on the terminal)."""
    with tempfile.TemporaryDirectory(prefix="kernel-") as sockets:
        config = Config({"KernelManager": {"transport": "ipc", "ip": f"{sockets}/ipc",
                                           "connection_file": f"{sockets}/connection.json"}})
        NotebookClient(nb, kernel_name="python3", config=config, timeout=cell_timeout, allow_errors=True,
                       resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def cell_text(nb: nbformat.NotebookNode, cell_id: str) -> str:
    """The stdout of one cell (by grade_id) of an executed notebook."""
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == cell_id)
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def write_sample(assignment: str, sample: str, submitted_root: Path) -> Path:
    """Create submitted/<sample>/<assignment>/, run its notebook there, and return the folder."""
    folder = submitted_root / sample / assignment
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(paths.release_dir(assignment), folder)
    start = time.perf_counter()
    nb = run_notebook(sample_notebook(assignment, sample), folder)
    nbformat.write(nb, folder / f"{assignment}.ipynb")
    print(f"{sample}: ran the notebook in {time.perf_counter() - start:.0f} s")
    return folder


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="default: all")
    parser.add_argument("--into", type=Path, default=paths.COURSE / "submitted", help="the submitted/ folder")
    parser.add_argument("--samples", nargs="+", choices=SAMPLES, default=SAMPLES)
    parser.add_argument("--jobs", type=int, default=limits.default_jobs(), help="notebooks run at once")
    args = parser.parse_args()
    runs = [(assignment, sample) for assignment in paths.select_assignments(args.assignments) for sample in args.samples]
    if len(runs) == 1 or args.jobs == 1:
        for assignment, sample in runs:
            write_sample(assignment, sample, args.into)
        return
    # One process per notebook, each kernel with its share of the cores.
    env = {**os.environ, **limits.thread_env(args.jobs)}

    def run(assignment: str, sample: str) -> subprocess.CompletedProcess:
        return subprocess.run([sys.executable, "-m", "course.samples", assignment, "--into", str(args.into),
                               "--jobs", "1", "--samples", sample], env=env)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        results = list(pool.map(lambda job: run(*job), runs))
    if any(result.returncode for result in results):
        sys.exit("a sample notebook could not be written")


if __name__ == "__main__":
    main()
