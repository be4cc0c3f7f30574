"""Verdicts: compare a probe's data with the instructor's reference data.

A check is all-or-nothing and is worth the points of its nbgrader test cell.
Its verdict is a pure function of data: the judge (course.grading.judge)
applies it in a process where no student code runs, and nbgrader's gradebook
stores what it decided (course.grading.nbgrader_hooks).

A failing verdict names a mistake of the assignment's catalogue (MISTAKES in
its checks.py, with COMMON_MISTAKES) only when the evidence singles it out:
the most specific diagnosis that holds, where evidence is which outputs hold
and which fail, and no other diagnosis as specific naming another mistake.
Otherwise it names none: it says what was observed (the failing output's
`observed`) and lists the two or three candidate causes. Messages give the
named mistake's advice; they never show reference values.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Collection
from dataclasses import dataclass
from functools import cache

import numpy as np

from course import notebook_cache, paths
from course.assignment_parts import part
from course.untrusted import error_name, quoted


@dataclass(frozen=True)
class Expect:
    """One graded output of a probe: it must match the reference (default) or another output (`same_as`).

    `mistake` names, in the assignment's catalogue, the mistake that most often breaks it. Without `observed`, the
    output is targeted: only that mistake breaks it, and its failure alone names it. With `observed` (what a
    failure shows, in the student's terms: "in eval mode the output changes between two calls"), several mistakes
    can break it: its failure alone names none, says `observed`, and lists `mistake` and the check's other
    diagnoses that expect it wrong as candidate causes.
    """

    key: str
    mistake: str
    atol: float = 1e-4
    same_as: str | None = None
    observed: str = ""


@dataclass(frozen=True)
class Clue:
    """An output compared like an Expect but worth nothing: evidence that tells mistakes apart."""

    key: str
    atol: float = 1e-4
    same_as: str | None = None


@dataclass(frozen=True)
class Diagnosis:
    """A mistake recognised by a pattern of evidence: the outputs in `wrong` fail, those in `right` hold."""

    mistake: str
    wrong: tuple[str, ...]
    right: tuple[str, ...] = ()

    @property
    def specificity(self) -> int:
        return len(self.wrong) + len(self.right)


@dataclass(frozen=True)
class Check:
    """A named, graded check of one piece of the notebook: all its expectations must hold."""

    check_id: str
    piece: str
    expects: tuple[Expect, ...]
    clues: tuple[Clue, ...] = ()
    diagnoses: tuple[Diagnosis, ...] = ()


@dataclass(frozen=True)
class Verdict:
    check_id: str
    passed: bool
    message: str
    mistake: str | None = None  # a catalogue name when the check failed and the evidence singled it out


# Mistakes any piece can make, named by the machinery itself rather than an assignment's catalogue.
COMMON_MISTAKES = {
    "not-attempted": "This piece is not written yet: its cell still raises NotImplementedError. Replace the "
                     "`raise NotImplementedError` line with your code.",
    "raises-error": "The code raised an error on the grader's inputs: read the error, and run your code on inputs "
                    "of other shapes and sizes than the notebook's.",
    "state-between-calls": "Called twice on the same inputs, the code gave different results: it keeps state "
                           "between calls (a mutable default argument, a class attribute or a global it changes) or "
                           "draws random numbers without a seed.",
}
# Names that report what happened rather than a cause: an error raised, a stub left as it was.
OBSERVATIONS = ("raises-error", "not-attempted")
STUB_ERROR = "NotImplementedError"
CANDIDATES_SHOWN = 3


def mismatch(got: np.ndarray, want: np.ndarray, atol: float, trusted: bool = False) -> str | None:
    """Why `got` differs from `want`, or None when they agree. Text in `got` is quoted only if it is `trusted` (made
    by the grader's own code, as derived evidence is); text of the probe run is not (untrusted.error_name)."""
    if got.dtype.kind in "US" and got.size == 1 and want.dtype.kind not in "US":  # e.g. an error a probe caught
        text = str(got.ravel()[0])
        if trusted:
            return f"{text!r} where numbers were expected"
        name = error_name(text)
        return f"{f'an error ({name})' if ':' in text and name != 'an error' else 'text'} where numbers were expected"
    if got.shape != want.shape:
        return f"shape {got.shape} where {want.shape} was expected"
    if want.dtype.kind in "US" or got.dtype.kind in "US":
        if got.dtype.kind not in "US":
            return "numbers where text was expected"
        wrong = [i for i, (g, w) in enumerate(zip(got.ravel(), want.ravel())) if g != w]
        if not wrong:
            return None
        item = "it" if got.ndim == 0 else f"item {wrong[0]}"
        if trusted:
            return f"{item} is {str(got.ravel()[wrong[0]])!r}, which is not what was expected"
        return f"{item} is not what was expected"
    if want.dtype == bool or got.dtype == bool:
        return None if np.array_equal(got, want) else "the flag is not what was expected"
    got, want = got.astype(float), want.astype(float)
    if not np.all(np.isfinite(got)):
        return "it contains NaN or infinite values"
    error = np.abs(got - want)
    if np.all(error <= atol + 1e-4 * np.abs(want)):
        return None
    worst = np.unravel_index(np.argmax(error), error.shape) if error.ndim else ()
    return f"values differ (largest difference {error.max():.3g} at index {tuple(int(i) for i in worst)})"


def likely(mistake: str, mistakes: dict[str, str]) -> str:
    """How a message names a mistake of the catalogue `mistakes`, with its advice."""
    return f"Likely mistake `{mistake}`: {mistakes[mistake]}"


NOT_RECORDED = "no output was recorded"


def problems(check: Check, outputs: dict[str, np.ndarray], reference: dict[str, np.ndarray],
             trusted: Collection[str] = ()) -> dict[str, str | None]:
    """What is wrong with each expected output and clue, by key (None: it holds); the text of `trusted` keys (the
    grader's own evidence) may be quoted."""
    found = {}
    for item in check.expects + check.clues:
        wants = outputs if item.same_as else reference  # evidence a student's data gives may have no reference
        if item.key not in outputs or (item.same_as or item.key) not in wants:
            found[item.key] = NOT_RECORDED
            continue
        want = wants[item.same_as or item.key]
        found[item.key] = mismatch(np.asarray(outputs[item.key]), np.asarray(want), item.atol, item.key in trusted)
    return found


def holds(d: Diagnosis, evidence: dict[str, str | None]) -> bool:
    """Whether a diagnosis's pattern holds: its `wrong` outputs fail and its `right` outputs hold."""
    return all(evidence.get(key) for key in d.wrong) and all(key in evidence and not evidence[key] for key in d.right)


def diagnose(check: Check, found: dict[str, str | None]) -> Diagnosis | None:
    """The diagnosis the evidence singles out, or None when it singles out none.

    Candidates are the check's diagnoses and each failing targeted expectation's own mistake (an Expect without
    `observed`); of those whose whole pattern holds, the one with the most outputs in it (the first listed among
    equals: a check lists its expectations upstream first). An output that was not recorded is no evidence for a
    diagnosis; it only fails its own expectation.
    """
    recorded = {key: problem for key, problem in found.items() if problem != NOT_RECORDED}
    holding = [d for d in check.diagnoses if holds(d, recorded)]
    holding += [d for d in (Diagnosis(e.mistake, (e.key,)) for e in check.expects if not e.observed) if holds(d, found)]
    return max(holding, key=lambda d: d.specificity) if holding else None  # max keeps the first of equals


def candidates(check: Check, failing: list[Expect]) -> list[str]:
    """The catalogued mistakes that can break the failing outputs: each one's own, then the check's diagnoses that
    expect it wrong, without repeats, the first CANDIDATES_SHOWN."""
    names = [name for e in failing for name in (e.mistake, *(d.mistake for d in check.diagnoses if e.key in d.wrong))]
    return list(dict.fromkeys(names))[:CANDIDATES_SHOWN]


def observation(check: Check, found: dict[str, str | None], mistakes: dict[str, str]) -> str:
    """What a failing check's outputs show, when the evidence singles out no mistake: the first failing output's
    observation, and the candidate causes with their advice."""
    failing = [e for e in check.expects if found[e.key]]
    first = failing[0]
    seen = first.observed or f"its output `{first.key}` is not what was expected"
    causes = "; ".join(f"`{name}`: {mistakes[name]}" for name in candidates(check, failing))
    return f"{check.piece} ({first.key}): {found[first.key]}. Observed: {seen}. Possible causes: {causes}"


def stub_error(error: str | None, outputs: dict[str, np.ndarray] | None) -> bool:
    """Whether the piece still raises the release's stub error (NotImplementedError), as an error or an output."""
    texts = [error or ""] + [str(v.ravel()[0]) for v in (outputs or {}).values()
                             if np.asarray(v).dtype.kind in "US" and np.asarray(v).size == 1]
    return any(text.startswith(STUB_ERROR) for text in texts)


def judge(check: Check, outputs: dict[str, np.ndarray] | None, error: str | None,
          reference: dict[str, np.ndarray], mistakes: dict[str, str], graders_error: bool = False,
          trusted: Collection[str] = ()) -> Verdict:
    """The verdict on one check: passed only if every expectation holds; else the mistake the evidence singles out,
    by name (a key of `mistakes`, the catalogue) with its advice, or what was observed and the candidate causes.
    An `error` of the probe run is named, not quoted (untrusted.error_name); one the grader's own code raised on odd
    outputs (`graders_error`) is quoted, and so is the text of the `trusted` outputs (derived evidence)."""
    if stub_error(error, outputs):
        return Verdict(check.check_id, False, f"{check.piece} is not attempted yet. {mistakes['not-attempted']}",
                       "not-attempted")
    if error is not None or outputs is None:
        said = quoted(error) if graders_error else error_name(error)
        return Verdict(check.check_id, False, f"{check.piece} raised an error on the grader's inputs: {said}",
                       "raises-error")
    found = problems(check, outputs, reference, trusted)
    if not any(found[e.key] for e in check.expects):
        return Verdict(check.check_id, True, f"{check.piece}: all hidden tests passed.")
    diagnosis = diagnose(check, found)
    if diagnosis is None:
        return Verdict(check.check_id, False, observation(check, found, mistakes))
    key = diagnosis.wrong[0]
    return Verdict(check.check_id, False, f"{check.piece} ({key}): {found[key]}. {likely(diagnosis.mistake, mistakes)}",
                   diagnosis.mistake)


def unknown_names(check: Check, mistakes: dict[str, str]) -> list[str]:
    """Mistakes a check names that the catalogue lacks, and outputs its diagnoses name that it does not compare."""
    keys = {item.key for item in check.expects + check.clues}
    named = [e.mistake for e in check.expects] + [d.mistake for d in check.diagnoses]
    return ([f"mistake {name!r}" for name in named if name not in mistakes]
            + [f"output {key!r}" for d in check.diagnoses for key in d.wrong + d.right if key not in keys])


@cache
def mistakes_for(assignment: str) -> dict[str, str]:
    """The assignment's catalogue of mistakes: name -> advice (its checks.py's MISTAKES, and COMMON_MISTAKES)."""
    return COMMON_MISTAKES | part(assignment, "checks").MISTAKES


@cache
def checks_for(assignment: str) -> dict[str, Check]:
    """The assignment's checks by id (CHECKS of assignments/<assignment>/checks.py); each names only mistakes
    of its catalogue and outputs it compares."""
    checks = {check.check_id: check for check in part(assignment, "checks").CHECKS}
    for check in checks.values():
        if unknown := unknown_names(check, mistakes_for(assignment)):
            raise ValueError(f"{assignment}/checks.py: check {check.check_id!r} names unknown {', '.join(unknown)}")
    return checks


def grade_cells(assignment: str) -> tuple[dict[str, int], dict[str, int]]:
    """Points of the autograded test cells (one per check) and of the hand-graded answer cells, by grade_id."""
    auto, manual = {}, {}
    for cell in notebook_cache.shared(paths.source_notebook(assignment)).cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade"):
            (manual if meta.get("solution") else auto)[meta["grade_id"]] = meta["points"]
    return auto, manual


@cache
def reference_for(assignment: str) -> dict[str, dict[str, np.ndarray]]:
    """Reference data by check id, then output key."""
    with np.load(paths.reference_file(assignment), allow_pickle=False) as data:
        reference: dict[str, dict[str, np.ndarray]] = {}
        for name in data.files:
            check_id, key = name.split("/", 1)
            reference.setdefault(check_id, {})[key] = data[name]
    return reference


Evidence = Callable[[dict[str, np.ndarray]], dict[str, np.ndarray]]


@cache
def evidence_for(assignment: str) -> dict[str, Evidence]:
    """Check id -> how the judge derives more outputs from a probe's outputs (EVIDENCE of the assignment's
    checks.py, if any): trusted code, run in the judge's process on the student's outputs and the reference's
    alike, e.g. a design's outputs on every sequence of a task from the matrices a student's function returned."""
    return getattr(part(assignment, "checks"), "EVIDENCE", {})


# Evidence already derived, by assignment, check and the digest of the outputs it was derived from. An evidence
# function is a function of the outputs alone, so equal outputs give equal evidence: the fast path's corpus
# (course.measuring.grader_accuracy) judges hundreds of notebooks in one process, most of them with the solution's outputs
# for any one check, and a design's evidence replays every sequence of its task. (A judge process judges one
# submission; there it is derived once, as before.)
DERIVED: dict[tuple[str, str, bytes], dict[str, np.ndarray]] = {}


def outputs_digest(outputs: dict[str, np.ndarray]) -> bytes:
    """A digest of a probe's outputs: each key, with its array's dtype, shape and bytes."""
    digest = hashlib.sha256()
    for key in sorted(outputs):
        value = np.asarray(outputs[key])
        digest.update(f"{key}\0{value.dtype.str}\0{value.shape}\0".encode())
        digest.update(value.tobytes() if value.dtype.kind != "O" else repr(value.tolist()).encode())
    return digest.digest()


def with_evidence(assignment: str, check_id: str, outputs: dict[str, np.ndarray] | None) -> dict | None:
    """`outputs` and what the check's evidence function derives from them."""
    derive = evidence_for(assignment).get(check_id)
    if derive is None or outputs is None:
        return outputs
    key = (assignment, check_id, outputs_digest(outputs))
    if key not in DERIVED:
        DERIVED[key] = derive(outputs)
    return {**outputs, **DERIVED[key]}


@cache
def reference_evidence(assignment: str, check_id: str) -> dict[str, np.ndarray]:
    return with_evidence(assignment, check_id, reference_for(assignment).get(check_id, {}))


def verdict(assignment: str, check_id: str, outputs: dict[str, np.ndarray] | None, error: str | None = None) -> Verdict:
    """Judge one probe's outputs, and the evidence derived from them, against the assignment's reference."""
    graders_error, measured = False, set(outputs or {})
    try:
        outputs = with_evidence(assignment, check_id, outputs)
    except Exception as failure:  # the grader's own fault on odd data: a verdict that says so, never a crash
        outputs, error = None, f"the grader could not read its outputs ({type(failure).__name__}: {failure})"
        graders_error = True
    return judge(checks_for(assignment)[check_id], outputs, error, reference_evidence(assignment, check_id),
                 mistakes_for(assignment), graders_error, trusted=set(outputs or {}) - measured)
