"""The instructor's side of nbgrader's exchange, for a course served by `make hub`.

    python -m course.hub.exchange release ASSIGNMENT    (make hub-release: the release folder into the exchange)
    python -m course.hub.exchange collect ASSIGNMENT    (make collect: the newest submission of each student into submitted/)
    python -m course.hub.exchange feedback ASSIGNMENT   (make return-feedback: feedback/ into the exchange)

Each is nbgrader's own command on the course directory, with the course's three changes to nbgrader's exchange
(nbgrader_config.py names them, so formgrader's buttons do the same): a release gives the inbound folder the
instructor's group, which students' submissions then carry (their servers keep them from other students:
course.student_nbgrader); collect refuses a submission made by another account than the student it names;
released feedback belongs to its student alone.
"""

from __future__ import annotations

import argparse
import glob
import os
import pwd
import subprocess
import sys

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import notebook_hash

from course import paths

COMMANDS = {"release": "release_assignment", "collect": "collect", "feedback": "release_feedback"}
FORGED = "\0refused:"  # the mark of a submission that names another student than the account that made it


class GroupInboundRelease(ExchangeReleaseAssignment):
    """nbgrader's release, then the inbound folder passes the instructor's group on to what students create in it
    (setgid): a submission is then readable by its student and the instructor's group, not by other students."""

    def copy_files(self):
        super().copy_files()
        os.chown(self.inbound_path, -1, os.getgid())
        os.chmod(self.inbound_path, 0o2733)  # others may create, not list; the group passes on


class PrivateFeedbackRelease(ExchangeReleaseFeedback):
    """nbgrader's release of feedback, then each student's file belongs to that student alone (nbgrader leaves it
    readable by anyone who learns its name). Only root can give a file away: otherwise the files stay as nbgrader
    made them."""

    def copy_files(self):
        super().copy_files()
        if os.geteuid() != 0:
            return
        for html in glob.glob(os.path.join(self.src_path, "*.html")):
            folder = os.path.dirname(html)
            student = os.path.basename(os.path.dirname(folder))
            with open(os.path.join(folder, "submission_secret.txt")) as f:
                checksum = notebook_hash(secret=f.read(), notebook_id=os.path.splitext(os.path.basename(html))[0])
            released = os.path.join(self.dest_path, f"{checksum}.html")
            try:
                os.chown(released, pwd.getpwnam(student).pw_uid, -1)
            except KeyError:
                continue  # no account of that name on this machine: nobody can fetch it here
            os.chmod(released, 0o600)


class OwnerCheckedCollect(ExchangeCollect):
    """nbgrader's collect, where a submission counts only if the Unix account that made it is the student it names:
    nbgrader's own collect warns and takes it, so one student could submit as another (`nbgrader submit --student`)."""

    def _owned(self, record: dict) -> bool:
        try:
            made_by = pwd.getpwuid(os.stat(os.path.join(self.inbound_path, record["filename"])).st_uid).pw_name
        except (KeyError, OSError):
            return False
        return made_by == record["username"]

    def _path_to_record(self, path):
        """nbgrader's record of a submission; one another account made is refused, and said so (it is set apart
        under a name no student has, so that the student's own submissions are still collected)."""
        record = super()._path_to_record(path)
        if not self._owned(record):
            self.log.error("Refused %s: it names %s but another account made it", record["filename"], record["username"])
            record["username"] = FORGED + record["username"]
        return record

    def init_src(self):
        super().init_src()
        self.src_records = [r for r in self.src_records if not r["username"].startswith(FORGED)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=COMMANDS)
    parser.add_argument("assignment")
    args = parser.parse_args()
    os.chdir(paths.ROOT)  # nbgrader_config.py
    command = [sys.executable, "-m", "course.grading.nbgrader_cli", COMMANDS[args.command], args.assignment]
    if args.command == "release":
        command.append("--force")  # a release folder edited after the first release replaces it
    if args.command == "collect":
        command.append("--update")  # a student's newer submission replaces the one collected before
    sys.exit(subprocess.run(command).returncode)


if __name__ == "__main__":
    main()
