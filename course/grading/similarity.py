"""Similar submissions, with the evidence an instructor reviews: never a verdict, never a grade.

After a batch, per assignment, every pair of graded students is compared on their answers only: the answer code
cells as code (copydetect's tokenizer: names, strings, docstrings and comments normalised away, then winnowed
k-gram fingerprints, as MOSS does), the written answers as text (words, case and punctuation dropped). Fingerprints
that anyone could share count for nothing: the release's (given code and stubs), the instructor's solution's, and
those most of the class has (code most students write alike). Each answer is fingerprinted on its own and the
fingerprints pooled, so functions in another order match as well.

For a pair, in code and in text, the share of each student's fingerprints that the other has; the larger share
counts (a copy padded with dead code keeps the original's share high), and the pair's similarity is its mean over
the kinds both students wrote (alike in code and in prose is stronger evidence than either). A pair is listed for
review at THRESHOLD or above, with at least MIN_SHARED fingerprints in common (a few lines alike are no evidence);
pairs that share students form clusters. The matching regions of a listed pair's answers come from copydetect's
comparison of the two (highlighted side by side in the report). The k-grams are hashed the same way in every
process (`Fingerprint`), so the same class gets the same figures at every run.

Runs in the driver on the submitted notebooks (read as untrusted files: no student code runs), after grading,
and changes no grade.
"""

from __future__ import annotations

import csv
import hashlib
import html
import re
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import numpy as np
from copydetect import compare_files
from copydetect.utils import filter_code, get_token_coverage, highlight_overlap, winnow

from course import paths
from course.grading import untrusted

K, WINDOW = 25, 6  # copydetect's defaults: noise threshold 25 characters of normalised code, guarantee 30
THRESHOLD = 0.6  # similarity from which a pair is listed for review (docs/benchmarks.md: how it was chosen)
MIN_SHARED = 8  # fingerprints in common below which a pair is not listed, whatever its shares
COMMON_SHARE = 0.5  # a fingerprint more than this share of the class has is code the class writes alike
COMMON_MIN_STUDENTS = 4  # ...counted only in a class of at least this many students
NOTEBOOK_LIMIT = 64 * 2**20
OPEN, CLOSE = "\0match\0", "\0/match\0"  # where copydetect marks a match, before the text is escaped


@dataclass(frozen=True)
class Answers:
    """One notebook's answers: code of each answer cell, and the written answers' text, by grade id."""

    code: dict[str, str]
    text: dict[str, str]


@dataclass(frozen=True)
class Pair:
    """Two students' similarity, in code and in written text: of each one's fingerprints, the share the other has,
    and how many they share."""

    first: str
    second: str
    code: tuple[float, float] = (0.0, 0.0)
    text: tuple[float, float] = (0.0, 0.0)
    shared: dict[str, int] = field(default_factory=dict)  # kind -> fingerprints in common
    kinds: tuple[str, ...] = ("code", "text")  # the kinds both students wrote something of

    @property
    def similarity(self) -> float:
        """The mean, over the kinds both wrote, of the larger share: a pair alike in code and in prose is stronger
        evidence than one alike in either."""
        larger = {"code": max(self.code), "text": max(self.text)}
        return sum(larger[kind] for kind in self.kinds) / len(self.kinds) if self.kinds else 0.0

    @property
    def evidence(self) -> int:
        """Fingerprints in common, all kinds."""
        return sum(self.shared.values())


@dataclass
class Similarity:
    """An assignment's similarity: every pair with fingerprints in common (most similar first), the listed ones and
    their clusters."""

    assignment: str
    answers: dict[str, Answers]  # student -> their answers
    pairs: list[Pair] = field(default_factory=list)

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
        return [p for p in self.pairs if p.similarity >= THRESHOLD and p.evidence >= MIN_SHARED]

    @property
    def clusters(self) -> list[tuple[str, ...]]:
        """Groups of three or more students joined by listed pairs, largest first."""
        group = {s: {s} for s in self.students}
        for pair in self.listed:
            merged = group[pair.first] | group[pair.second]
            for student in merged:
                group[student] = merged
        unique = {tuple(sorted(g)) for g in group.values() if len(g) >= 3}
        return sorted(unique, key=lambda g: (-len(g), g))


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


def hashes(answers: Answers, kind: str) -> set[int]:
    """The pooled fingerprints of a notebook's answers of one kind (empty answers give none)."""
    sources = answers.code if kind == "code" else answers.text
    found: set[int] = set()
    for source in sources.values():
        if source.strip():
            try:
                found.update(Fingerprint(source, kind).hashes)
            except Exception:  # code pygments cannot tokenize contributes nothing
                continue
    return found


def reference_answers(assignment: str) -> list[Answers]:
    """What everyone may share: every cell of the release's notebook (given code and prose, the answer cells'
    stubs) and the instructor's solution."""
    release = nbformat.read(paths.release_dir(assignment) / f"{assignment}.ipynb", as_version=4)
    source = nbformat.read(paths.source_notebook(assignment), as_version=4)
    given = Answers({f"given-{i}": c.source for i, c in enumerate(release.cells) if c.cell_type == "code"},
                    {f"given-{i}": c.source for i, c in enumerate(release.cells) if c.cell_type == "markdown"})
    return [given, answers_of(source)]


def shared_fingerprints(answers: dict[str, Answers], everyone: list[Answers],
                        kind: str) -> tuple[np.ndarray, np.ndarray]:
    """For the students of `answers` (sorted), in answers of `kind`: ((N, N) fingerprints each pair has in common,
    (N,) fingerprints of each), leaving out what everyone may share (`everyone`'s) and what most of the class has."""
    students = sorted(answers)
    shared_by_everyone = set().union(*(hashes(a, kind) for a in everyone))
    found = [hashes(answers[s], kind) - shared_by_everyone for s in students]
    if len(students) >= COMMON_MIN_STUDENTS:
        counts: dict[int, int] = {}
        for h in (h for f in found for h in f):
            counts[h] = counts.get(h, 0) + 1
        found = [{h for h in f if counts[h] <= COMMON_SHARE * len(students)} for f in found]
    vocabulary = {h: i for i, h in enumerate(sorted(set().union(*found)))}
    incidence = np.zeros((len(students), len(vocabulary)), dtype=np.float32)
    for row, f in enumerate(found):
        incidence[row, [vocabulary[h] for h in f]] = 1
    return incidence @ incidence.T, incidence.sum(axis=1)


def compare(assignment: str, answers: dict[str, Answers]) -> Similarity:
    """The similarity of every pair of `answers` (student -> their answers)."""
    result = Similarity(assignment, answers)
    students = result.students
    if len(students) < 2:  # nothing to compare
        return result
    everyone = reference_answers(assignment)
    common = {kind: shared_fingerprints(answers, everyone, kind) for kind in ("code", "text")}
    for i in range(len(students)):
        for j in range(i + 1, len(students)):
            shares, counts = {}, {}
            for kind, (together, sizes) in common.items():
                counts[kind] = int(together[i, j])
                shares[kind] = (counts[kind] / max(sizes[i], 1), counts[kind] / max(sizes[j], 1))
            if any(counts.values()):
                kinds = tuple(kind for kind, (_, sizes) in common.items() if sizes[i] and sizes[j])
                pair = Pair(students[i], students[j], shares["code"], shares["text"], counts, kinds)
                result.pairs.append(pair)
    result.pairs.sort(key=lambda p: (-p.similarity, -p.evidence, p.first, p.second))
    return result


def side_by_side(first: Answers, second: Answers) -> list[tuple[str, float, float, str, str]]:
    """The answers in which copydetect finds a match, each as (answer id, share of the first's answer that matches,
    share of the second's, the first's answer and the second's as escaped HTML with the matches in <mark>). Code is
    shown as written; written answers as the words compared."""
    views = []
    for kind, ours, theirs in (("code", first.code, second.code), ("text", first.text, second.text)):
        for answer in sorted(ours.keys() & theirs.keys()):
            a, b = (ours[answer], theirs[answer]) if kind == "code" else (words(ours[answer]), words(theirs[answer]))
            if not (a.strip() and b.strip()):
                continue
            try:
                overlap, shares, slices = compare_files(Fingerprint(a, kind), Fingerprint(b, kind))
            except Exception:  # code pygments cannot tokenize
                continue
            if overlap:
                marked = [html.escape(highlight_overlap(text, cut, OPEN, CLOSE)[0]).replace(OPEN, "<mark>")
                          .replace(CLOSE, "</mark>") for text, cut in zip((a, b), slices)]
                views.append((answer, float(shares[0]), float(shares[1]), *marked))
    return views


def write_csv(similarity: Similarity, target: Path) -> None:
    """Every pair with fingerprints in common, most similar first."""
    target.parent.mkdir(parents=True, exist_ok=True)
    with target.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["student_a", "student_b", "similarity", "code_share_a", "code_share_b",
                         "code_fingerprints_shared", "text_share_a", "text_share_b", "text_fingerprints_shared",
                         "listed"])
        listed = {(p.first, p.second) for p in similarity.listed}
        for p in similarity.pairs:
            writer.writerow([p.first, p.second, f"{p.similarity:.3f}", f"{p.code[0]:.3f}", f"{p.code[1]:.3f}",
                             p.shared.get("code", 0), f"{p.text[0]:.3f}", f"{p.text[1]:.3f}", p.shared.get("text", 0),
                             "yes" if (p.first, p.second) in listed else ""])


def class_similarity(assignment: str, students: list[str]) -> Similarity:
    """The similarity of the graded students' submitted notebooks (those that can be read)."""
    answers = {}
    for student in students:
        found = read_answers(paths.submission_dir(student, assignment) / f"{assignment}.ipynb")
        if found is not None:
            answers[student] = found
    return compare(assignment, answers)
