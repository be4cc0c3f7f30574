"""Remove what grading runs built, saying what goes and what stays.

    python -m course.clean       (make clean)

Removed: build/ (scratch, records, Jupyter state) but for nbgrader's exchange
and the hub's state (`make hub-clean` removes that),
autograded/, feedback/ and grades/: `make autograde` and `make grades` make them
again. Kept: submitted/ (students' work), gradebook.db (the instructor's hand
grades), backups/ and the exchange (build/exchange: what students submitted
on the hub and not yet collected); the gradebook is backed up first all the same.
"""

from __future__ import annotations

import shutil

from course import paths
from course.grading import gradebook

GENERATED = ("autograded", "feedback", "grades")
KEPT = ("submitted", paths.GRADEBOOK.name, "backups", "the exchange")


def main() -> None:
    copy = gradebook.backup("clean")
    if copy:
        print(f"backed up the gradebook to {copy}")
    kept_in_build = (paths.EXCHANGE, paths.BUILD / "hub")
    built = [p for p in paths.BUILD.iterdir() if p not in kept_in_build] if paths.BUILD.exists() else []
    for path in (*built, *(paths.COURSE / name for name in GENERATED)):
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            path.unlink()
        else:
            continue
        print(f"removed {path}")
    print(f"kept {', '.join(KEPT)} (students' work and hand grades)")


if __name__ == "__main__":
    main()
