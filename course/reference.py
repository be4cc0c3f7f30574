"""Build an assignment's reference data: the instructor solution's probe outputs.

    python -m course.reference transformer_fundamentals

writes course/checks/<assignment>.npz. tests/test_reference.py checks that
the committed file matches a fresh run of the solution.
"""

from __future__ import annotations

import argparse
import io

import nbformat
import numpy as np

from course import paths
from course.probes import execute_program, graded_program, load_probes, quiet


def solution_outputs(assignment: str) -> dict[str, np.ndarray]:
    """Every probe's outputs on the instructor solution, keyed 'check_id/output'."""
    source = nbformat.read(paths.source_notebook(assignment), as_version=4)
    ns, errors = execute_program(graded_program(assignment, source), paths.source_dir(assignment))
    if errors:
        raise RuntimeError(f"the instructor solution failed to run: {errors}")
    with quiet():
        outputs, probe_errors = load_probes(assignment).run_all(ns)
    if probe_errors:
        raise RuntimeError(f"probes failed on the instructor solution: {probe_errors}")
    return {f"{check_id}/{key}": value for check_id, data in outputs.items() for key, value in data.items()}


def to_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **dict(sorted(arrays.items())))
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", choices=paths.ASSIGNMENTS)
    args = parser.parse_args()
    arrays = solution_outputs(args.assignment)
    paths.reference_file(args.assignment).write_bytes(to_bytes(arrays))
    print(f"wrote {len(arrays)} reference arrays to {paths.reference_file(args.assignment).relative_to(paths.ROOT)}")


if __name__ == "__main__":
    main()
