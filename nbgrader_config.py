"""nbgrader settings for this course. Paths come from the environment the Makefile sets up."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from course import paths  # noqa: E402 (one place for every path)
from course.grading import limits  # noqa: E402 (and for every limit)

c = get_config()  # noqa: F821 (provided by nbgrader)

c.CourseDirectory.root = str(paths.COURSE)
c.CourseDirectory.course_id = paths.COURSE_ID
c.CourseDirectory.db_url = paths.GRADEBOOK_URL
# Files that never belong in a release or a graded copy.
c.CourseDirectory.ignore = [".ipynb_checkpoints", "*.pyc", "__pycache__", "submission_log.json"]

# Release: stubs that fail loudly instead of returning None.
c.ClearSolutions.code_stub = {
    "python": '# YOUR CODE HERE\nraise NotImplementedError("Write your solution here, then re-run this cell.")'
}
c.ClearSolutions.text_stub = "YOUR ANSWER HERE"

# Grading: restore deleted or edited test cells and bound each cell's run time.
# (nbgrader already copies helper files such as the probe module from source/
# over the student's copies.)
c.OverwriteCells.add_missing_cells = True
# ...after mending what makes nbgrader give up on a whole notebook (stripped or duplicated metadata).
from nbgrader.preprocessors import CheckCellMetadata, ClearOutput, DeduplicateIds, OverwriteCells, OverwriteKernelspec  # noqa: E402
from course.grading.nbgrader_hooks import RepairStructure  # noqa: E402
c.Autograde.sanitize_preprocessors = [ClearOutput, RepairStructure, DeduplicateIds, OverwriteKernelspec, OverwriteCells,
                                      CheckCellMetadata]
c.Execute.timeout_func = limits.cell_timeout  # the training cell gets the long limit
c.Execute.interrupt_on_timeout = True
c.Autograde.create_student = True
# Tracebacks in graded cells show only the exception, never the hidden test's lines.
c.Execute.extra_arguments = ["--InteractiveShell.xmode=Minimal"]
# Feedback HTML: scores and outputs, but not the source of hidden tests.
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "nbgrader.preprocessors.ClearHiddenTests",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
