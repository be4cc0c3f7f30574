"""nbgrader's submit for the course's students: `make hub` copies this file into the students' Jupyter
configuration, whose nbgrader_config.py makes it their Submit (their servers cannot read the course's package).

nbgrader makes a submission's folder writable by every account and its files readable by every account, hidden
only by a random name. Here the submission keeps the instructor's group, which the exchange's inbound folder gives
it (course.hub.exchange.GroupInboundRelease), and nothing for other accounts.
"""

import os

from nbgrader.exchange.default.submit import ExchangeSubmit


class PrivateSubmit(ExchangeSubmit):
    def copy_files(self):
        super().copy_files()
        # folders: the student and the instructor's group, which may also remove them; files: read by the group
        self.set_perms(os.path.join(self.inbound_path, self.assignment_filename), fileperms=0o640, dirperms=0o2770)
