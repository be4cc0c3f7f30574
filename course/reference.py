"""Build an assignment's reference data: the instructor solution's probe outputs.

    python -m course.reference [ASSIGNMENT ...]      (default: every assignment)

writes assignments/<assignment>/reference.npz. tests/test_assignments.py
checks that the committed file matches a fresh run of the solution.
"""

from __future__ import annotations

import argparse
import io

import numpy as np

from course import paths
from course.probe_runner import execute_program, load_probes, run_probes, solution_program


def solution_outputs(assignment: str) -> dict[str, np.ndarray]:
    """Every probe's outputs on the instructor solution, keyed 'check_id/output'."""
    ns, errors = execute_program(solution_program(assignment), paths.source_dir(assignment))
    if errors:
        raise RuntimeError(f"the instructor solution failed to run: {errors}")
    outputs, probe_errors = run_probes(load_probes(assignment), ns)
    if probe_errors:
        raise RuntimeError(f"probes failed on the instructor solution: {probe_errors}")
    return {f"{check_id}/{key}": value for check_id, data in outputs.items() for key, value in data.items()}


def to_bytes(arrays: dict[str, np.ndarray]) -> bytes:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **dict(sorted(arrays.items())))
    return buffer.getvalue()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="default: all")
    for assignment in paths.select_assignments(parser.parse_args().assignments):
        arrays = solution_outputs(assignment)
        paths.reference_file(assignment).write_bytes(to_bytes(arrays))
        print(f"wrote {len(arrays)} reference arrays to {paths.reference_file(assignment)}")


if __name__ == "__main__":
    main()
