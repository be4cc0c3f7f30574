"""Course machinery: build notebooks, probe and judge submissions, grade a class."""

import os
import sys

# What the course's commands write (students' work, grades, records, the hub's state) is its instructor's alone:
# when the course is served on a hub, the students' accounts share this machine. (Where students must read something,
# in the exchange or their configuration, the command says so with its own permissions.)
os.umask(0o077)

# nbformat validates notebooks with jsonschema, which imports rfc3987_syntax when it is installed (jupyter-events
# wants it) only to check "iri" string formats that no notebook schema uses; building that package's grammar costs
# about 0.8 s in every process that reads a notebook, five per graded submission. Our processes do without it
# (nbgrader's too: course.grading.nbgrader_cli).
sys.modules.setdefault("rfc3987_syntax", None)
