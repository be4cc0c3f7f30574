"""Release assignments: nbgrader generates release/<assignment>/ from source/ and records it in the gradebook.

    python -m course.release [ASSIGNMENT ...]      (default: every assignment)

The gradebook is backed up first (a release updates its record of the notebook's cells).
"""

from __future__ import annotations

import argparse
import subprocess
import sys

from course import paths
from course.grading import gradebook
from course.grading.nbgrader_cli import nbgrader_command
from course.grading.sandbox import grading_env


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignments", nargs="*", help="default: all")
    assignments = paths.select_assignments(parser.parse_args().assignments)
    gradebook.backup("release")
    for assignment in assignments:
        result = subprocess.run(nbgrader_command("generate_assignment", assignment, "--force"), cwd=paths.ROOT,
                                env=grading_env())
        if result.returncode:
            sys.exit(f"nbgrader could not release {assignment}")
        print(f"released {paths.release_dir(assignment)}")


if __name__ == "__main__":
    main()
