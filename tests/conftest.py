"""Shared fixtures: the fixture course (a scratch course directory of the fixture assignment, released once per test
session), and a headless Chromium driven by selenium."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import CHROMEDRIVER, CHROMIUM, course_env, paths_of, released_course


def pytest_configure(config) -> None:
    """With one test worker per core (`make test` runs pytest-xdist), each worker's own torch computes on one thread:
    two workers whose OpenMP threads each want both cores spin against each other and run many times slower. (The
    processes tests start set their own threads, as grading does.)"""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import torch

        torch.set_num_threads(1)


@pytest.hookimpl(tryfirst=True)  # before pytest-xdist reads the groups
def pytest_collection_modifyitems(items) -> None:
    """Groups for `make test`'s workers (pytest-xdist --dist loadgroup): a test module's tests stay together (they
    share module fixtures), except the per-assignment suite, split by assignment (a group shares the fast-path
    figures of that assignment's corpus, tests/helpers.corpus_figures)."""
    if not items or not items[0].config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        assignment = getattr(item, "callspec", None) and item.callspec.params.get("assignment")
        group = f"assignment-{assignment}" if item.path.name == "test_assignments.py" else str(item.path)
        item.add_marker(pytest.mark.xdist_group(group))


@pytest.fixture(scope="session")
def fixture_release(tmp_path_factory) -> Path:
    """A course directory with the fixture assignment's source and release (nothing submitted)."""
    root = tmp_path_factory.mktemp("fixture_release")
    released_course(root, course_env(root))
    return root


@pytest.fixture(scope="module")
def on_fixture(fixture_release) -> Iterator[Path]:
    """Point this process's course.paths at the fixture release for one test module."""
    with paths_of(fixture_release):
        yield fixture_release


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    """A headless Chromium (selenium's WebDriver); tests that use it are marked `needs_browser`."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.implicitly_wait(20)
    try:
        yield driver
    finally:
        driver.quit()
