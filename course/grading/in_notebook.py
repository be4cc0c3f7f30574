"""The hidden test cells' entry point: run one check inside the student's kernel.

nbgrader scores a test cell 0 if it raises or writes to stderr, so the probe
runs quietly and only the verdict's message is shown.
"""

from course.checks import verdict
from course.probes import run_one


def grade(assignment: str, check_id: str, namespace: dict) -> None:
    """Probe the notebook's pieces for `check_id`, judge, and raise AssertionError if it fails."""
    __tracebackhide__ = True
    outputs, error = run_one(assignment, check_id, namespace)
    result = verdict(assignment, check_id, outputs, error)
    if not result.passed:
        raise AssertionError(result.message)
    print(result.message)
