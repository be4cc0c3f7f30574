"""Hidden checks of one submission: each graded piece, then its submission log.

Run by the grader for each submission, never inside the student's kernel:

    pytest tests/hidden --submission submitted/S/A --probe-dir build/grading/A/S

test_check[<id>] decides the points of the check <id> (its nbgrader cell's
points); the log tests raise flags for the instructor and cost no points.
"""

import numpy as np
import pytest

from course.checks import mismatch, verdict
from course.grading.submission_log import read_log

LOG_TOLERANCE = 1e-4


def test_check(check_id, assignment, probe_data):
    outputs, errors = probe_data
    result = verdict(assignment, check_id, outputs.get(check_id), errors.get(check_id))
    if not result.passed:
        pytest.fail(result.message, pytrace=False)


def test_log_present(submission, assignment):
    """The notebook's last cell wrote a readable log for this assignment."""
    _, problem = read_log(submission, assignment)
    if problem:
        pytest.fail(problem, pytrace=False)


def test_log_matches_fresh_run(submission_log, probe_data):
    """Every value in the log is what the submitted code produces now."""
    outputs, _ = probe_data
    differing = []
    for check_id, fresh in outputs.items():
        logged = submission_log["probes"].get(check_id)
        if logged is None:
            differing.append(f"{check_id} (missing from the log)")
            continue
        for key, value in fresh.items():
            if key not in logged or mismatch(np.asarray(logged[key]), value, LOG_TOLERANCE):
                differing.append(f"{check_id}/{key}")
    if differing:
        pytest.fail("submission_log.json does not match what the submitted code computes "
                    f"({', '.join(differing[:5])}{', ...' if len(differing) > 5 else ''}): "
                    "re-run the whole notebook (Restart & Run All) before submitting.", pytrace=False)


def test_log_sources_are_in_notebook(submission_log, answer_sources):
    """The code the log was written from is the code in the submitted notebook."""
    normalise = lambda text: "\n".join(line.strip() for line in text.splitlines() if line.strip())
    notebook = normalise(answer_sources)
    missing = [name for name, source in submission_log.get("sources", {}).items()
               if source and normalise(source) not in notebook]
    if missing:
        pytest.fail(f"the log was written by code that is not in the notebook: {', '.join(missing)}; "
                    "re-run the whole notebook before submitting.", pytrace=False)
