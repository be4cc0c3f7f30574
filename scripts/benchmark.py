"""Print the assignment's figures: notebook run time, training time, accuracy vs baseline, grading time.

    make bench        (runs the instructor solution once; reads grading times from `make all`'s records)
"""

from __future__ import annotations

import json
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course import paths  # noqa: E402
from course.samples import run_notebook, sample_notebook  # noqa: E402

ASSIGNMENT = "transformer_fundamentals"


def cell_text(nb, cell_id: str) -> str:
    """The stdout of one cell of an executed notebook."""
    cell = next(c for c in nb.cells if c.metadata.get("nbgrader", {}).get("grade_id") == cell_id)
    return "".join(o.get("text", "") for o in cell.outputs if o.output_type == "stream")


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / ASSIGNMENT
        shutil.copytree(paths.release_dir(ASSIGNMENT), folder)
        start = time.perf_counter()
        nb = run_notebook(sample_notebook(ASSIGNMENT, "perfect"), folder)
        notebook_seconds = time.perf_counter() - start
    trained = re.search(r"Trained in (\d+) s: val acc ([\d.]+), test acc ([\d.]+)", cell_text(nb, "demo-train"))
    baseline = re.search(r"TF-IDF \+ logistic regression\s+([\d.]+)\s+([\d.]+)", cell_text(nb, "demo-baseline"))
    print(f"instructor notebook, Restart & Run All: {notebook_seconds:.0f} s (kernel start included)")
    print(f"training (4 epochs): {trained[1]} s")
    print(f"MiniTransformer: val acc {trained[2]}, test acc {trained[3]}")
    print(f"TF-IDF + logistic regression: val acc {baseline[1]}, test acc {baseline[2]}")
    records = sorted((paths.BUILD / "results" / ASSIGNMENT).glob("*.json"))
    if not records:
        print("no grading records yet: run `make all` for seconds per graded submission")
    for path in records:
        record = json.loads(path.read_text())
        steps = ", ".join(f"{step} {seconds:.1f}" for step, seconds in record["seconds"].items())
        print(f"graded {record['student']}: {sum(record['seconds'].values()):.1f} s ({steps})")


if __name__ == "__main__":
    main()
