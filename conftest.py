"""What the course's tests (tests/) and the assignments' own tests (assignments/<name>/tests/) share."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from helpers import graded_course


@pytest.fixture(scope="session")
def graded_solution(tmp_path_factory) -> Callable[[str], Path]:
    """assignment -> a scratch course directory where its solution was graded as a class is (helpers.graded_course),
    once per test worker: tests/test_pipeline.py checks the grades, and an assignment's own tests may read what its
    notebook computed in nbgrader's sandboxed kernel (course.grading.grade_one.kernel_folder)."""
    graded: dict[str, Path] = {}

    def course(assignment: str) -> Path:
        if assignment not in graded:
            graded[assignment] = graded_course(tmp_path_factory.mktemp(f"graded-{assignment}"), assignment)
        return graded[assignment]

    return course
