"""Grading a class: one submission's steps (grade_one: validate, probe in the jail, judge, nbgrader) and its result
record (record), the batch that grades a class locally or on a Dask cluster (batch, task, cluster), and what is made
of the class's records (final_grades, class_report, similarity, canvas)."""
