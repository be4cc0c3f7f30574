"""Print each assignment's figures: notebook run time (slowest cells, seconds per section), its own figures, seconds
per graded submission.

    make bench [ASSIGNMENT=name]   (runs each instructor solution once; reads grading times from `make all`'s records)

An assignment's own figures (training time, accuracy vs a baseline, ...) come from
`figures(executed_notebook) -> list[str]` in its folder's benchmark.py, if it has one.
"""

from __future__ import annotations

import datetime
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course import paths  # noqa: E402
from course.assignment_parts import part  # noqa: E402
from course.samples import run_notebook, sample_notebook  # noqa: E402


def cell_seconds(cell) -> float:
    """How long an executed cell ran, from the timestamps nbclient records in its metadata."""
    timing = cell.metadata.get("execution", {})
    start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
    if not (start and end):
        return 0.0
    return (datetime.datetime.fromisoformat(end.replace("Z", "+00:00")) -
            datetime.datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()


def section_seconds(nb) -> dict[str, float]:
    """Seconds per section of an executed notebook: a section runs from one '## ' heading to the next."""
    sections, current = {}, "(before the first section)"
    for cell in nb.cells:
        heading = next((line for line in cell.source.splitlines() if line.startswith("## ")), None)
        if cell.cell_type == "markdown" and heading:
            current = heading.removeprefix("## ").strip()
        elif cell.cell_type == "code":
            sections[current] = sections.get(current, 0.0) + cell_seconds(cell)
    return sections


def bench(assignment: str) -> None:
    print(f"# {assignment}")
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / assignment
        shutil.copytree(paths.release_dir(assignment), folder)
        start = time.perf_counter()
        nb = run_notebook(sample_notebook(assignment, "perfect"), folder)
        notebook_seconds = time.perf_counter() - start
    print(f"instructor notebook, Restart & Run All: {notebook_seconds:.0f} s (kernel start included)")
    slowest = sorted(((cell_seconds(cell), cell.get("id", "?")) for cell in nb.cells if cell.cell_type == "code"),
                     reverse=True)[:6]
    print("slowest cells: " + ", ".join(f"{cell_id} {seconds:.1f} s" for seconds, cell_id in slowest))
    print("seconds per section: " + "; ".join(f"{name} {seconds:.1f} s" for name, seconds in section_seconds(nb).items()))
    if (paths.assignment_dir(assignment) / "benchmark.py").exists():
        print("\n".join(part(assignment, "benchmark").figures(nb)))
    records = sorted((paths.BUILD / "results" / assignment).glob("*.json"))
    if not records:
        print("no grading records yet: run `make all` for seconds per graded submission")
    for path in records:
        record = json.loads(path.read_text())
        steps = ", ".join(f"{step} {seconds:.1f}" for step, seconds in record["seconds"].items())
        print(f"graded {record['student']}: {sum(record['seconds'].values()):.1f} s ({steps})")


def main() -> None:
    for assignment in paths.select_assignments(sys.argv[1:]):
        bench(assignment)


if __name__ == "__main__":
    main()
