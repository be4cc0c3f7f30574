"""Similar submissions, with the evidence an instructor reviews: never a verdict, never a grade.

After a batch, per assignment, every pair of graded students is compared on their answers only, on several measures,
each its own evidence:

- code: the answer code cells as code (copydetect's tokenizer: names, strings, docstrings and comments normalised
  away, then winnowed k-gram fingerprints, as MOSS does), pooled over the answers, so functions in another order match;
- written answers: their words, fingerprinted the same way, pooled;
- each answer on its own, code or written, so that two copied cells among fifteen stand out;
- each written answer's meaning: the cosine of the two answers' vectors from the course's sentence encoder
  (course.grading.sentence_encoder), so that a paraphrase is evidence too.

Fingerprints anyone could share count for nothing: the release's (given code and stubs), the instructor's solution's,
and those more than a few of the class have (COMMON_SHARE: what the class writes alike). A fingerprint measure's figure for a pair is the
larger of the two students' shares of their own fingerprints that the other has (a copy padded with dead code keeps
the original's share high), discounted where the smaller student has few fingerprints (SHRINK): 8 of 8 alike is weak
evidence, 80 of 80 strong.

A figure is unusual for this class when it is at or above the measure's floor (FLOOR), stands Z robust standard
deviations above the class's typical figure on that measure (its median over the pairs; the spread is 1.4826 times
the median absolute deviation, at least MIN_SPREAD), and few of the class's pairs reach it (RARE_PER_STUDENT): the
class's own distribution says how alike independent work is, so a short question everyone answers alike, or a cell a
quarter of the class writes the same way, lists no one. A figure counts only where there is enough of it: MIN_SHARED fingerprints
in common, or written answers of MIN_WORDS words each.

Answer by answer, the evidence is how rare the pair's alike answers are together: for each answer on which the pair is
alike (ALIKE or more of the smaller one's fingerprints, discounted as above), the share of the class's pairs as alike
on it, and the pair's figure is the sum of their negative logarithms (its surprise, in nats). The written answers'
meanings make a second such measure of their own (alike: a cosine at FLOOR["meaning"] or more and Z_ALIKE robust
deviations above the class's on that question), so that five answers each reworded stand out together though none does
alone. Two cells that no other
pair shares stand out among fifteen; three cells that a fifth of the class writes alike do not.

A pair is listed when any of its measures is unusual, and says which. Groups are sets of three or more students every
two of whom are listed (no chaining through one link). The matching passages of a listed pair's answers are those of
the fingerprints its figures count, and are highlighted side by side in the report. The k-grams are hashed the same
way in every process (`Fingerprint`), so the same class gets the same figures at every run.

Runs in the driver on the submitted notebooks (read as untrusted files: no student code runs), after grading,
and changes no grade.
"""

from __future__ import annotations

import csv
import functools
import hashlib
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np
from copydetect import compare_files
from copydetect.utils import filter_code, get_token_coverage, highlight_overlap, winnow

from course import notebook_cache, paths, untrusted

K, WINDOW = 25, 6  # copydetect's defaults: noise threshold 25 characters of normalised code, guarantee 30
# Each family of measures: the least figure that lists a pair, how many robust standard deviations above the class's
# typical figure it must stand, and the least spread a class is taken to have (a class whose independent pairs share
# nothing has none). Pooled code and text, and one answer's fingerprints, are shares; "answers" is a surprise in nats
# (its floor grows with the class: CHANCE); meaning is a cosine (docs/grading.md, "Similar submissions": how they were chosen).
FLOOR = {"code": 0.3, "text": 0.3, "answer": 0.85, "answers": 3.0, "meaning": 0.85}
CHANCE = 20  # a surprise lists a pair only above ln(the class's pairs) + ln(CHANCE): fewer than one pair in CHANCE
#              classes would be as surprising by chance alone
Z = {"code": 4.0, "text": 4.0, "answer": 4.0, "answers": 3.0, "meaning": 3.0}
MIN_SPREAD = {"code": 0.05, "text": 0.05, "answer": 0.05, "answers": 1.0, "meaning": 0.05}
NEAR_IDENTICAL = {"code": 0.9, "text": 0.9, "answer": 0.9, "answers": np.inf, "meaning": 0.97}
ALIKE = 0.6  # an answer whose discounted share is this or more is alike, and counts towards the surprise
Z_ALIKE = 2.0  # a written answer whose meaning stands this many robust deviations above its class's (and at its floor)
#                is alike, and counts towards the meaning's surprise
CALIBRATION_PAIRS = 10  # below this many pairs (a class under five), the floors alone decide
RARE_PER_STUDENT, RARE_PAIRS = 0.1, 6  # a figure lists a pair only if at most this many pairs per student of the class
#                                      (at least RARE_PAIRS) are as alike on that measure: copies grow with the class,
#                                      not with its pairs; writing alike by chance grows with its pairs
RARE_ANSWER_PAIRS = 3  # one answer alone lists a pair only if at most this many pairs are as alike on it (a group of
#                        three who copied one cell): a cell several pairs share is an implementation the class shares
MIN_SHARED = 12  # fingerprints in common below which a fingerprint figure is no evidence (a few lines alike)
SHRINK = 8  # a fingerprint figure is shared / (the smaller student's fingerprints + SHRINK): the larger share, discounted
#            where there is little of it (8 of 8 fingerprints alike is 50%, 80 of 80 is 91%)
MIN_WORDS = 12  # written answers shorter than this are not compared by meaning
COMMON_SHARE, COMMON_STUDENTS = 0.5, 4  # a fingerprint more students have than this share of the class (and more
#                                         than COMMON_STUDENTS) is what the class writes alike, no evidence between two
MIN_GROUP = 3
NOTEBOOK_LIMIT = 64 * 2**20
ANSWER_CHARS = 50_000  # of each answer, the part compared (a hostile answer of megabytes costs no more than this)
OPEN, CLOSE = "\0match\0", "\0/match\0"  # where copydetect marks a match, before the text is escaped


@dataclass(frozen=True)
class Answers:
    """One notebook's answers: code of each answer cell, and the written answers' text, by grade id."""

    code: dict[str, str]
    text: dict[str, str]


@dataclass(frozen=True)
class Measure:
    """One measure over a class of N students: each pair's figure, and from which figure this class lists a pair."""

    name: str  # "code", "written answers", "answer by answer", an answer's id, or "<answer id> (meaning)"
    family: str  # "code", "text" (pooled), "answer" (one answer's fingerprints), "answers"
    #              (answer by answer) or "meaning" (one written answer's)
    answer: str | None  # the answer it compares, for one answer's measures
    figures: np.ndarray  # (N, N) each pair's figure: the larger share discounted (SHRINK), a surprise, or a cosine
    shares: np.ndarray  # (N, N) of row student's fingerprints, the share column student has (the figure otherwise)
    shared: np.ndarray  # (N, N) fingerprints in common (0 where not fingerprints)
    wrote: np.ndarray  # (N, N) bool: both students wrote something this measure compares
    counts: np.ndarray  # (N, N) bool: ...and enough of it for the pair's figure to be evidence
    typical: float  # the class's median figure over the pairs that both wrote something here
    threshold: float  # the least figure this class lists
    cut: float  # for one answer's measures, the least figure that is alike (ALIKE, or a meaning's Z_ALIKE)

    @functools.cached_property
    def unusual_pairs(self) -> np.ndarray:
        """(N, N) bool: the pairs this measure lists."""
        return self.counts & (self.figures >= self.threshold)

    @functools.cached_property
    def alike_pairs(self) -> np.ndarray:
        """(N, N) bool, for one answer's measures: the pairs whose answers are alike (at `cut` or more)."""
        if self.family not in ("answer", "meaning"):
            return np.zeros_like(self.counts)
        return self.counts & (self.figures >= self.cut)

    @functools.cached_property
    def compared(self) -> int:
        """How many of the class's pairs both wrote something here."""
        return len(class_values(self.figures, self.wrote))

    @functools.cached_property
    def as_alike(self) -> np.ndarray:
        """(N, N) for each pair, the share of the class's pairs (that both wrote something here) at least as alike."""
        values = np.sort(class_values(self.figures, self.wrote))
        return (len(values) - np.searchsorted(values, self.figures, side="left")) / max(len(values), 1)

    def unusual(self, i: int, j: int) -> bool:
        return bool(self.unusual_pairs[i, j])

    def alike(self, i: int, j: int) -> bool:
        """For one answer's measures: the pair's answers are alike (their figure counts towards the surprise)."""
        return bool(self.alike_pairs[i, j])


@dataclass(frozen=True)
class Reason:
    """Why a pair is listed: one measure on which it is unusual for its class, in words."""

    measure: str
    family: str
    text: str

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Pair:
    """Two students: in code and in written text (pooled), of each one's fingerprints the share the other has and how
    many they share; their closest written answer in meaning; and the measures on which they are unusual."""

    first: str
    second: str
    code: tuple[float, float] = (0.0, 0.0)
    text: tuple[float, float] = (0.0, 0.0)
    shared: dict[str, int] = field(default_factory=dict)  # kind -> fingerprints in common
    meaning: float | None = None  # the largest cosine of their written answers of MIN_WORDS or more, question by question
    reasons: tuple[Reason, ...] = ()

    @property
    def similarity(self) -> float:
        """The larger of the pooled code and text figures: how much of one student's answers the other has."""
        return max(max(self.code), max(self.text))

    @property
    def listed(self) -> bool:
        return bool(self.reasons)

    @property
    def listed_by(self) -> str:
        """The measures that list the pair, shortly: 'code; answer-attention; reflection-2 (meaning)'."""
        return "; ".join(reason.measure for reason in self.reasons)


@dataclass
class Similarity:
    """An assignment's similarity: its measures, every pair with something in common (listed pairs first, then most
    similar first), the listed ones and their groups."""

    assignment: str
    answers: dict[str, Answers]  # student -> their answers
    measures: list[Measure] = field(default_factory=list)
    pairs: list[Pair] = field(default_factory=list)
    counted: dict[str, dict[str, set[int]]] = field(default_factory=dict)  # student -> answer -> fingerprints counted

    @property
    def students(self) -> tuple[str, ...]:
        return tuple(sorted(self.answers))

    @property
    def matrix(self) -> np.ndarray:
        """(N, N) each pair's similarity, in the students' order (0 for pairs with nothing in common)."""
        index = {student: i for i, student in enumerate(self.students)}
        matrix = np.zeros((len(index), len(index)))
        for pair in self.pairs:
            matrix[index[pair.first], index[pair.second]] = matrix[index[pair.second], index[pair.first]] = \
                pair.similarity
        return matrix

    @property
    def listed(self) -> list[Pair]:
        return [p for p in self.pairs if p.listed]

    @property
    def clusters(self) -> list[tuple[str, ...]]:
        """Groups of MIN_GROUP or more students every two of whom are listed (the maximal cliques of the listed
        pairs), largest first."""
        linked: dict[str, set[str]] = {}
        for pair in self.listed:
            linked.setdefault(pair.first, set()).add(pair.second)
            linked.setdefault(pair.second, set()).add(pair.first)
        groups = [tuple(sorted(g)) for g in maximal_cliques(linked) if len(g) >= MIN_GROUP]
        return sorted(groups, key=lambda g: (-len(g), g))

    def pair(self, first: str, second: str) -> Pair | None:
        return next((p for p in self.pairs if {p.first, p.second} == {first, second}), None)


def maximal_cliques(linked: dict[str, set[str]]) -> list[set[str]]:
    """The maximal sets of nodes every two of which are linked (Bron and Kerbosch, with a pivot)."""
    found: list[set[str]] = []

    def extend(clique: set[str], candidates: set[str], excluded: set[str]) -> None:
        if not candidates and not excluded:
            found.append(clique)
            return
        pivot = max(candidates | excluded, key=lambda node: len(linked[node] & candidates))
        for node in sorted(candidates - linked[pivot]):
            extend(clique | {node}, candidates & linked[node], excluded & linked[node])
            candidates = candidates - {node}
            excluded = excluded | {node}

    extend(set(), set(linked), set())
    return found


def answers_of(notebook: nbformat.NotebookNode) -> Answers:
    """The answer cells of a notebook (nbgrader's solution cells), code and written."""
    code, text = {}, {}
    for cell in notebook.cells:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("solution") and isinstance(cell.get("source"), str):
            (code if cell.cell_type == "code" else text)[str(meta.get("grade_id"))] = cell.source
    return Answers(code, text)


def read_answers(notebook: Path) -> Answers | None:
    """A submitted notebook's answers (None if it cannot be read)."""
    try:
        return answers_of(nbformat.reads(untrusted.read_text(notebook, NOTEBOOK_LIMIT), as_version=4))
    except Exception:  # missing, a link, too large, not a notebook
        return None


def words(text: str) -> str:
    """Written text as compared: lower-case words, single spaces."""
    return " ".join(re.findall(r"[a-z0-9]+", text.lower()))


def stable_hash(kgram: str) -> int:
    """A k-gram's 64-bit hash, the same in every process."""
    return int.from_bytes(hashlib.blake2b(kgram.encode(), digest_size=8).digest(), "little", signed=True)


class Fingerprint:
    """One answer's fingerprint, with the attributes copydetect's comparison reads (those of its CodeFingerprint):
    code tokenized and normalised by copydetect (text as words), k-grams winnowed by copydetect. Unlike its
    CodeFingerprint, the k-grams are hashed the same way in every process: copydetect hashes them with Python's
    hash(), which each process seeds anew, so the same class would score differently at every run."""

    def __init__(self, source: str, kind: str):
        self.k, self.raw_code = K, source if kind == "code" else words(source)
        self.filtered_code, self.offsets = (filter_code(self.raw_code, "answer.py") if kind == "code"
                                            else (self.raw_code, np.array([])))
        kgrams = np.array([stable_hash(self.filtered_code[i:i + K]) for i in range(len(self.filtered_code) - K + 1)],
                          dtype=np.int64)
        selected, positions = winnow(kgrams, WINDOW, remove_duplicates=False)
        self.hashes = set(selected.tolist())
        self.hash_idx: dict[int, list[int]] = {}
        for value, position in zip(selected.tolist(), positions.tolist()):
            self.hash_idx.setdefault(value, []).append(position)
        self.token_coverage = get_token_coverage(self.hash_idx, K, len(self.filtered_code))


def answer_hashes(source: str, kind: str) -> set[int]:
    """One answer's fingerprints (none for an empty answer, or code pygments cannot tokenize)."""
    if not source.strip():
        return set()
    try:
        return Fingerprint(source, kind).hashes
    except Exception:
        return set()


def reference_answers(assignment: str) -> list[Answers]:
    """What everyone may share: every cell of the release's notebook (given code and prose, the answer cells'
    stubs) and the instructor's solution."""
    release = notebook_cache.shared(paths.release_dir(assignment) / f"{assignment}.ipynb")
    source = notebook_cache.shared(paths.source_notebook(assignment))
    given = Answers({f"given-{i}": c.source for i, c in enumerate(release.cells) if c.cell_type == "code"},
                    {f"given-{i}": c.source for i, c in enumerate(release.cells) if c.cell_type == "markdown"})
    return [given, answers_of(source)]


def counted_fingerprints(answers: dict[str, Answers], everyone: list[Answers]) -> dict[str, dict[str, set[int]]]:
    """student -> answer id -> the fingerprints of that answer that count as evidence: not `everyone`'s (of any cell
    of the same kind), and not held by more than COMMON_SHARE of the class and more than COMMON_STUDENTS."""
    counted: dict[str, dict[str, set[int]]] = {student: {} for student in answers}
    for kind in ("code", "text"):
        def of(a: Answers) -> dict[str, str]:
            return a.code if kind == "code" else a.text
        shared_by_everyone = set().union(*(answer_hashes(s, kind) for a in everyone for s in of(a).values()))
        for student, theirs in answers.items():
            for answer, source in of(theirs).items():
                counted[student][answer] = answer_hashes(source, kind) - shared_by_everyone
        if len(answers) > COMMON_STUDENTS:
            holders: dict[int, int] = {}
            for student, theirs in answers.items():
                for h in set().union(*(counted[student][a] for a in of(theirs))):
                    holders[h] = holders.get(h, 0) + 1
            common = {h for h, n in holders.items() if n > max(COMMON_SHARE * len(answers), COMMON_STUDENTS)}
            for student, theirs in answers.items():
                for answer in of(theirs):
                    counted[student][answer] -= common
    return counted


def class_values(figures: np.ndarray, wrote: np.ndarray) -> np.ndarray:
    """The figures of the class's pairs that both wrote something here, each pair once."""
    return figures[np.triu(wrote, k=1)]


@dataclass(frozen=True)
class Calibration:
    """How alike a class's pairs are on one measure."""

    typical: float  # the median figure
    spread: float  # 1.4826 times the median absolute deviation, at least MIN_SPREAD
    threshold: float  # the least figure the class lists


def calibrated(figures: np.ndarray, wrote: np.ndarray, family: str) -> Calibration:
    """A measure's calibration on its class: `figures` (N, N), over the pairs that both wrote something here (`wrote`,
    (N, N) bool). The least figure listed is the floor, Z robust standard deviations above the typical figure (but no
    more than NEAR_IDENTICAL: answers alike as that are unusual unless many pairs are), and above the figures of all
    but RARE_PER_STUDENT pairs per student of the class (at least RARE_PAIRS)."""
    values = class_values(figures, wrote)
    floor = max(FLOOR[family], np.log(max(len(values), 1)) + np.log(CHANCE)) if family == "answers" else FLOOR[family]
    if len(values) < CALIBRATION_PAIRS:
        return Calibration(float(np.median(values)) if len(values) else 0.0, MIN_SPREAD[family], floor)
    typical = float(np.median(values))
    spread = max(1.4826 * float(np.median(np.abs(values - typical))), MIN_SPREAD[family])
    students = int(wrote.any(axis=1).sum())
    allowed = RARE_ANSWER_PAIRS if family == "answer" else max(int(RARE_PER_STUDENT * students), RARE_PAIRS)
    descending = np.sort(values)[::-1]
    rare = float(np.nextafter(descending[allowed], np.inf)) if allowed < len(descending) else 0.0
    return Calibration(typical, spread, max(floor, min(typical + Z[family] * spread, NEAR_IDENTICAL[family]), rare))


def fingerprint_measure(name: str, family: str, answer: str | None, sets: list[set[int]]) -> Measure:
    """A fingerprint measure over the class, from each student's counted fingerprints (`sets`, in students' order)."""
    vocabulary = {h: i for i, h in enumerate(sorted(set().union(*sets)))}
    incidence = np.zeros((len(sets), len(vocabulary)), dtype=np.float32)
    for row, found in enumerate(sets):
        incidence[row, [vocabulary[h] for h in found]] = 1
    shared = incidence @ incidence.T
    sizes = incidence.sum(axis=1)
    shares = shared / np.maximum(sizes, 1)[:, None]
    figures = shared / (np.minimum(sizes[:, None], sizes[None, :]) + SHRINK)
    wrote = (sizes[:, None] > 0) & (sizes[None, :] > 0)
    np.fill_diagonal(wrote, False)
    calibration = calibrated(figures, wrote, family)
    return Measure(name, family, answer, figures, shares, shared.astype(int), wrote, wrote & (shared >= MIN_SHARED),
                   calibration.typical, calibration.threshold, ALIKE if family == "answer" else calibration.threshold)


def answer_by_answer(answers: list[Measure], name: str, n: int) -> Measure:
    """The surprise of each pair's alike answers together: the sum over the answer measures (one answer's
    fingerprints, or a written answer's meaning) on which the pair is alike of -ln(the share of the class's pairs as
    alike on it), for a class of `n` students."""
    surprise, wrote = np.zeros((n, n)), np.zeros((n, n), dtype=bool)
    for measure in answers:
        surprise += np.where(measure.alike_pairs, -np.log(np.maximum(measure.as_alike, 1e-12)), 0.0)
        wrote |= measure.wrote
    calibration = calibrated(surprise, wrote, "answers")
    return Measure(name, "answers", None, surprise, surprise, np.zeros((n, n), dtype=int), wrote,
                   wrote & (surprise > 0), calibration.typical, calibration.threshold, calibration.threshold)


def meaning_measure(answer: str, texts: list[str], stub: str) -> Measure | None:
    """The cosine of each pair's written answer `answer` (texts, in students' order; the release's `stub` counts as
    unwritten), for answers of MIN_WORDS words or more; None if fewer than two students wrote one."""
    from course.grading.sentence_encoder import meaning_vectors

    written = [i for i, text in enumerate(texts) if len(words(text).split()) >= MIN_WORDS and words(text) != words(stub)]
    if len(written) < 2:
        return None
    n = len(texts)
    vectors = meaning_vectors([texts[i] for i in written])
    figures = np.zeros((n, n))
    figures[np.ix_(written, written)] = np.clip(vectors @ vectors.T, -1.0, 1.0)
    wrote = np.zeros((n, n), dtype=bool)
    wrote[np.ix_(written, written)] = True
    np.fill_diagonal(wrote, False)
    c = calibrated(figures, wrote, "meaning")
    return Measure(f"{answer} (meaning)", "meaning", answer, figures, figures, np.zeros((n, n), dtype=int), wrote,
                   wrote, c.typical, c.threshold, max(FLOOR["meaning"], c.typical + Z_ALIKE * c.spread))


def class_measures(answers: dict[str, Answers], counted: dict[str, dict[str, set[int]]],
                   stubs: Answers) -> list[Measure]:
    """Every measure over the class: code and written answers pooled; the surprise of the answers' fingerprints
    together, and of the written answers' meanings together; each answer's fingerprints; each written answer's
    meaning. The answers are the release's answer cells (`stubs`)."""
    students = sorted(answers)
    code_ids, text_ids = sorted(stubs.code), sorted(stubs.text)  # the release's answer cells, whatever a notebook adds

    def pooled(ids: list[str]) -> list[set[int]]:
        return [set().union(*(counted[s].get(a, set()) for a in ids)) for s in students]

    each = [fingerprint_measure(a, "answer", a, [counted[s].get(a, set()) for s in students])
            for a in code_ids + text_ids]
    meanings = [m for m in (meaning_measure(a, [answers[s].text.get(a, "") for s in students], stubs.text.get(a, ""))
                            for a in text_ids) if m is not None]
    return [fingerprint_measure("code", "code", None, pooled(code_ids)),
            fingerprint_measure("written answers", "text", None, pooled(text_ids)),
            answer_by_answer(each, "answer by answer", len(students)),
            answer_by_answer(meanings, "meaning, answer by answer", len(students)),
            *each, *meanings]


def reason(measure: Measure, i: int, j: int, measures: list[Measure]) -> Reason:
    """Why the pair (i, j) is unusual on `measure`, in words, with its figures and its class's."""
    if measure.family == "meaning":
        text = (f"{measure.name}: the same meaning in other words (cosine {measure.figures[i, j]:.2f}; this class "
                f"typically {measure.typical:.2f}, listed from {measure.threshold:.2f})")
    elif measure.family == "answers":
        kind = "meaning" if measure.name.startswith("meaning") else "answer"
        alike = [(m, m.as_alike[i, j], m.compared) for m in measures if m.family == kind and m.alike(i, j)]
        parts = ", ".join((f"{m.name} cosine {m.figures[i, j]:.2f}" if m.family == "meaning" else
                           f"{m.name} {m.shares[i, j]:.0%} and {m.shares[j, i]:.0%}")
                          + f" ({max(round(rarity * pairs), 1)} of {pairs} pairs as alike)" for m, rarity, pairs in alike)
        text = (f"{measure.name}: {parts}; together a surprise of {measure.figures[i, j]:.1f} (this class typically "
                f"{measure.typical:.1f}, listed from {measure.threshold:.1f})")
    else:
        text = (f"{measure.name}: {measure.shares[i, j]:.0%} and {measure.shares[j, i]:.0%} of each one's fingerprints "
                f"alike, {measure.shared[i, j]} in common (this class typically {measure.typical:.0%}, listed from "
                f"{measure.threshold:.0%} discounted)")
    return Reason(measure.name, measure.family, text)


def compare(assignment: str, answers: dict[str, Answers]) -> Similarity:
    """The similarity of every pair of `answers` (student -> their answers), on the release's answer cells only, each
    up to ANSWER_CHARS."""
    if len(answers) < 2:  # nothing to compare
        return Similarity(assignment, answers)
    stubs = stubs_of(assignment)
    answers = {student: Answers({a: s[:ANSWER_CHARS] for a, s in theirs.code.items() if a in stubs.code},
                                {a: s[:ANSWER_CHARS] for a, s in theirs.text.items() if a in stubs.text})
               for student, theirs in answers.items()}
    result = Similarity(assignment, answers)
    students = result.students
    everyone = reference_answers(assignment)
    result.counted = counted_fingerprints(answers, everyone)
    result.measures = class_measures(answers, result.counted, stubs)
    code, text = result.measures[0], result.measures[1]
    meanings = [m for m in result.measures if m.family == "meaning"]
    shown = np.triu(np.logical_or.reduce([code.shared > 0, text.shared > 0,
                                          *(m.unusual_pairs for m in result.measures)]), k=1)
    for i, j in zip(*np.nonzero(shown)):
        reasons = tuple(reason(m, i, j, result.measures) for m in result.measures if m.unusual(i, j))
        closest = max((float(m.figures[i, j]) for m in meanings if m.counts[i, j]), default=None)
        result.pairs.append(Pair(students[i], students[j], (float(code.shares[i, j]), float(code.shares[j, i])),
                                 (float(text.shares[i, j]), float(text.shares[j, i])),
                                 {"code": int(code.shared[i, j]), "text": int(text.shared[i, j])}, closest, reasons))
    result.pairs.sort(key=lambda p: (not p.listed, -p.similarity, p.first, p.second))
    return result


def stubs_of(assignment: str) -> Answers:
    """The release's answer cells as handed out (their stubs)."""
    return answers_of(notebook_cache.shared(paths.release_dir(assignment) / f"{assignment}.ipynb"))


def marked(fingerprint: Fingerprint, other: Fingerprint, counting: set[int]) -> tuple[str, str]:
    """Both texts as escaped HTML, the passages of the fingerprints in `counting` that both have in <mark>."""
    for each in (fingerprint, other):
        each.hashes = each.hashes & counting
    overlap, _, slices = compare_files(fingerprint, other)
    if not overlap:
        return html.escape(fingerprint.raw_code), html.escape(other.raw_code)
    return tuple(html.escape(highlight_overlap(each.raw_code, cut, OPEN, CLOSE)[0]).replace(OPEN, "<mark>")
                 .replace(CLOSE, "</mark>") for each, cut in zip((fingerprint, other), slices))


def side_by_side(similarity: Similarity, pair: Pair) -> list[tuple[str, str, str, str]]:
    """The answers that list a pair, each as (answer id, what is alike, the first's answer and the second's as escaped
    HTML): those alike where the pair is listed answer by answer, and where the pooled code or text lists it, every
    answer of that kind with fingerprints in common. Only the fingerprints the figures count are marked (not the release's, the solution's or
    the class's common code): code is shown as written, written answers as the words compared; an answer alike in
    meaning only is shown unmarked."""
    first, second = similarity.answers[pair.first], similarity.answers[pair.second]
    index = {student: i for i, student in enumerate(similarity.students)}
    i, j = index[pair.first], index[pair.second]
    listing = {reason.family for reason in pair.reasons}
    views = []
    for measure in (m for m in similarity.measures if m.answer is not None):
        kind = "code" if measure.answer in first.code else "text"
        a, b = ((first.code, second.code) if kind == "code" else (first.text, second.text))
        if measure.answer not in a or measure.answer not in b:
            continue
        if measure.family == "answer" and measure.shared[i, j] and (
                ("answers" in listing and measure.alike(i, j)) or kind in listing):
            counting = similarity.counted[pair.first][measure.answer] & similarity.counted[pair.second][measure.answer]
            try:
                shown = marked(Fingerprint(a[measure.answer], kind), Fingerprint(b[measure.answer], kind), counting)
            except Exception:  # code pygments cannot tokenize
                continue
            views.append((measure.answer, f"{measure.shares[i, j]:.0%} and {measure.shares[j, i]:.0%} of each one's "
                          "fingerprints alike", *shown))
        elif measure.family == "meaning" and (measure.unusual(i, j) or ("answers" in listing and measure.alike(i, j))):
            views.append((measure.answer, f"the same meaning (cosine {measure.figures[i, j]:.2f})",
                          html.escape(a[measure.answer]), html.escape(b[measure.answer])))
    return views


def write_csv(similarity: Similarity, target: Path) -> None:
    """Every pair with fingerprints in common or listed, listed first, then most similar first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student_a", "student_b", "similarity", "code_share_a", "code_share_b",
                         "code_fingerprints_shared", "text_share_a", "text_share_b", "text_fingerprints_shared",
                         "closest_meaning", "listed", "listed_by"])
        for p in similarity.pairs:
            writer.writerow([p.first, p.second, f"{p.similarity:.3f}", f"{p.code[0]:.3f}", f"{p.code[1]:.3f}",
                             p.shared.get("code", 0), f"{p.text[0]:.3f}", f"{p.text[1]:.3f}", p.shared.get("text", 0),
                             "" if p.meaning is None else f"{p.meaning:.3f}", "yes" if p.listed else "",
                             p.listed_by])


def class_similarity(assignment: str, students: list[str]) -> Similarity:
    """The similarity of the graded students' submitted notebooks (those that can be read)."""
    answers = {}
    for student in students:
        found = read_answers(paths.submission_dir(student, assignment) / f"{assignment}.ipynb")
        if found is not None:
            answers[student] = found
    return compare(assignment, answers)
