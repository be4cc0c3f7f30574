"""Shared fixtures: the fixture course (a scratch course directory of the fixture assignment, released once per test
session), and a headless Chromium driven by selenium."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from course.grading import limits
from course.paths import assignments
from helpers import chromium, course_env, paths_of, released_course


def pytest_configure(config) -> None:
    """With one test worker per core (`make test` runs pytest-xdist), each worker computes on its share of the cores:
    two workers whose OpenMP threads each want both cores spin against each other and run many times slower (a
    notebook whose kernel trains on two threads while the other worker is busy: 2.8 times slower here). So the
    worker's own torch gets one thread, and the processes its tests start (kernels, probes, notebooks) get the
    worker's share through the thread variables, as the batch gives each of the notebooks it grades at once
    (course.grading.limits.thread_env); a test that needs them unset removes them. For the same reason each worker
    judges the fast path's notebooks in one process of its own, not two (course.measuring.grader_accuracy.fast_path_pool): a
    second would only compete for the worker's core, and build the probes' models and trained checks a second time."""
    if os.environ.get("PYTEST_XDIST_WORKER"):
        import torch

        torch.set_num_threads(1)
        os.environ.update(limits.thread_env(int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
        os.environ["COURSE_FAST_PATH_PROCESSES"] = "1"


ASSIGNMENTS = assignments()
PIPELINE = "tests/test_pipeline.py"
BY_ASSIGNMENT = ("tests/test_assignments.py", PIPELINE)  # modules whose groups are assignments


def worker_group(nodeid: str) -> str:
    """The group of a test that `make test`'s workers (pytest-xdist) keep together on one worker: its module (the
    module's tests share its fixtures), except in the modules parametrized by assignment, whose groups are its
    assignments (in the per-assignment suite a group shares the fast-path figures of its assignment's corpus,
    tests/helpers.every_set_figures), e.g.
    'tests/test_assignments.py::test_x[fresh-causal_language_model]' -> 'tests/test_assignments.py[causal_language_model]';
    and an assignment's own tests join its pipeline's group, whose graded solution they may read (the repository
    conftest's graded_solution, graded once per worker):
    'assignments/causal_language_model/tests/test_solution.py::test_x' -> 'tests/test_pipeline.py[causal_language_model]'."""
    module, _, test = nodeid.partition("::")
    if module.startswith("assignments/"):
        return f"{PIPELINE}[{module.split('/')[1]}]"
    if module.endswith(BY_ASSIGNMENT) and "[" in test:
        return f"{module}[{next(p for p in test[test.index('[') + 1:-1].split('-') if p in ASSIGNMENTS)}]"
    return module


# The slowest groups, slowest first, as measured (`--durations`): a worker free for a new group takes the first of these
# still waiting (longest first, so that no long group starts last while the other worker idles), then the others.
SLOWEST_GROUPS = ("tests/test_assignments.py[modern_gpt]", "tests/test_grading_end_to_end.py", "tests/test_hub.py",
                  "tests/test_pipeline.py[modern_gpt]", "tests/test_gradescope.py", "tests/test_cluster.py",
                  "tests/test_pipeline.py[transformer_fundamentals]", "tests/test_pipeline.py[causal_language_model]",
                  "tests/test_assignments.py[transformer_fundamentals]",
                  "tests/test_assignments.py[pretrained_attention]", "tests/test_pipeline.py[hand_designed_attention]",
                  "tests/test_formgrader.py", "tests/test_assignments.py[causal_language_model]", "tests/test_sandbox.py",
                  "tests/test_assignments.py[hand_designed_attention]", "tests/test_check_items.py")


def pytest_xdist_make_scheduler(config, log):
    """Schedule `make test`'s workers by worker_group, the slowest groups first. (pytest-xdist's own --dist loadgroup
    does not group on pytest 9, which names a test by its `_id`: xdist's renaming of `_nodeid` to add the group is
    lost, and every test of a module would set up the module's fixtures again on each worker.)"""
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkerGroup(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return worker_group(nodeid)

        def _assign_work_unit(self, node) -> None:
            waiting = [group for group in SLOWEST_GROUPS if group in self.workqueue]
            if waiting:
                self.workqueue.move_to_end(waiting[0], last=False)
            super()._assign_work_unit(node)

    return ByWorkerGroup(config, log)


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
    with chromium() as driver:
        driver.implicitly_wait(20)
        yield driver
