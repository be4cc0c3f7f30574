"""The fixture course: a scratch course directory of the fixture assignment, released once per test session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from helpers import course_env, paths_of, released_course


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
