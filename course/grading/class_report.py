"""The class report of one assignment, summary first, and the course page that links every report.

    grades/<assignment>/report.md     for a terminal (`make report` prints it)
    grades/<assignment>/report.html   for a browser: one self-contained file, its plots embedded as PNG
    grades/index.html                 the course page: a line per assignment, its report, the final grades

`summarize` computes one `ClassSummary` from the records, the hand grades, the
assignment's mistake catalogue and the time limits; `sections` turns it into
headings, sentences and tables of plain text, which `markdown` and `html_report`
render, the HTML with a plot beside each table. The per-student rows stay in
grades.csv. Student ids and messages are untrusted: every cell is escaped when
it is rendered (`escaped` in Markdown, html.escape in HTML), and the HTML's
Content-Security-Policy lets it load nothing but its own embedded images.
Plots are drawn with Agg on matplotlib Figures, without pyplot: no GUI
backend, and no figure is left open.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import itertools
import random
import statistics
import urllib.parse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from course import paths
from course.grading import limits
from course.grading.record import STATUSES
from course.grading.similarity import Similarity, side_by_side
from course.untrusted import escaped, quoted
from course.verdicts import mistakes_for

SLOWEST_SHOWN = 5  # submissions in the report's list of the slowest
WHY_LENGTH = 200  # characters of a submission's first message in the attention list
NO_MISTAKE_NAMED = "The check failed and its verdict named no mistake of the catalogue."
NOT_IN_CATALOGUE = "Not in this assignment's catalogue (a verdict of an older checks.py?)."
HAND_GRADING = ("Written answers are graded by hand in formgrader (make formgrader); make grades then writes the "
                "final grades and the feedback with them.")


@dataclass(frozen=True)
class MistakeCount:
    """A mistake of the catalogue (None: failing verdicts that named none) and how many students made it."""

    mistake: str | None
    advice: str
    checks: tuple[str, ...]  # the checks whose failing verdicts named it, in the assignment's order
    students: int


@dataclass(frozen=True)
class Attention:
    """A submission the instructor should look at: its status is not ok, or grading raised a flag."""

    student: str
    status: str
    flags: tuple[str, ...]
    why: str  # its first message, on one line ('' if it has none)


@dataclass(frozen=True)
class Late:
    """A submission made after its due date, by nbgrader's timestamp."""

    student: str
    submitted_at: str
    due: str
    late_by: str  # hours:minutes:seconds


@dataclass(frozen=True)
class AnswerProgress:
    """Hand grading of one written answer across the class."""

    answer: str  # grade_id
    graded: int
    submissions: int
    points_pending: float


@dataclass(frozen=True)
class SimilarPair:
    """Two students whose answers are similar (course.grading.similarity): evidence to review, never a verdict."""

    students: tuple[str, str]
    similarity: float
    code: tuple[float, float]  # in code, of each student's fingerprints, the share the other has
    text: tuple[float, float]  # the same in the written answers
    listed_by: str = ""  # the measures that list the pair, shortly
    reasons: tuple[str, ...] = ()  # each measure that lists the pair, with its figures and the class's
    views: tuple[tuple[str, str, str, str], ...] = ()  # (answer id, what is alike, each one's answer as HTML, the
    #                                                    matches in <mark>)


@dataclass(frozen=True)
class SimilarGroup:
    """Three or more students every two of whom are listed as similar."""

    students: tuple[str, ...]
    pairs: tuple[tuple[str, str, float], ...]  # every two of them, with their similarity


@dataclass(frozen=True)
class ClassSummary:
    """Everything the class report shows of one assignment."""

    assignment: str
    max_score: int  # autograded points possible
    scores: tuple[int, ...]  # (N,) autograded points of each submission
    statuses: dict[str, int]  # status -> submissions, in STATUSES order, only those that occur
    pass_counts: dict[str, int]  # check id -> submissions that passed it, hardest first (ties in assignment order)
    mistakes: tuple[MistakeCount, ...]  # most students first
    seconds: dict[str, tuple[float, ...]]  # step -> seconds of each submission that ran it, steps in grading order
    limits: dict[str, int]  # step -> its time limit in seconds
    slowest: tuple[tuple[str, dict[str, float]], ...]  # (student, seconds per step), the SLOWEST_SHOWN slowest
    attention: tuple[Attention, ...]  # worst status first, flagged ok submissions last
    answers: tuple[AnswerProgress, ...]  # in the notebook's order
    late: tuple[Late, ...] = ()  # latest first
    similar: tuple[SimilarPair, ...] = ()  # listed for review, most similar first
    groups: tuple[SimilarGroup, ...] = ()  # three or more students every two of whom are listed, largest first
    similarity_map: tuple[tuple[str, ...], tuple[tuple[float, ...], ...]] = ((), ())  # students, (N, N)

    @property
    def graded(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float:
        return statistics.fmean(self.scores)

    @property
    def median(self) -> float:
        return statistics.median(self.scores)


def step_limits() -> dict[str, int]:
    """Each grading step's time limit in seconds (course.grading.limits), in grading order; the probe's is per run."""
    return {"probe": limits.PROBE_TIMEOUT_S, "judge": limits.JUDGE_TIMEOUT_S, "nbgrader": limits.NBGRADER_TIMEOUT_S}


def similar_pairs(similar: Similarity) -> tuple[SimilarPair, ...]:
    """The pairs a similarity lists for review, with why, and their answers side by side."""
    return tuple(SimilarPair((p.first, p.second), p.similarity, p.code, p.text, p.listed_by,
                             tuple(map(str, p.reasons)), tuple(side_by_side(similar, p)))
                 for p in similar.listed)


def similar_groups(similar: Similarity) -> tuple[SimilarGroup, ...]:
    """The similarity's groups, each with every pair's own figure."""
    return tuple(SimilarGroup(group, tuple((a, b, similar.pair(a, b).similarity)
                                           for a, b in itertools.combinations(group, 2)))
                 for group in similar.clusters)


def summarize(assignment: str, records: list[dict], check_points: dict[str, int],
              hand: dict[str, dict[str, float | None]], times: dict[str, dict] | None = None,
              similar: Similarity | None = None) -> ClassSummary:
    """The summary of a graded class: `records` (result records, see course.grading.record.Record),
    `check_points` (check id -> points, in the assignment's order), `hand` (student -> written answer -> points given
    by hand, None while not graded), `times` (student -> when the submission was made against its due date, from
    course.grading.gradebook.submission_times), `similar` (course.grading.similarity's comparison of the class)."""
    check_ids, time_limits = list(check_points), step_limits()
    passed = {c: sum(bool(r["judge"].get(c, {}).get("passed")) for r in records) for c in check_ids}
    step_seconds = {step: tuple(r["seconds"][step] for r in records if step in r["seconds"]) for step in time_limits}
    slowest = sorted((r for r in records if r["seconds"]), key=lambda r: sum(r["seconds"].values()),
                     reverse=True)[:SLOWEST_SHOWN]
    return ClassSummary(
        assignment=assignment,
        max_score=sum(check_points.values()),
        scores=tuple(sum(r["points"].values()) for r in records),
        statuses={status: n for status in STATUSES if (n := sum(r["status"] == status for r in records))},
        pass_counts=dict(sorted(passed.items(), key=lambda item: item[1])),
        mistakes=mistake_counts(records, check_ids, mistakes_for(assignment)),
        seconds=step_seconds,
        limits=time_limits,
        slowest=tuple((r["student"], r["seconds"]) for r in slowest),
        attention=needing_attention(records),
        answers=hand_progress(records, hand),
        late=late_submissions(records, times or {}),
        similar=similar_pairs(similar) if similar else (),
        groups=similar_groups(similar) if similar else (),
        similarity_map=(similar.students, tuple(map(tuple, similar.matrix.round(3).tolist())))
        if similar else ((), ()))


def late_by(seconds: float) -> str:
    """'h:mm:ss' of a number of seconds (hours may exceed 24)."""
    whole = round(seconds)
    return f"{whole // 3600}:{whole % 3600 // 60:02d}:{whole % 60:02d}"


def late_submissions(records: list[dict], times: dict[str, dict]) -> tuple[Late, ...]:
    """The graded submissions made after their due date, latest first."""
    late = [(r["student"], times[r["student"]]) for r in records if times.get(r["student"], {}).get("seconds_late")]
    return tuple(Late(student, t["submitted_at"], t["due"], late_by(t["seconds_late"]))
                 for student, t in sorted(late, key=lambda item: -item[1]["seconds_late"]))


def mistake_counts(records: list[dict], check_ids: list[str], catalogue: dict[str, str]) -> tuple[MistakeCount, ...]:
    """The mistakes the failing verdicts name, most students first; a student counts once per mistake, however many
    checks it failed. Verdicts without a mistake make one group (None), ranked last among equals."""
    students: dict[str | None, set[str]] = {}
    checks: dict[str | None, set[str]] = {}
    for record in records:
        for check_id in check_ids:
            verdict = record["judge"].get(check_id)
            if verdict and not verdict["passed"]:
                students.setdefault(verdict.get("mistake"), set()).add(record["student"])
                checks.setdefault(verdict.get("mistake"), set()).add(check_id)
    ranked = sorted(students, key=lambda mistake: (-len(students[mistake]), mistake is None, mistake or ""))
    def advice(mistake: str | None) -> str:
        return NO_MISTAKE_NAMED if mistake is None else catalogue.get(mistake, NOT_IN_CATALOGUE)

    return tuple(MistakeCount(mistake, advice(mistake), tuple(c for c in check_ids if c in checks[mistake]),
                              len(students[mistake])) for mistake in ranked)


def needing_attention(records: list[dict]) -> tuple[Attention, ...]:
    """The submissions whose status is not ok or that carry a flag (raised for the instructor), worst status first
    (in STATUSES order), then by student."""
    def severity(record: dict) -> tuple[int, str]:
        return STATUSES.index(record["status"]) or len(STATUSES), record["student"]

    def why(record: dict) -> str:
        return quoted(record["messages"][0], WHY_LENGTH) if record["messages"] else ""

    return tuple(Attention(r["student"], r["status"], tuple(r["flags"]), why(r))
                 for r in sorted(records, key=severity) if r["status"] != "ok" or r["flags"])


def hand_progress(records: list[dict], hand: dict[str, dict[str, float | None]]) -> tuple[AnswerProgress, ...]:
    """For each written answer: how many submissions have it graded by hand, of how many, and the points not graded."""
    answers = dict.fromkeys(answer for r in records for answer in r["manual_pending"])
    progress = []
    for answer in answers:
        having = [r for r in records if answer in r["manual_pending"]]
        waiting = [r for r in having if hand.get(r["student"], {}).get(answer) is None]
        progress.append(AnswerProgress(answer, len(having) - len(waiting), len(having),
                                       sum(r["manual_pending"][answer] for r in waiting)))
    return tuple(progress)


# Plots: each takes the summary and returns a Figure with a title and labelled axes.

def score_histogram(s: ClassSummary) -> Figure:
    """The submissions per autograded score, with the mean and the median marked."""
    figure = Figure(figsize=(8, 3.2), layout="constrained")
    ax = figure.subplots()
    ax.hist(s.scores, bins=[points - 0.5 for points in range(s.max_score + 2)], color="#4c72b0", edgecolor="white")
    ax.axvline(s.mean, color="#dd8452", linewidth=2, label=f"mean {s.mean:.1f}")
    ax.axvline(s.median, color="#55a868", linewidth=2, linestyle="--", label=f"median {s.median:g}")
    ax.set(title=f"Autograded score of {s.graded} submissions", xlabel=f"points (of {s.max_score})",
           ylabel="submissions", xlim=(-0.5, s.max_score + 0.5))
    ax.legend(loc="upper left")
    return figure


def pass_rate_bars(s: ClassSummary) -> Figure:
    """The share of submissions that passed each check, one bar per check, the hardest at the top."""
    figure = Figure(figsize=(8, 1.2 + 0.32 * len(s.pass_counts)), layout="constrained")
    ax = figure.subplots()
    bars = ax.barh(list(s.pass_counts), [100 * n / s.graded for n in s.pass_counts.values()], color="#4c72b0")
    ax.bar_label(bars, fmt="%.0f%%", padding=3)
    ax.invert_yaxis()
    ax.set(title="Pass rate per check, hardest first", xlabel="submissions that passed (%)", ylabel="check",
           xlim=(0, 112), xticks=range(0, 101, 20))
    return figure


def grading_times(s: ClassSummary) -> Figure:
    """Each step's seconds (one dot per submission, on a log scale) against the step's limit."""
    figure = Figure(figsize=(8, 1.4 + 0.7 * len(s.seconds)), layout="constrained")
    ax = figure.subplots()
    jitter = random.Random(0)  # dots spread across their row, the same way every time
    for row, (step, seconds) in enumerate(s.seconds.items()):
        ax.scatter([max(x, 0.01) for x in seconds], [row + jitter.uniform(-0.25, 0.25) for _ in seconds], s=9,
                   alpha=0.5, color="#4c72b0", zorder=3)  # above the limit: a timeout's dot sits on it
        ax.plot([s.limits[step]] * 2, [row - 0.4, row + 0.4], color="#c44e52", linewidth=3)
        ax.annotate(f"limit {s.limits[step]} s", (s.limits[step], row), xytext=(6, 0), textcoords="offset points",
                    va="center", color="#c44e52")
    ax.set_xscale("log")
    ax.set_xlim(right=5 * max(s.limits.values()))  # room for the limits' labels
    ax.set_yticks(range(len(s.seconds)), list(s.seconds))
    ax.invert_yaxis()
    ax.set(title="Grading time per step (a dot per submission), against its limit (red)", xlabel="seconds (log scale)",
           ylabel="step")
    return figure


def similarity_heat_map(s: ClassSummary) -> Figure:
    students, matrix = s.similarity_map
    figure = Figure(figsize=(6.5, 5.5))
    ax = figure.add_subplot()
    image = ax.imshow(matrix, vmin=0, vmax=1, cmap="Reds")
    ax.set_title("Similarity of each pair of students' answers")
    ax.set_xlabel("student")
    ax.set_ylabel("student")
    if len(students) <= 30:
        ax.set_xticks(range(len(students)), labels=[quoted(x, 16) for x in students], rotation=90, fontsize=7)
        ax.set_yticks(range(len(students)), labels=[quoted(x, 16) for x in students], fontsize=7)
    figure.colorbar(image, ax=ax, label="similarity (the larger share of fingerprints in common, code or text)")
    figure.tight_layout()
    return figure


def png_data_url(figure: Figure) -> str:
    """The figure drawn by Agg as a PNG, as a data: URL an <img> can show without any other file."""
    buffer = io.BytesIO()
    FigureCanvasAgg(figure).print_png(buffer)
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


# The report's content, in plain text: rendered as Markdown and as HTML.

@dataclass(frozen=True)
class Section:
    """One part of the report: a heading, a sentence, a table of plain text (or `empty` when it has no rows) and,
    in HTML, a plot."""

    title: str
    text: str
    header: tuple[str, ...] = ()
    rows: tuple[tuple[str, ...], ...] = ()
    empty: str = ""
    plot: Callable[[ClassSummary], Figure] | None = None
    details: Callable[[ClassSummary], str] | None = None  # more HTML, after the table (already escaped)


def headline(s: ClassSummary) -> list[str]:
    """The summary at the top of the report, one sentence a line."""
    if not s.graded:
        return [f"No submission of {s.assignment} has been graded yet."]
    full = sum(score == s.max_score for score in s.scores)
    return [f"{s.graded} submissions graded: mean {s.mean:.1f}, median {s.median:g}, highest {max(s.scores)} of "
            f"{s.max_score} autograded points; {full} with full marks.",
            "Statuses: " + ", ".join(f"{status} {n}" for status, n in s.statuses.items()),
            f"Submissions that need attention: {len(s.attention)}. Written-answer points still to grade by hand: "
            f"{sum(a.points_pending for a in s.answers):g}."]


def sections(s: ClassSummary) -> list[Section]:
    """The report after its headline, in reading order (none while nothing is graded)."""
    if not s.graded:
        return []
    return [
        Section("Score distribution", f"Autograded points of each submission, lowest {min(s.scores)}, "
                f"highest {max(s.scores)} of {s.max_score}.", plot=score_histogram),
        Section("Pass rate per check", "The share of submissions that passed each check, hardest first.",
                ("check", "passed", "rate"),
                tuple((c, f"{n} / {s.graded}", f"{100 * n / s.graded:.0f}%") for c, n in s.pass_counts.items()),
                plot=pass_rate_bars),
        Section("Most common mistakes", "Each failing verdict names its likely mistake from the assignment's "
                "catalogue (MISTAKES in its checks.py); a student counts once per mistake.",
                ("mistake", "students", "checks", "advice"),
                tuple((m.mistake or "(none named)", str(m.students), ", ".join(m.checks), m.advice)
                      for m in s.mistakes),
                empty="No check failed."),
        Section("Grading time", "Seconds each step took, against its limit (course.grading.limits; the probe's "
                "limit is per run, and a run that dies is tried again).",
                ("step", "submissions", "median s", "slowest s", "limit s"),
                tuple((step, str(len(seconds)), f"{statistics.median(seconds):.1f}" if seconds else "-",
                       f"{max(seconds):.1f}" if seconds else "-", str(s.limits[step]))
                      for step, seconds in s.seconds.items()),
                plot=grading_times),
        Section("Slowest submissions", "All steps together.", ("student", "seconds", *s.limits),
                tuple((student, f"{sum(seconds.values()):.1f}",
                       *(f"{seconds[step]:.1f}" if step in seconds else "-" for step in s.limits))
                      for student, seconds in s.slowest)),
        Section("Needs attention", "Submissions whose status is not ok, or that grading flagged, with their first "
                "message; grades.csv and each student's feedback.md have the rest.",
                ("student", "status", "flags", "why"),
                tuple((a.student, a.status, ", ".join(a.flags) or "-", a.why or "-") for a in s.attention),
                empty="Nothing needs attention."),
        Section("Late submissions", "Made after the due date (formgrader's Manage Assignments, with any extension), "
                "by nbgrader's timestamp of the submission.", ("student", "submitted at", "due", "late by"),
                tuple((x.student, x.submitted_at, x.due, x.late_by) for x in s.late),
                empty="No submission is late."),
        Section("Similar submissions (review)",
                "Pairs of students whose answers are unusually alike for this class, with what lists each pair. "
                "Each kind of evidence is measured on its own: code and written answers pooled (the share of one "
                "student's fingerprints, winnowed k-grams of normalised code or of the words, that the other has), "
                "each answer on its own, and each written answer's meaning (the cosine of the course's sentence "
                "encoder's vectors). The release, the instructor's solution and what most of the class writes alike "
                "count for nothing. A pair is listed when one of its figures stands far above what this class "
                "typically shares on that measure. Similar is not copied: review each pair side by side. Groups "
                "are three or more students every two of whom are listed, each pair's figure shown. Every pair is "
                "in similarity.csv.",
                ("students", "listed by", "code: share of each", "written answers: share of each"),
                tuple((" and ".join(p.students), p.listed_by, f"{p.code[0]:.0%} / {p.code[1]:.0%}",
                       f"{p.text[0]:.0%} / {p.text[1]:.0%}") for p in s.similar)
                + tuple((", ".join(g.students), f"group of {len(g.students)}",
                         "; ".join(f"{a} and {b}: {figure:.0%}" for a, b, figure in g.pairs), "-") for g in s.groups),
                empty="No pair of submissions is unusually alike for this class.",
                plot=similarity_heat_map if len(s.similarity_map[0]) >= 3 and s.similar else None,
                details=side_by_side_html),
        Section("Written answers", HAND_GRADING, ("answer", "graded by hand", "points still to grade"),
                tuple((a.answer, f"{a.graded} / {a.submissions}", f"{a.points_pending:g}") for a in s.answers),
                empty="This assignment has no written answers."),
    ]


def markdown(s: ClassSummary) -> str:
    """The report as Markdown, for a terminal: the headline, then each section's sentence and table."""
    def row(cells: tuple[str, ...]) -> str:
        return "| " + " | ".join(escaped(cell) for cell in cells) + " |"

    lines = [f"# Class report: {s.assignment}", "", *headline(s)]
    for section in sections(s):
        table = ([row(section.header), row(("---",) * len(section.header)), *map(row, section.rows)] if section.rows
                 else [section.empty] if section.empty else [])
        lines += ["", f"## {section.title}", "", section.text, *([""] + table if table else [])]
    lines += ["", "Per student: grades.csv, beside this report. With plots: report.html. Every assignment: "
              "../index.html."]
    return "\n".join(lines) + "\n"


STYLE = """
body { font-family: system-ui, sans-serif; color: #222; margin: 0; background: #f6f6f4; }
main { max-width: 60rem; margin: 0 auto; padding: 1rem 2rem 3rem; background: #fff; overflow-x: auto; }
h1 { border-bottom: 2px solid #4c72b0; padding-bottom: .3rem; }
h2 { margin-top: 2.2rem; color: #2a4a80; }
.headline p { margin: .3rem 0; font-size: 1.05rem; }
img { display: block; max-width: 100%; height: auto; margin: .8rem 0; }
table { border-collapse: collapse; margin: .6rem 0; font-size: .92rem; }
th, td { border: 1px solid #ccc; padding: .25rem .55rem; text-align: left; vertical-align: top; }
th { background: #eef1f7; }
th:first-child, td:first-child { white-space: nowrap; }
tr:nth-child(even) td { background: #fafafa; }
details summary { cursor: pointer; color: #2a4a80; }
table.side td { width: 50%; } table.side pre { white-space: pre-wrap; font-size: .8rem; margin: .3rem 0; }
mark { background: #ffd88a; }
"""
# The page may load nothing but its own embedded images and style: not even a hostile message that escaped escaping.
POLICY = "default-src 'none'; img-src data:; style-src 'unsafe-inline'"


def page(title: str, body: list[str]) -> str:
    """A self-contained HTML page: inline style, no script, nothing loaded from elsewhere."""
    return "\n".join(["<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
                      f'<meta http-equiv="Content-Security-Policy" content="{POLICY}">',
                      f"<title>{html.escape(title)}</title>", f"<style>{STYLE}</style>", "</head>", "<body><main>",
                      f"<h1>{html.escape(title)}</h1>", *body, "</main></body>", "</html>", ""])


def html_table(header: tuple[str, ...], rows: tuple[tuple[str, ...], ...]) -> str:
    head = "".join(f"<th>{html.escape(cell)}</th>" for cell in header)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(cell)}</td>" for cell in row) + "</tr>" for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def side_by_side_html(s: ClassSummary) -> str:
    """Each similar pair: why it is listed, then its alike answers side by side, the counted matches highlighted."""
    parts = []
    for pair in s.similar:
        names = html.escape(" and ".join(pair.students))
        reasons = "".join(f"<li>{html.escape(reason)}</li>" for reason in pair.reasons)
        parts.append(f"<details><summary>{names}: why listed</summary><ul>{reasons}</ul></details>")
        for answer, alike, first, second in pair.views:
            cells = "".join(f"<td><b>{html.escape(student)}</b><pre>{code}</pre></td>"
                            for student, code in zip(pair.students, (first, second)))
            parts.append(f"<details><summary>{names}: {html.escape(answer)} ({html.escape(alike)})</summary>"
                         f"<table class=\"side\"><tr>{cells}</tr></table></details>")
    return "".join(parts)


def html_section(section: Section, s: ClassSummary) -> str:
    """A section in HTML: its plot first, with its table folded beneath it; a section without a plot shows its
    table."""
    parts = [f"<section><h2>{html.escape(section.title)}</h2>", f"<p>{html.escape(section.text)}</p>"]
    table = html_table(section.header, section.rows) if section.rows else ""
    if section.plot:
        parts.append(f'<img src="{png_data_url(section.plot(s))}" alt="{html.escape(section.title)} (plot)">')
        parts.append(f"<details><summary>The numbers</summary>{table}</details>" if table else "")
    else:
        parts.append(table or f"<p>{html.escape(section.empty)}</p>")
    if section.details:
        parts.append(section.details(s))
    return "".join(parts) + "</section>"


def html_report(s: ClassSummary) -> str:
    """The report as one self-contained HTML page, its plots embedded."""
    headlines = "".join(f"<p>{html.escape(line)}</p>" for line in headline(s))
    return page(f"Class report: {s.assignment}", [f'<div class="headline">{headlines}</div>',
                                                   *(html_section(section, s) for section in sections(s)),
                                                   '<p>Per student: <a href="grades.csv">grades.csv</a>. Every '
                                                   'assignment: <a href="../index.html">the course page</a>.</p>'])


def write_reports(s: ClassSummary) -> None:
    """grades/<assignment>/report.md and report.html."""
    out = paths.grades_dir(s.assignment)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.md").write_text(markdown(s))
    (out / "report.html").write_text(html_report(s))


# The course page.

def course_page_file() -> Path:
    return paths.COURSE / "grades" / "index.html"


def assignment_row(assignment: str) -> tuple[str, ...]:
    """An assignment's cells on the course page (HTML), from its grades.csv: name (a link to its report, if there is
    one), submissions graded, mean autograded score, written-answer points still to grade by hand."""
    with (paths.grades_dir(assignment) / "grades.csv").open(newline="") as f:
        rows = list(csv.DictReader(f))
    name = html.escape(assignment)
    if (paths.grades_dir(assignment) / "report.html").exists():
        name = f'<a href="{html.escape(urllib.parse.quote(assignment))}/report.html">{name}</a>'
    mean = f"{statistics.fmean(float(r['total']) for r in rows):.1f} / {rows[0]['max']}" if rows else "-"
    return name, str(len(rows)), mean, f"{sum(float(r['hand_pending']) for r in rows):g}"


def write_course_page() -> Path:
    """grades/index.html: a line per assignment graded so far, linking its report, and a link to the final grades
    (once `make grades` wrote them)."""
    graded = [a for a in paths.assignments() if (paths.grades_dir(a) / "grades.csv").exists()]
    header = "".join(f"<th>{cell}</th>" for cell in ("assignment", "graded", "mean score", "points to grade by hand"))
    rows = "".join("<tr>" + "".join(f"<td>{cell}</td>" for cell in assignment_row(a)) + "</tr>" for a in graded)
    final = paths.final_grades_file()
    final_line = (f'Final grades, course-wide: <a href="{final.name}">{final.name}</a> (every student\'s points per '
                  "assignment, the total, and the written answers still to grade)." if final.exists() else
                  "The course-wide final grades are not written yet: make grades writes them.")
    path = course_page_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page("Course grades", [f"<table><thead><tr>{header}</tr></thead><tbody>{rows}</tbody></table>"
                                           if graded else "<p>No assignment has been graded yet.</p>",
                                           f"<p>{final_line}</p>", f"<p>{html.escape(HAND_GRADING)}</p>"]))
    return path
