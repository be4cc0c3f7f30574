"""nbgrader's command line, started from the course package: `python -m course.grading.nbgrader_cli autograde ...`.

The same application as the venv's `nbgrader` script, with one addition: several commands joined by
`--then` run one after the other in this one process (grading runs autograde, then feedback), sparing a
second start of Python and nbgrader; a command that fails exits, and the commands after it do not run.
"""

from __future__ import annotations

import sys

THEN = "--then"


def nbgrader_command(*args: str, then: tuple[str, ...] = ()) -> list[str]:
    """The venv's nbgrader with `args`, and then, in the same process, with `then` if it succeeded (started through
    this module)."""
    return [sys.executable, "-m", "course.grading.nbgrader_cli", *args, "--log-level=WARN",
            *([THEN, *then, "--log-level=WARN"] if then else [])]


def commands(argv: list[str]) -> list[list[str]]:
    """`argv` split at each THEN."""
    found = [[]]
    for arg in argv:
        if arg == THEN:
            found.append([])
        else:
            found[-1].append(arg)
    return found


def main(argv: list[str]) -> None:
    from nbgrader.apps.nbgraderapp import NbGraderApp  # here: the grader imports THEN without nbgrader

    for command in commands(argv):
        NbGraderApp.launch_instance(command)
        NbGraderApp.instance().reset()  # the next command gets a new application


if __name__ == "__main__":
    main(sys.argv[1:])
