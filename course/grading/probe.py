"""Probe one submission: run its answer cells and every probe, save plain data.

The grader prepares a folder outside the sandbox (`prepare`): the program to
run (the instructor's given definition cells and the student's answer
cells, in notebook order) and a copy of the instructor's probe module. Then,
inside the sandbox, where source/ and the checks do not exist:

    python -m course.grading.probe FOLDER

runs the program and every probe and writes FOLDER/outputs.npz (arrays keyed
'check_id/output') and FOLDER/probe_report.json (errors by cell and probe).
The judge reads those files in a process the student's code never ran in.
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import nbformat
import numpy as np

from course import paths
from course.probes import execute_program, graded_program, load_module, quiet
from course.reference import to_bytes

PROGRAM, PROBES, OUTPUTS, REPORT = "program.json", "probes.py", "outputs.npz", "probe_report.json"


def prepare(assignment: str, notebook: Path, folder: Path) -> None:
    """Write the program and the probe module the sandboxed run needs into an empty `folder`."""
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    program = graded_program(assignment, nbformat.read(notebook, as_version=4))
    (folder / PROGRAM).write_text(json.dumps(program))
    shutil.copyfile(paths.probes_file(assignment), folder / PROBES)


def probe_folder(folder: Path) -> dict:
    """Run the prepared program and all probes; write outputs.npz and probe_report.json."""
    program = [tuple(cell) for cell in json.loads((folder / PROGRAM).read_text())]
    ns, cell_errors = execute_program(program, folder)
    with quiet():
        outputs, probe_errors = load_module(folder / PROBES).run_all(ns)
    arrays = {}
    for check_id, data in outputs.items():
        values = {f"{check_id}/{key}": np.asarray(value) for key, value in data.items()}
        if any(v.dtype == object for v in values.values()):  # would need pickle to load: refuse
            probe_errors[check_id] = "TypeError: the piece returned values that are not numbers or text"
        else:
            arrays.update(values)
    (folder / OUTPUTS).write_bytes(to_bytes(arrays))
    report = {"cell_errors": cell_errors, "probe_errors": probe_errors}
    (folder / REPORT).write_text(json.dumps(report, indent=1))
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path, help="a folder made by prepare()")
    report = probe_folder(parser.parse_args().folder.resolve())
    print(f"probe errors: {len(report['probe_errors'])}, cell errors: {len(report['cell_errors'])}")


if __name__ == "__main__":
    main()
