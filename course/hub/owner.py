"""The course's owner: the Unix account that owns the course directory. On a hub, the instructor's JupyterLab
(formgrader) runs as it, so it must not be root: a script in a page the instructor opens, or a bug of the server,
would act as root.

    python -m course.hub.owner NAME      (make course-owner OWNER=NAME, as root)

creates the account NAME if there is none and gives it the course directory, but for what stays whose it is: the
venv (root's, which every account runs), and the build area's exchange (the students'), hub state and jail folders
(root's). The course's commands that need root (make hub, make autograde, make return-feedback) still run as root;
`hand_back`, run as each of them ends (course/__init__.py), gives the owner what they made in the course directory.
"""

from __future__ import annotations

import argparse
import os
import pwd
import subprocess
import sys
from pathlib import Path

from course import paths
from course.permissions import give


def kept_areas() -> list[Path]:
    """The folders of the course directory whose owners `give` leaves alone."""
    return [Path(sys.prefix), paths.EXCHANGE, paths.BUILD / "hub", paths.BUILD / "jail"]


def owner_of_course() -> pwd.struct_passwd | None:
    """The account that owns the course directory, or None where no account of this machine has its uid."""
    try:
        return pwd.getpwuid(paths.COURSE.stat().st_uid)
    except (KeyError, OSError):
        return None


def another_owner() -> os.stat_result | None:
    """The course directory's status where root runs this on a course another account owns (a hub's course), else
    None (the usual case off a hub: root owns the course)."""
    if os.geteuid() != 0:
        return None
    try:
        info = paths.COURSE.stat()
    except OSError:
        return None
    return info if info.st_uid != 0 else None


def hand_back() -> int:
    """Where root runs a course command on a course directory that another account owns: give that account what root
    made in it (walked by descriptor, no link followed), so that the owner's formgrader reads and writes it (the
    gradebook above all). The number of entries given."""
    if (info := another_owner()) is None:
        return 0
    return give(paths.COURSE, info.st_uid, info.st_gid, owners={0}, skip=kept_areas())


def give_to_owner(folder: Path) -> None:
    """`folder` (made by root, in a kept area) and all in it, the course owner's."""
    info = paths.COURSE.stat()
    give(folder, info.st_uid, info.st_gid)
    os.chown(folder, info.st_uid, info.st_gid)


def create_owner(name: str) -> pwd.struct_passwd:
    """The account `name`, made if missing (with a home only it reads), and its entry; refused if it is root's."""
    try:
        account = pwd.getpwnam(name)
    except KeyError:
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", "--comment", "the course's owner", name],
                       check=True)
        account = pwd.getpwnam(name)
        os.chmod(account.pw_dir, 0o700)
    if account.pw_uid == 0:
        sys.exit(f"{name} is root (uid 0): the course's owner must be an account of its own")
    return account


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="the owner's account (created if missing)")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("make course-owner creates an account and gives it the course directory: run it as root")
    account = create_owner(args.name)
    given = give(paths.COURSE, account.pw_uid, account.pw_gid, skip=kept_areas())
    os.chown(paths.COURSE, account.pw_uid, account.pw_gid)
    print(f"{args.name} (uid {account.pw_uid}) owns the course directory {paths.COURSE} ({given} entries given; the "
          "venv, the exchange and the build area's hub and jail folders stay whose they are). make hub runs the "
          f"instructor's JupyterLab as {args.name}.")


if __name__ == "__main__":
    main()
