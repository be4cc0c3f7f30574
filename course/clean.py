"""Remove what grading runs built, saying what goes and what stays.

    python -m course.clean       (make clean)

Removed: build/ (scratch, records, Jupyter state), autograded/, feedback/ and
grades/: `make autograde` and `make grades` make them again. Kept: submitted/
(students' work), gradebook.db (the instructor's hand grades) and backups/;
the gradebook is backed up first all the same.
"""

from __future__ import annotations

import shutil

from course import paths
from course.grading import gradebook

GENERATED = ("autograded", "feedback", "grades")
KEPT = ("submitted", paths.GRADEBOOK.name, "backups")


def main() -> None:
    copy = gradebook.backup("clean")
    if copy:
        print(f"backed up the gradebook to {copy}")
    for folder in (paths.BUILD, *(paths.COURSE / name for name in GENERATED)):
        if folder.exists():
            shutil.rmtree(folder)
            print(f"removed {folder}")
    print(f"kept {', '.join(KEPT)} (students' work and hand grades)")


if __name__ == "__main__":
    main()
