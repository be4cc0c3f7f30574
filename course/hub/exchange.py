"""The instructor's side of nbgrader's exchange, for a course served by `make hub`.

    python -m course.hub.exchange release ASSIGNMENT    (make hub-release: the release folder into the exchange)
    python -m course.hub.exchange collect ASSIGNMENT    (make collect: the newest submission of each student into submitted/)
    python -m course.hub.exchange feedback ASSIGNMENT   (make return-feedback: feedback/ into the exchange)

Each is nbgrader's own command on the course directory, with the course's three changes to nbgrader's exchange
(nbgrader_config.py names them, so formgrader's buttons do the same): a release gives the inbound folder the
instructor's group, which students' submissions then carry (their servers keep them from other students:
course.student_nbgrader); collect refuses a submission made by another account than the student it names;
released feedback belongs to its student alone (where root runs make return-feedback). Run as root on a course another
account owns (course.hub.owner), nbgrader's command runs as that account.
"""

from __future__ import annotations

import argparse
import datetime
import os
import pwd
import re
import stat
import subprocess
import sys
from pathlib import Path

from nbgrader.exchange.default.collect import ExchangeCollect
from nbgrader.exchange.default.release_assignment import ExchangeReleaseAssignment
from nbgrader.exchange.default.release_feedback import ExchangeReleaseFeedback
from nbgrader.utils import notebook_hash

from course import paths, untrusted
from course.grading import gradebook, limits
from course.hub import owner
from course.untrusted import copy_owned_tree

COMMANDS = {"release": "release_assignment", "collect": "collect", "feedback": "release_feedback"}
FORGED = "\0refused:"  # the mark of a submission that names another student than the account that made it


class GroupInboundRelease(ExchangeReleaseAssignment):
    """nbgrader's release, then the inbound folder passes the instructor's group (the course directory's) on to what
    students create in it (setgid): a submission is then readable by its student and the instructor's group, not by
    other students."""

    def copy_files(self):
        super().copy_files()
        os.chown(self.inbound_path, -1, paths.COURSE.stat().st_gid)
        os.chmod(self.inbound_path, 0o3733)  # others may create, not list or rename others'; the group passes on


class SkippingFeedbackRelease(ExchangeReleaseFeedback):
    """nbgrader's release of feedback, but for the students whose submission was not made by nbgrader's submit
    (nbgrader would stop on the first, and return nobody's feedback): they are skipped, and said so."""

    def incomplete(self) -> list[str]:
        """The students whose feedback folder lacks the submission's timestamp or a secret as nbgrader's submit
        writes them (a student may have changed theirs in the exchange after submitting)."""
        return [feedback.parent.parent.name for feedback in feedback_files(self.coursedir.assignment_id)
                if not (has_timestamp(feedback.parent) and secret_of(feedback.parent))]

    def copy_files(self):
        skipped = self.incomplete()
        for student in skipped:
            self.log.error("Not returned to %s: their submission has no timestamp.txt or submission_secret.txt as "
                           "nbgrader's submit writes them (it was not made by nbgrader's submit, or changed after), so "
                           "the exchange cannot name their feedback; give it to them from %s", student,
                           paths.feedback_dir(student, self.coursedir.assignment_id))
        excluded = [s for s in (self.coursedir.student_id_exclude or "").split(",") if s]
        self.coursedir.student_id_exclude = ",".join(excluded + skipped)
        super().copy_files()


def feedback_files(assignment: str) -> list[Path]:
    """The feedback pages of `assignment` in the course directory (feedback/<student>/<assignment>/*.html)."""
    return sorted(paths.COURSE.glob(f"feedback/*/{assignment}/*.html"))


# What nbgrader's submit writes: a secret of secrets.token_hex(64), a timestamp of its own format.
SECRET = re.compile(r"[0-9a-f]{32,256}")
TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)?( [A-Z]{1,5})?")


def _written_by_submit(file: Path, form: re.Pattern) -> str | None:
    try:
        with open(file, "rb") as f:
            text = f.read(512).decode("ascii")
    except (OSError, UnicodeDecodeError):
        return None
    return text if form.fullmatch(text) else None


def secret_of(folder: Path) -> str | None:
    """The submission's secret in `folder` (its submission_secret.txt, as nbgrader's submit writes it), or None."""
    return _written_by_submit(folder / "submission_secret.txt", SECRET)


def has_timestamp(folder: Path) -> bool:
    """Whether `folder` has a timestamp.txt as nbgrader's submit writes one."""
    return _written_by_submit(folder / "timestamp.txt", TIMESTAMP) is not None


def give_feedback_to_students(assignment: str) -> None:
    """As root, after nbgrader's release of feedback: each student's page in the exchange becomes that student's
    alone (nbgrader leaves it readable by anyone who learns its name)."""
    released = paths.EXCHANGE / paths.COURSE_ID / "feedback"
    for feedback in feedback_files(assignment):
        secret = secret_of(feedback.parent)
        if secret is None:
            continue  # skipped by the release, and said so
        page = released / f"{notebook_hash(secret=secret, notebook_id=feedback.stem)}.html"
        try:
            student = pwd.getpwnam(feedback.parent.parent.name).pw_uid
        except KeyError:
            continue  # no account of that name on this machine: nobody can fetch it here
        try:
            os.lchown(page, student, -1)
            os.chmod(page, 0o600, follow_symlinks=False)
        except FileNotFoundError:
            pass


def course_folder_problem() -> str | None:
    """Why the course's folder in the exchange is not the course's own (a student made it, or a link, before the
    course did), or None: nbgrader would release into it, and classmates would fetch what that student planted."""
    folder = paths.EXCHANGE / paths.COURSE_ID
    try:
        info = os.lstat(folder)
    except FileNotFoundError:
        return None
    if stat.S_ISDIR(info.st_mode) and info.st_uid in (0, paths.COURSE.stat().st_uid):  # root's, or the owner's
        return None
    what = "a symbolic link" if stat.S_ISLNK(info.st_mode) else "a folder" if stat.S_ISDIR(info.st_mode) else "a file"
    return (f"{folder} is {what} of {made_by(str(folder))}, not the course's: an account made it before the course "
            f"did. Stop the hub, remove it (rm -rf '{folder}', after reading what is in it), and run make hub again, "
            "which makes the course's folder before any student can log in.")


def made_by(path: str) -> str:
    """The account that made `path` (not following a link), or what is known of it."""
    try:
        uid = os.lstat(path).st_uid
    except OSError:
        return "nobody (it is gone)"
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return f"uid {uid}, no account"


class OwnerCheckedCollect(ExchangeCollect):
    """nbgrader's collect, where a submission counts only if it is a folder that the Unix account it names made:
    nbgrader's own collect warns and takes it, so one student could submit as another (`nbgrader submit --student`).
    A folder whose name is not a submission's is skipped and said so; the rest of the class is collected. Only the
    student's own regular files are copied, by course.untrusted.copy_owned_tree (nbgrader's copy, as root,
    would follow a link to any file of the machine); what is left out is said, with whose it was."""

    def _owned(self, record: dict) -> bool:
        path = os.path.join(self.inbound_path, record["filename"])
        try:
            return stat.S_ISDIR(os.lstat(path).st_mode) and made_by(path) == record["username"]
        except OSError:
            return False

    def _path_to_record(self, path):
        """nbgrader's record of a submission; one another account made, or under a name that is not a submission's,
        is refused, and said so (it is set apart under a name no student has, so that the student's own submissions
        are still collected)."""
        try:
            record = super()._path_to_record(path)
        except Exception:  # dateutil's ParserError and OverflowError, or nbgrader's own failure on too few parts
            self.log.error("Skipped %s, made by %s: not the name of a submission (<student>+<assignment>+<time>)",
                           os.path.basename(path), made_by(path))
            return {"username": FORGED, "filename": os.path.basename(path), "timestamp": datetime.datetime.min}
        if not self._owned(record):
            self.log.error("Refused %s: it names %s but another account made it (%s), or it is not a folder",
                           record["filename"], record["username"], made_by(path))
            record["username"] = FORGED + record["username"]
        elif not os.access(path, os.R_OK | os.X_OK):
            self.log.error("Refused %s, made by %s: its owner made it unreadable to the instructor (an earlier "
                           "submission of theirs is collected instead, if there is one)", record["filename"],
                           made_by(path))
            record["username"] = FORGED + record["username"]
        return record

    def init_src(self):
        super().init_src()
        self.src_records = [r for r in self.src_records if not r["username"].startswith(FORGED)]

    def do_copy(self, src, dest, log=None):
        owner = os.lstat(src).st_uid
        try:
            skipped = copy_owned_tree(Path(src), Path(dest), owner, limits.SUBMISSION_MB * 2**20,
                                      tuple(self.coursedir.ignore))
        except Exception as error:  # changed since it was listed (gone, swapped, unreadable), or odd in a new way
            self.log.error("Not collected: %s, made by %s (%s)", os.path.basename(src), made_by(src),
                           getattr(error, "strerror", None) or error)
            return
        # nbgrader reads the timestamp of what it collected at every later collect: the one collect checked (the
        # folder's name), not a file the student could have written
        (Path(dest) / "timestamp.txt").write_text(os.path.basename(src).rsplit("+", 3)[2])  # as nbgrader reads names
        for entry in skipped:
            self.log.error("Left out of %s's submission: %s", made_by(src), untrusted.quoted(entry, 200))


def as_course_owner() -> dict:
    """subprocess's arguments that run a command as the course directory's owner, where root runs this on a course
    another account owns (nbgrader's exchange works only in folders its user owns); none otherwise."""
    if (info := owner.another_owner()) is None:
        return {}
    return {"user": info.st_uid, "group": info.st_gid, "extra_groups": [],
            "env": {**os.environ, "HOME": pwd.getpwuid(info.st_uid).pw_dir}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=COMMANDS)
    parser.add_argument("assignment")
    args = parser.parse_args()
    os.chdir(paths.ROOT)  # nbgrader_config.py
    if problem := course_folder_problem():
        sys.exit(problem)
    if args.command == "feedback" and not feedback_files(args.assignment):
        sys.exit(f"no feedback of {args.assignment} in {paths.COURSE / 'feedback'} to return: run make autograde "
                 f"ASSIGNMENT={args.assignment} first")
    if args.command == "release" and not gradebook.has_assignment(args.assignment):
        print(f"{args.assignment} is not in the gradebook yet: releasing it first (make release "
              f"ASSIGNMENT={args.assignment}), so that it can be graded")
        if subprocess.run([sys.executable, "-m", "course.release", args.assignment]).returncode:
            sys.exit(f"the release of {args.assignment} failed (above): nothing was put in the exchange")
    command = [sys.executable, "-m", "course.grading.nbgrader_cli", COMMANDS[args.command], args.assignment]
    if args.command == "release":
        command.append("--force")  # a release folder edited after the first release replaces it
    if args.command == "collect":
        command.append("--update")  # a student's newer submission replaces the one collected before
    done = subprocess.run(command, **as_course_owner()).returncode
    if args.command == "feedback" and os.geteuid() == 0:
        give_feedback_to_students(args.assignment)
    sys.exit(done)


if __name__ == "__main__":
    main()
