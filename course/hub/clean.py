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
from course.hub.serve import CONFIG_FILE, HUB, STATE, hub_processes
from course.permissions import give_to_root, remove_owned

# Where any account may leave files (a student's own server has a /tmp and /dev/shm of its own, but a process the
# account ran outside it would not).
SHARED_TEMPORARY = (Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"))


def stop_running_hub() -> None:
    """Stop everything the course's hub started, whatever happened before (a pid file removed, a second make hub):
    SIGTERM to the hub (it stops its servers and its proxy), then SIGKILL to whatever of it is left."""
    if not (running := hub_processes()):
        return
    for pid in running:
        if _runs_hub(pid):
            _signal(pid, signal.SIGTERM)
    for _ in range(120):
        if not hub_processes():
            break
        time.sleep(0.25)
    for pid in hub_processes():
        _signal(pid, signal.SIGKILL)
    (STATE / "hub.pid").unlink(missing_ok=True)
    print(f"stopped the hub and the {len(running)} processes it started")


def _runs_hub(pid: int) -> bool:
    try:
        return str(CONFIG_FILE).encode() in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def _signal(pid: int, signal_number: int) -> None:
    try:
        os.kill(pid, signal_number)
    except ProcessLookupError:
        pass


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
    try:
        for shared in SHARED_TEMPORARY:
            if gone := remove_owned(shared, removed):
                print(f"removed {gone} entries of the removed accounts in {shared}")
        if reclaimed := give_to_root(paths.EXCHANGE, removed):
            print(f"gave root {reclaimed} entries of the removed accounts in the exchange (their submissions not yet "
                  "collected are refused by collect from now on: no account made them)")
    except RecursionError:
        sys.exit(f"a folder in {paths.EXCHANGE} or a temporary folder is nested too deep to walk (an account made it "
                 "so): find it (find <folder> -mindepth 200 -type d | head) and remove it with rm -rf, then run "
                 "make hub-clean again")
    accounts.remove_group()
    if HUB.exists():
        shutil.rmtree(HUB)
        print(f"removed {HUB}")
    print(f"kept submitted/, {paths.GRADEBOOK.name}, backups/ and the exchange ({paths.EXCHANGE})")


if __name__ == "__main__":
    main()
