"""The course's Unix accounts: one per student of the roster, each marked as the course's by a prefix.

The roster (roster.csv at the repository's root) has nbgrader's student columns, id, first_name, last_name and
email, so that `nbgrader db student import` reads it too. A student's Unix account, hub user and nbgrader student id
are one name, `account_name(id)`: nbgrader's exchange names a submission by the account that made it. Every account
is in the course's group, which is how `make hub-clean` finds exactly the accounts the course created.
"""

from __future__ import annotations

import csv
import grp
import os
import pwd
import subprocess
from dataclasses import dataclass
from pathlib import Path

PREFIX = os.environ.get("COURSE_HUB_PREFIX", "crs-")  # tests use their own, so they never touch a real course's
GROUP = f"{PREFIX}students"


@dataclass(frozen=True)
class Student:
    """One row of the roster."""

    id: str
    first_name: str
    last_name: str
    email: str

    @property
    def account(self) -> str:
        return account_name(self.id)


def account_name(student_id: str) -> str:
    return f"{PREFIX}{student_id}"


def read_roster(path: Path) -> list[Student]:
    """The students of a roster CSV (columns id, first_name, last_name, email), in its order."""
    with path.open(newline="") as f:
        students = [Student(**{k: row[k].strip() for k in ("id", "first_name", "last_name", "email")})
                    for row in csv.DictReader(f)]
    bad = [s.id for s in students if not s.id.isascii() or not s.id.replace("-", "").isalnum() or not s.id.islower()]
    if bad:
        raise ValueError(f"{path}: student ids must be lower-case letters, digits and '-' (a Unix account name): {bad}")
    return students


def course_accounts() -> list[str]:
    """The accounts of the course's group on this machine."""
    try:
        gid = grp.getgrnam(GROUP).gr_gid
    except KeyError:
        return []
    return sorted(p.pw_name for p in pwd.getpwall() if p.pw_gid == gid)


def create_account(name: str) -> None:
    """A Unix account `name` in the course's group, with a home only it can read (useradd's default may be 0755)."""
    if not _exists_group():
        subprocess.run(["groupadd", GROUP], check=True)
    if name not in course_accounts():
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--gid", GROUP,
                        "--comment", "course account (make hub)", name], check=True)
    os.chmod(pwd.getpwnam(name).pw_dir, 0o700)


def remove_account(name: str) -> None:
    """Stop every process of a course account, then remove it and its home."""
    if name not in course_accounts():
        raise ValueError(f"{name} is not one of the course's accounts")
    subprocess.run(["pkill", "--signal", "KILL", "--uid", name], check=False)
    subprocess.run(["userdel", "--remove", name], check=False, capture_output=True)


def remove_group() -> None:
    if _exists_group() and not course_accounts():
        subprocess.run(["groupdel", GROUP], check=True)


def _exists_group() -> bool:
    try:
        grp.getgrnam(GROUP)
        return True
    except KeyError:
        return False
