"""Shared pytest set-up. tests/hidden/ judges one submission and runs only when given one."""

from pathlib import Path


def pytest_addoption(parser):
    group = parser.getgroup("course", "judging one submission (tests/hidden)")
    group.addoption("--assignment", default="transformer_fundamentals", help="the assignment being judged")
    group.addoption("--submission", type=Path, help="the student's submitted folder (notebook, submission_log.json)")
    group.addoption("--probe-dir", type=Path, help="the folder with outputs.npz and probe_report.json of that submission")


def pytest_ignore_collect(collection_path, config):
    if collection_path.name == "hidden" and config.getoption("--probe-dir") is None:
        return True
    return None
