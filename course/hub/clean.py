"""Undo `make hub`: stop the hub if it runs, remove the course's accounts (their homes and processes, and what they
left in the machine's shared temporary folders) and the hub's state and configuration. Kept: submitted/, the
gradebook and its backups, and nbgrader's exchange (submissions not yet collected, feedback not yet fetched), where
what the removed accounts owned is given to root: a uid is never handed to a new account while files of its last
owner remain its.

    python -m course.hub.clean      (make hub-clean, as root)
"""

from __future__ import annotations

import os
import pwd
import shutil
import signal
import sys
import time
from pathlib import Path

from course import paths
from course.hub import accounts
from course.hub.serve import HUB, STATE
from course.permissions import give_to_root, remove_owned

# Where any account may leave files (a student's own server has a /tmp and /dev/shm of its own, but a process the
# account ran outside it would not).
SHARED_TEMPORARY = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))


def stop_running_hub() -> None:
    """SIGTERM to a hub that `make hub` started and that still runs (it stops its servers and proxy)."""
    pid_file = STATE / "hub.pid"
    if not pid_file.exists():
        return
    pid = int(pid_file.read_text())
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    for _ in range(120):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            print(f"stopped the hub (pid {pid})")
            return
        time.sleep(0.25)
    os.killpg(pid, signal.SIGKILL)


def main() -> None:
    if os.geteuid() != 0:
        sys.exit("make hub-clean removes Unix accounts: run it as root")
    stop_running_hub()
    removed = set()
    for name in accounts.course_accounts():
        removed.add(pwd.getpwnam(name).pw_uid)
        accounts.remove_account(name)
        print(f"removed the account {name} and its home")
    # an account made later with one of their uids must find nothing of theirs
    for shared in SHARED_TEMPORARY:
        if gone := remove_owned(shared, removed):
            print(f"removed {gone} entries of the removed accounts in {shared}")
    if reclaimed := give_to_root(paths.EXCHANGE, removed):
        print(f"gave root {reclaimed} entries of the removed accounts in the exchange (their submissions not yet "
              "collected are refused by collect from now on: no account made them)")
    accounts.remove_group()
    if HUB.exists():
        shutil.rmtree(HUB)
        print(f"removed {HUB}")
    print(f"kept submitted/, {paths.GRADEBOOK.name}, backups/ and the exchange ({paths.EXCHANGE})")


if __name__ == "__main__":
    main()
