"""Gradescope's setup.sh installs the pinned requirements only when one is missing (course.gradescope.pins)."""

from __future__ import annotations

from course import paths
from course.gradescope.pins import missing, pins


def test_the_course_venv_holds_every_pin_of_requirements_txt():
    required = pins((paths.ROOT / "requirements.txt").read_text())
    assert "torch" in required and missing(required) == []


def test_a_pin_not_installed_or_installed_at_another_version_is_missing():
    installed = pins((paths.ROOT / "requirements.txt").read_text())["nbgrader"]
    assert missing({"nbgrader": installed, "no-such-package-here": "1.0", "jupyterhub": "0.0.1"}) == [
        "no-such-package-here==1.0", "jupyterhub==0.0.1"]


def test_comments_and_blank_lines_are_not_pins():
    assert pins("# a comment\n\ntorch==2.13.0  # the CPU build\n") == {"torch": "2.13.0"}
