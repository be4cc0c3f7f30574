"""Specification of data/rotten_tomatoes.csv of this assignment.

The file is built by build_data.py, beside it. The duplicate-detection rule
(``dedup_key``) is imported from that script so it is defined in one place.
"""

import collections
import csv
import importlib.util
from pathlib import Path

import pytest

ASSIGNMENT_DIR = Path(__file__).resolve().parents[1]
DATA_FILE = ASSIGNMENT_DIR / "data" / "rotten_tomatoes.csv"
BUILD_SCRIPT = ASSIGNMENT_DIR / "build_data.py"

EXPECTED_COLUMNS = ["text", "label", "split"]
LABELS = {"0", "1"}  # 0 = rotten (negative), 1 = fresh (positive)
SPLIT_SHARES = {"train": 0.80, "val": 0.10, "test": 0.10}
SHARE_TOLERANCE = 0.01  # one percentage point
MIN_LABEL_SHARE = 0.40  # neither label below 40% in any split
MIN_ROWS = 10_000


def _load_build_script():
    spec = importlib.util.spec_from_file_location("build_dataset", BUILD_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


dedup_key = _load_build_script().dedup_key


@pytest.fixture(scope="module")
def table():
    """(header, rows) of the dataset file, rows as dicts."""
    assert DATA_FILE.exists(), f"{DATA_FILE} is missing; run `python assignments/transformer_fundamentals/build_data.py`"
    with open(DATA_FILE, encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        rows = list(reader)
    return reader.fieldnames, rows


@pytest.fixture(scope="module")
def rows(table):
    return table[1]


def test_columns_are_exactly_text_label_split(table):
    header, _ = table
    assert header == EXPECTED_COLUMNS, f"columns are {header}, expected {EXPECTED_COLUMNS}"


def test_has_at_least_10000_rows(rows):
    assert len(rows) >= MIN_ROWS, f"only {len(rows)} rows, expected at least {MIN_ROWS}"


def test_labels_are_0_or_1(rows):
    bad = collections.Counter(r["label"] for r in rows if r["label"] not in LABELS)
    assert not bad, f"unexpected label values: {dict(bad)}"


def test_splits_are_train_val_test(rows):
    bad = collections.Counter(r["split"] for r in rows if r["split"] not in SPLIT_SHARES)
    assert not bad, f"unexpected split values: {dict(bad)}"


def test_texts_are_non_empty_and_whitespace_normalised(rows):
    bad = [r["text"] for r in rows if not r["text"] or r["text"] != " ".join(r["text"].split())]
    assert not bad, f"{len(bad)} texts are empty or not whitespace-normalised, e.g. {bad[:3]!r}"


def test_no_normalised_text_appears_twice(rows):
    by_key = collections.defaultdict(list)
    for r in rows:
        by_key[dedup_key(r["text"])].append((r["split"], r["text"]))
    duplicates = {key: copies for key, copies in by_key.items() if len(copies) > 1}
    assert not duplicates, (
        f"{len(duplicates)} texts occur more than once (after lowercasing and removing "
        f"non-alphanumerics), e.g. {list(duplicates.values())[:3]!r}"
    )


@pytest.mark.parametrize("split", list(SPLIT_SHARES))
def test_split_has_both_labels_and_neither_under_40_percent(rows, split):
    labels = collections.Counter(r["label"] for r in rows if r["split"] == split)
    total = sum(labels.values())
    assert set(labels) == LABELS, f"{split}: labels present are {sorted(labels)}, expected both 0 and 1"
    for label in sorted(LABELS):
        share = labels[label] / total
        assert share >= MIN_LABEL_SHARE, (
            f"{split}: label {label} is {share:.1%} of {total} rows, below {MIN_LABEL_SHARE:.0%}"
        )


@pytest.mark.parametrize("split, expected_share", list(SPLIT_SHARES.items()))
def test_split_size_is_roughly_80_10_10(rows, split, expected_share):
    share = sum(r["split"] == split for r in rows) / len(rows)
    assert abs(share - expected_share) <= SHARE_TOLERANCE, (
        f"{split} holds {share:.2%} of the rows, expected {expected_share:.0%} "
        f"± {SHARE_TOLERANCE:.0%}"
    )
