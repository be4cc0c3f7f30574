"""Course machinery: build notebooks, probe and judge submissions, grade a class."""

import os

# What the course's commands write (students' work, grades, records, the hub's state) is its instructor's alone:
# when the course is served on a hub, the students' accounts share this machine. (Where students must read something,
# in the exchange or their configuration, the command says so with its own permissions.)
os.umask(0o077)
