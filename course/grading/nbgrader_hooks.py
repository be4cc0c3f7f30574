"""Course code that runs inside nbgrader's own process (named in nbgrader_config.py).

Points come from the judge (course.grading.judge), never from the student's
kernel. `course.grading.grade_one` runs nbgrader autograde with
COURSE_GRADING_WORK naming the grading's work folder (course.grading.checking);
`ExecuteAndJudge` runs the notebook in the sandboxed kernel, then the probes
in that same kernel, then the judge on their data, in this process;
`ApplyVerdicts` writes each verdict into its test cell's output, for the
student to read; `StoreJudgePoints`, nbgrader's SaveAutoGrades told to take
each test cell's points from the judge, stores them in the gradebook, and
writes into the grading's record what the gradebook now shows. The points go
one way, once: judge, record, gradebook. So formgrader, `nbgrader export` and
the feedback HTML show what the judge decided.

Without COURSE_GRADING_WORK (formgrader's Autograde button, a plain
`nbgrader autograde`) there is no sandbox and no judge: `CourseGraderOnly`
refuses before nbgrader touches a file or the gradebook.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Collection
from queue import Empty
from html.parser import HTMLParser
from pathlib import Path

import nbformat
from nbconvert.exporters import NotebookExporter
from nbconvert.filters import markdown2html
from nbclient.util import ensure_async, run_sync
from nbconvert.exporters import HTMLExporter, TemplateExporter
from nbconvert.filters.highlight import Highlight2HTML
from nbconvert.filters.widgetsdatatypefilter import WidgetsDataTypeFilter
from nbgrader.api import Gradebook
from nbgrader.preprocessors import Execute, NbGraderPreprocessor, SaveAutoGrades

from course import paths
from course.grading import gradebook, limits
from course.grading.checking import (JUDGED, NOT_JUDGED, RECORD, WORK_VARIABLE, failing_checks, freeze_first_run,
                                     judge_kernel_run, probe_folder, read_record, write_record)
from course.grading.probe import clues_request, probes_request
from course.grading.record import Record
from course.repair import repair

REFUSAL = ("This course does not autograde inside a notebook kernel: run `make autograde` (each submission is run "
           "in a sandbox and judged outside it), then refresh this page.")


class CourseGraderOnly(NotebookExporter):
    """Autograde's exporter (built before nbgrader deletes or writes anything): refuses unless the course's grader runs it."""

    def __init__(self, *args, **kwargs):
        if not os.environ.get(WORK_VARIABLE):
            raise RuntimeError(REFUSAL)
        super().__init__(*args, **kwargs)


class RepairStructure(NbGraderPreprocessor):
    """Mend stripped or duplicated nbgrader metadata (see course.repair); what was mended is told to the student, in
    the grading's record (course.grading.checking.RECORD)."""

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple[nbformat.NotebookNode, dict]:
        info = resources["nbgrader"]
        release = paths.release_dir(info["assignment"]) / f"{info['notebook']}.ipynb"
        notes = repair(nb, nbformat.read(release, as_version=4))
        if notes:
            record = read_record(work_folder(), RECORD)
            record.flags.append("cells-restored")
            record.messages += notes
            write_record(record, work_folder(), RECORD)
        return nb, resources


def is_test_cell(cell: nbformat.NotebookNode) -> bool:
    """Whether `cell` is an autograded test cell (a graded code cell that is not an answer): one check's verdict."""
    meta = cell.metadata.get("nbgrader", {})
    return cell.cell_type == "code" and bool(meta.get("grade")) and not meta.get("solution")


def verdict_output(cell: nbformat.NotebookNode, record: Record) -> nbformat.NotebookNode:
    """The output of a test cell: the judge's verdict on its check in `record` (an error when it failed, as
    nbgrader's own scoring would read it too)."""
    check_id, max_points = cell.metadata["nbgrader"]["grade_id"], cell.metadata["nbgrader"]["points"]
    points, verdict = record.points.get(check_id, 0), record.judge.get(check_id)
    message = verdict["message"] if verdict else NOT_JUDGED if check_id in record.max_points else \
        "this check was not judged"
    if points > 0:
        return nbformat.v4.new_output("stream", name="stdout", text=f"{message} ({points} / {max_points} points)\n")
    return nbformat.v4.new_output("error", ename="CheckFailed", evalue=message,
                                  traceback=[f"CheckFailed: {message} (0 / {max_points} points)"])


def work_folder() -> Path:
    """The grading's work folder (course.grading.checking), named by the grader."""
    return Path(os.environ[WORK_VARIABLE])


class ExecuteAndJudge(Execute):
    """nbgrader's Execute, then, in the same kernel before it shuts down, every probe on the notebook's namespace
    (course.grading.probe.kernel_request): the student's code runs once. Then, the kernel gone, the judge on the
    probes' data (course.grading.checking.judge_kernel_run).

    The probes' request is answered on the shell channel alone: what the code prints or displays meanwhile is never
    read, so it cannot reach the notebook's outputs (an update to an earlier display included).
    """

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict, km=None) -> tuple[nbformat.NotebookNode, dict]:
        self.probe_seconds: float | None = None  # set if the notebook ran to its end and the probes were sent
        nb, resources = super().preprocess(nb, resources, km)
        judge_kernel_run(work_folder(), nb, self.probe_seconds)
        return nb, resources

    def preprocess_cell(self, cell, resources: dict, index: int):
        result = super().preprocess_cell(cell, resources, index)
        if index == len(self.nb.cells) - 1:
            start = time.perf_counter()
            if self.run_probes(resources["nbgrader"]["assignment"], resources["nbgrader"]["student"]):
                self.probe_seconds = round(time.perf_counter() - start, 2)
        return result

    def run_probes(self, assignment: str, student: str) -> bool:
        """Whether the probes ran to the end in the kernel, each time within limits.PROBE_TIMEOUT_S: every probe
        without its clues; that run's data kept where the kernel cannot change it (`freeze_first_run`) and judged here
        (`failing_checks`); then, if some checks' outputs are wrong, those checks' probes again, with their clues, to
        name the mistakes (only their clues are taken: course.grading.judge.with_clues)."""
        folder, hidden = probe_folder(assignment, student), paths.probes_file(assignment).read_bytes()
        if not (self.in_kernel(probes_request(folder, hidden, paths.visible_probes_file(assignment).read_bytes()))
                and freeze_first_run(folder, work_folder())):
            return False
        failing = failing_checks(assignment, work_folder())
        return not failing or self.in_kernel(clues_request(folder, hidden, failing))

    async def async_in_kernel(self, code: str) -> bool:
        """Whether `code` ran to its end in the kernel within limits.PROBE_TIMEOUT_S of wall clock; past it, the
        kernel is interrupted. What the code prints or displays is never read, and no other message the kernel sends
        holds the clock open."""
        msg_id = await ensure_async(self.kc.execute(code, silent=True, store_history=False, allow_stdin=False))
        deadline = time.monotonic() + limits.PROBE_TIMEOUT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                reply = await ensure_async(self.kc.shell_channel.get_msg(timeout=min(1.0, left)))
            except Empty:
                if not await ensure_async(self.kc.is_alive()):
                    return False
                continue
            if reply["parent_header"].get("msg_id") == msg_id:
                return reply["content"].get("status") == "ok"
        await ensure_async(self.km.interrupt_kernel())
        return False

    in_kernel = run_sync(async_in_kernel)


class ApplyVerdicts(NbGraderPreprocessor):
    """After execution: each test cell shows the judge's verdict on its check (from the grading's record)."""

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple[nbformat.NotebookNode, dict]:
        record = read_record(work_folder(), JUDGED)
        for cell in nb.cells:
            if is_test_cell(cell):
                cell.outputs = [verdict_output(cell, record)]
        return nb, resources


class StoreJudgePoints(SaveAutoGrades):
    """nbgrader's SaveAutoGrades, each test cell's points taken from the judge (the grading's record) rather than
    from the cell's output; then the gradebook's score of each autograded cell (hand grades included) is written into
    the record, which the grader reads without importing nbgrader itself."""

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple[nbformat.NotebookNode, dict]:
        self.record = read_record(work_folder(), JUDGED)
        nb, resources = super().preprocess(nb, resources)
        info = resources["nbgrader"]
        self.record.gradebook = gradebook.auto_scores(info["assignment"], info["student"], info["db_url"])
        write_record(self.record, work_folder(), JUDGED)
        return nb, resources

    def _add_score(self, cell: nbformat.NotebookNode, resources: dict) -> None:
        if not is_test_cell(cell):  # a written answer: nbgrader's own rule (0 if left blank, else for the instructor)
            return super()._add_score(cell, resources)
        grade = self.gradebook.find_grade(cell.metadata["nbgrader"]["grade_id"], self.notebook_id, self.assignment_id,
                                          self.student_id)
        grade.auto_score = float(self.record.points.get(grade.name, 0))
        grade.needs_manual_grade = grade.manual_score is not None  # as nbgrader: a hand grade there asks for review
        self.gradebook.db.commit()


SHOWN_OUTPUT_TYPES = ("text/plain", "image/png", "image/jpeg")  # what no page can run as script
# What Markdown renders to (nbconvert's markdown2html), and nothing that runs: a cell whose rendering holds other
# markup is shown as its text.
MARKDOWN_TAGS = {"p", "h1", "h2", "h3", "h4", "h5", "h6", "a", "em", "strong", "b", "i", "code", "pre", "ul", "ol",
                 "li", "blockquote", "hr", "br", "table", "thead", "tbody", "tr", "th", "td", "img", "del", "s",
                 "span", "div", "sup", "sub", "dl", "dt", "dd", "kbd", "details", "summary"}
MARKDOWN_ATTRIBUTES = {"id", "class", "href", "src", "alt", "title", "align", "colspan", "rowspan", "start"}
SAFE_LINK = re.compile(r"^(https?:|mailto:|#|attachment:|[^:]*$)", re.I)


class _MarkupCheck(HTMLParser):
    """Collects what in an HTML text could run: a tag or attribute outside the allowlists, a link of another scheme."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.unsafe: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in MARKDOWN_TAGS:
            self.unsafe.append(tag)
        for name, value in attrs:
            if name not in MARKDOWN_ATTRIBUTES or (name in ("href", "src") and not SAFE_LINK.match(
                    "".join((value or "").split()))):
                self.unsafe.append(f"{tag} {name}")

    handle_startendtag = handle_starttag


def renders_safely(markdown: str) -> bool:
    """Whether `markdown`, rendered as the feedback and formgrader render it, holds nothing that could run."""
    check = _MarkupCheck()
    check.feed(markdown2html(markdown))
    check.close()
    return not check.unsafe


def as_literal_markdown(text: str) -> str:
    """Markdown that shows `text` as it is written: a fenced block longer than any run of backticks in it."""
    fence = "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", text)), default=0))
    return f"{fence}text\n{text}\n{fence}"


def as_text(nb: nbformat.NotebookNode, instructors: Collection[str] = ()) -> nbformat.NotebookNode:
    """`nb` with nothing a page could run as script: outputs keep only their text and bitmap forms (HTML,
    JavaScript, SVG, Markdown and widgets are dropped; an output of none of those kinds says so), a Markdown cell
    that would render markup that can run (`renders_safely`) is shown as its text unless its text is one of
    `instructors` (the release's own Markdown cells, which the student did not write), raw cells lose their format
    (nbconvert renders raw cells of no format as nothing), and widget state goes."""
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            if cell.source not in instructors and not renders_safely(cell.source):
                cell.source = as_literal_markdown(cell.source)
        elif cell.cell_type == "raw":
            for key in ("format", "raw_mimetype"):
                cell.metadata.pop(key, None)
        for output in cell.get("outputs", []):
            if "data" in output:
                data = {kind: value for kind, value in output.data.items() if kind in SHOWN_OUTPUT_TYPES}
                output.data = data or {"text/plain": "[an output of a kind not shown here: "
                                                     f"{', '.join(sorted(output.data))}]"}
    nb.metadata.pop("widgets", None)
    return nb


class TextOnly(NbGraderPreprocessor):
    """After execution: what the student wrote and what their code displayed becomes text (`as_text`) in the graded
    notebook that the feedback and formgrader render, so no page an instructor or student opens runs it."""

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple[nbformat.NotebookNode, dict]:
        info = resources["nbgrader"]
        release = nbformat.read(paths.release_dir(info["assignment"]) / f"{info['notebook']}.ipynb", as_version=4)
        return as_text(nb, {cell.source for cell in release.cells if cell.cell_type == "markdown"}), resources


class HoldUngradedAnswers(NbGraderPreprocessor):
    """Feedback, after GetGrades: a written answer not graded yet shows as "to be graded by hand", not as nbgrader's
    "0 / 5"; its points stay in the maximum, so every student's page has the same one (the assignment's)."""

    def preprocess(self, nb: nbformat.NotebookNode, resources: dict) -> tuple[nbformat.NotebookNode, dict]:
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            for cell in nb.cells:
                meta = cell.metadata.get("nbgrader", {})
                if not (meta.get("grade") and meta.get("solution")):
                    continue
                grade = gb.find_grade(meta["grade_id"], info["notebook"], info["assignment"], info["student"])
                if grade.manual_score is None and grade.auto_score is None:
                    meta["grade"] = False  # shown as an answer without a score
                    meta["comment"] = (f"To be graded by hand: this answer ({grade.max_score:g} points) is graded by "
                                       "the instructor; its points are added to your score when it is.")
        return nb, resources


class FeedbackPage(HTMLExporter):
    """nbconvert's HTML page, with its finishing pass for screen readers (a text for each image without one, a tab
    stop on each cell's input and output) made on the page's text instead of through BeautifulSoup, which spent most
    of a second of each grading parsing the page again. The page's markup is the template's own, and what the student
    wrote is escaped or checked markup (TextOnly), so the tags the pass looks for are the template's."""

    def from_notebook_node(self, nb: nbformat.NotebookNode, resources: dict | None = None, **kw) -> tuple[str, dict]:
        language = nb.metadata.get("language_info", {})
        self.register_filter("highlight_code", self.filters.get("highlight_code", Highlight2HTML(
            pygments_lexer=language.get("pygments_lexer", language.get("name")), parent=self)))
        resources = self._init_resources(resources)
        self.register_filter("filter_data_type", WidgetsDataTypeFilter(notebook_metadata=self._nb_metadata,
                                                                      parent=self, resources=resources))
        page, resources = TemplateExporter.from_notebook_node(self, nb, resources, **kw)
        return readable_page(page), resources


IMAGE_WITHOUT_TEXT = re.compile(r"<img\b(?![^>]*\balt=)")
FOCUSABLE = re.compile(r'(<div\b[^>]*\bclass="[^"]*\b(?:jp-Cell-inputWrapper|jp-OutputArea-output)\b[^"]*")')


def readable_page(page: str) -> str:
    """`page` with nbconvert's accessibility finish: each image without an alternative text gets one, each cell's input
    and output a tab stop."""
    page = IMAGE_WITHOUT_TEXT.sub('<img alt="No description has been provided for this image"', page)
    return FOCUSABLE.sub(r'\1 tabindex="0"', page)
