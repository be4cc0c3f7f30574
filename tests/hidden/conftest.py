"""Fixtures of the hidden checks: one submission's probe data, log and notebook."""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
import numpy as np
import pytest

from course.checks import checks_for
from course.grading.submission_log import read_log


def pytest_generate_tests(metafunc):
    if "check_id" in metafunc.fixturenames:
        metafunc.parametrize("check_id", list(checks_for(metafunc.config.getoption("--assignment"))))


@pytest.fixture(scope="session")
def assignment(request) -> str:
    return request.config.getoption("--assignment")


@pytest.fixture(scope="session")
def submission(request) -> Path:
    return request.config.getoption("--submission")


@pytest.fixture(scope="session")
def probe_data(request) -> tuple[dict[str, dict[str, np.ndarray]], dict[str, str]]:
    """(outputs by check id and key, probe error by check id), as the probe step wrote them."""
    probe_dir: Path = request.config.getoption("--probe-dir")
    outputs: dict[str, dict[str, np.ndarray]] = {}
    with np.load(probe_dir / "outputs.npz", allow_pickle=False) as data:
        for name in data.files:
            check_id, key = name.split("/", 1)
            outputs.setdefault(check_id, {})[key] = data[name]
    report = json.loads((probe_dir / "probe_report.json").read_text())
    return outputs, report["probe_errors"]


@pytest.fixture(scope="session")
def submission_log(submission, assignment) -> dict:
    """The submission's log; tests that compare it are skipped when there is none (test_log_present fails)."""
    log, problem = read_log(submission, assignment)
    if problem:
        pytest.skip(problem)
    return log


@pytest.fixture(scope="session")
def answer_sources(submission, assignment) -> str:
    """The text of every code cell of the submitted notebook."""
    nb = nbformat.read(submission / f"{assignment}.ipynb", as_version=4)
    return "\n".join(cell.source for cell in nb.cells if cell.cell_type == "code")
