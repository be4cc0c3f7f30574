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
c.CourseDirectory.ignore = list(paths.IGNORED_FILES)

# Release: stubs that fail loudly instead of returning None (students' Validate recognises them).
from course import student_nbgrader  # noqa: E402
c.ClearSolutions.code_stub = {"python": student_nbgrader.CODE_STUB}
c.ClearSolutions.text_stub = student_nbgrader.TEXT_STUB

# Grading (course.grading.grade_one starts it; formgrader's Autograde button is refused):
# mend what makes nbgrader give up on a whole notebook (stripped or duplicated metadata),
# restore deleted or edited test cells, bound each cell's run time, run the probes in the same kernel after the
# notebook and judge their data here, and score each test cell by the judge's verdict, never by what ran in the
# student's kernel; what the student wrote and displayed is
# kept as text only, so the feedback and formgrader run none of it as script.
from nbconvert.preprocessors import ClearMetadataPreprocessor  # noqa: E402
from nbgrader.preprocessors import (  # noqa: E402
    AssignLatePenalties, CheckCellMetadata, ClearOutput, DeduplicateIds, IgnorePattern, LimitOutput, OverwriteCells,
    OverwriteKernelspec)
from course.grading.nbgrader_hooks import (  # noqa: E402
    ApplyVerdicts, CourseGraderOnly, ExecuteAndJudge, RepairStructure, StoreJudgePoints, TextOnly)
c.Autograde.exporter_class = CourseGraderOnly
c.Autograde.sanitize_preprocessors = [ClearOutput, RepairStructure, DeduplicateIds, OverwriteKernelspec, OverwriteCells,
                                      CheckCellMetadata]
c.Autograde.autograde_preprocessors = [ExecuteAndJudge, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, TextOnly,
                                       ApplyVerdicts, StoreJudgePoints, AssignLatePenalties, CheckCellMetadata]
c.OverwriteCells.add_missing_cells = True
c.Execute.timeout_func = limits.cell_timeout  # the training cell gets the long limit
c.Execute.interrupt_on_timeout = True
# Once the notebook and the probes have run, nothing more is read from the kernel: it is killed (its process group)
# rather than asked to exit, which cost 1.5 to 2.5 s per grading (a torch kernel's slow exit in the jail).
c.Execute.shutdown_kernel = "immediate"
c.Autograde.create_student = True
# nbgrader's exchange, in the build area: used when the course is served on a hub (`make hub`); otherwise students
# hand in through the LMS and submitted/, and an existing folder keeps formgrader quiet. Submissions and feedback
# stay between each student and the instructor, and a submission counts only if the account that made it is the
# student it names (course.hub.exchange).
c.Exchange.root = str(paths.EXCHANGE)
paths.EXCHANGE.mkdir(parents=True, exist_ok=True)
c.ExchangeFactory.release_assignment = "course.hub.exchange.GroupInboundRelease"
c.ExchangeFactory.collect = "course.hub.exchange.OwnerCheckedCollect"
c.ExchangeFactory.release_feedback = "course.hub.exchange.SkippingFeedbackRelease"
# What students run: Validate fails on a stub, an error or a failed visible test; Submit keeps a submission private.
student_nbgrader.configure(c)
# Feedback HTML: the gradebook's points, outputs (the judge's verdict in each test cell), and written
# answers not graded yet shown as such.
c.GenerateFeedback.exporter_class = "course.grading.nbgrader_hooks.FeedbackPage"  # (the same page, made faster)
c.GenerateFeedback.preprocessors = [
    "nbgrader.preprocessors.GetGrades",
    "course.grading.nbgrader_hooks.HoldUngradedAnswers",
    "nbconvert.preprocessors.CSSHTMLHeaderPreprocessor",
]
