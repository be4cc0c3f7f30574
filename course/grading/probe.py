"""Probe one submission: run its answer cells and every probe, save plain data.

    python -m course.grading.probe ASSIGNMENT NOTEBOOK OUT_DIR

Writes OUT_DIR/outputs.npz (arrays keyed 'check_id/output') and
OUT_DIR/probe_report.json (errors by cell and by probe). This is the only
grading step that runs the student's code outside nbgrader; the judge reads
its files in a process the student's code never ran in.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import nbformat
import numpy as np

from course import paths
from course.probes import execute_program, graded_program, load_probes, quiet
from course.reference import to_bytes


def probe_submission(assignment: str, notebook: Path, out_dir: Path) -> dict:
    """Run the submission's answer cells and all probes; write outputs.npz and probe_report.json."""
    submitted = nbformat.read(notebook, as_version=4)
    ns, cell_errors = execute_program(graded_program(assignment, submitted), notebook.parent)
    with quiet():
        outputs, probe_errors = load_probes(assignment).run_all(ns)
    arrays = {}
    for check_id, data in outputs.items():
        values = {f"{check_id}/{key}": np.asarray(value) for key, value in data.items()}
        if any(v.dtype == object for v in values.values()):  # would need pickle to load: refuse
            probe_errors[check_id] = "TypeError: the piece returned values that are not numbers or text"
        else:
            arrays.update(values)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "outputs.npz").write_bytes(to_bytes(arrays))
    report = {"cell_errors": cell_errors, "probe_errors": probe_errors}
    (out_dir / "probe_report.json").write_text(json.dumps(report, indent=1))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", choices=paths.ASSIGNMENTS)
    parser.add_argument("notebook", type=Path)
    parser.add_argument("out_dir", type=Path)
    args = parser.parse_args()
    report = probe_submission(args.assignment, args.notebook.resolve(), args.out_dir.resolve())
    print(f"probe errors: {len(report['probe_errors'])}, cell errors: {len(report['cell_errors'])}")


if __name__ == "__main__":
    main()
