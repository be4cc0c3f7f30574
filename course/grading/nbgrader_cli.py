"""nbgrader's command line, started from the course package: `python -m course.grading.nbgrader_cli autograde ...`.

The same application as the venv's `nbgrader` script, but `course` (course/__init__.py) is imported
before nbgrader, so nbgrader's own processes get the course's import-time savings too: the script
builds rfc3987_syntax's grammars first, about a second in each run (two runs per graded submission,
one per released assignment).
"""

from __future__ import annotations

import sys

from nbgrader.apps.nbgraderapp import main

if __name__ == "__main__":
    sys.exit(main())
