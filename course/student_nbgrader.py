"""nbgrader as students use it: Validate that tells the truth, and Submit that keeps a submission private.

The course's nbgrader_config.py uses this module, and `make hub` copies this file into the students' Jupyter
configuration, whose nbgrader_config.py loads it the same way (students' servers cannot read the course's package).
It imports nothing of the course.

Validate: nbgrader checks only the graded test cells, and the course's hold only a comment (the grader runs its
checks outside the notebook), so a notebook of stubs would pass. With `Validator.validate_all`, every code cell that
raises fails validation: a stub's NotImplementedError, an error, a visible test's failed assertion, each named with
its cell and message. What a cell writes to stderr (progress bars, warnings) would fail it too: validation drops it
(keep_errors_only, after nbgrader's own hook on each executed cell, which nbgrader does not let configuration
replace), and only there. No hidden check runs: there is none in the notebook.

Submit: nbgrader makes a submission's folder writable by every account and its files readable by every account,
hidden only by a random name. PrivateSubmit lets into it only the student and the instructor's group, which the
exchange's inbound folder passes on to it (course.hub.exchange.GroupInboundRelease).
"""

import os

from nbgrader.exchange.default.submit import ExchangeSubmit
from nbgrader.preprocessors import Execute

NBGRADERS_CELL_HOOK = Execute.on_cell_executed


def keep_errors_only(cell) -> None:
    """While nbgrader validates, drop what an executed cell wrote to stderr, so that only errors fail it."""
    if os.environ.get("NBGRADER_EXECUTION") == "validate":
        cell.outputs = [o for o in cell.outputs if not (o.get("output_type") == "stream" and o.get("name") == "stderr")]


def on_cell_executed(self, **kwargs) -> None:
    """nbgrader's hook after each executed cell, then keep_errors_only."""
    NBGRADERS_CELL_HOOK(self, **kwargs)
    keep_errors_only(kwargs["cell"])


def configure(c) -> None:
    """The students' side of the course's nbgrader configuration `c`."""
    c.Validator.validate_all = True
    Execute.on_cell_executed = on_cell_executed
    c.ExchangeFactory.submit = PrivateSubmit


class PrivateSubmit(ExchangeSubmit):
    def copy_files(self):
        super().copy_files()
        # The submission's folder has the instructor's group (inbound's setgid passed it on) and lets in the student
        # and that group only (0770), which may also remove it. Its files may be read by any account that gets in:
        # nbgrader writes its timestamp and secret after copying the folder's mode over, so they have the student's
        # own group.
        self.set_perms(os.path.join(self.inbound_path, self.assignment_filename), fileperms=0o644, dirperms=0o770)
