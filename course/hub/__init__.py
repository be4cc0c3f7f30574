"""The course on a JupyterHub on this machine (`make hub`): the roster's students as real Unix accounts, nbgrader's
exchange in the build area, the instructor's server with formgrader and the students' with the Assignments tab."""
