"""Course machinery: build notebooks, probe and judge submissions, grade a class."""

import atexit
import os

# What the course's commands write (students' work, grades, records, the hub's state) is its instructor's alone:
# when the course is served on a hub, the students' accounts share this machine. (Where students must read something,
# in the exchange or their configuration, the command says so with its own permissions.)
os.umask(0o077)


def _hand_back() -> None:
    from course.hub.owner import hand_back  # only where root ran a command, and only as it ends

    hand_back()


# A command root runs on a course that another account owns (a hub's course: course.hub.owner) leaves that account
# what it made there.
if os.geteuid() == 0:
    atexit.register(_hand_back)
