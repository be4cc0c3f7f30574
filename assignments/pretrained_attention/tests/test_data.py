"""Specification of data/reviews.csv: built by build_data.py from assignment 1's data, by its rules."""

import csv
import hashlib
import importlib.util
from pathlib import Path

ASSIGNMENT_DIR = Path(__file__).resolve().parents[1]
REVIEWS = ASSIGNMENT_DIR / "data" / "reviews.csv"
spec = importlib.util.spec_from_file_location("build_data_pretrained_attention", ASSIGNMENT_DIR / "build_data.py")
build_data = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_data)


def rows() -> list[dict[str, str]]:
    with REVIEWS.open(newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def test_the_committed_file_is_what_the_script_builds_from_assignment_1s_data():
    source = build_data.SOURCE.read_bytes()
    assert hashlib.sha256(source).hexdigest() == build_data.SOURCE_SHA256
    assert build_data.build(source) == REVIEWS.read_bytes()


def test_half_fresh_half_rotten_short_test_reviews_of_the_source_unchanged():
    with build_data.SOURCE.open(newline="", encoding="utf-8") as file:
        source = {row["text"]: row for row in csv.DictReader(file)}
    sample = rows()
    assert len(sample) == build_data.REVIEWS == 24
    assert sorted(row["label"] for row in sample) == ["0"] * 12 + ["1"] * 12
    for row in sample:
        assert source[row["text"]]["split"] == "test" and source[row["text"]]["label"] == row["label"]
        assert 8 <= len(row["text"].split()) <= 20


def test_the_readme_gives_the_files_sha256():
    assert hashlib.sha256(REVIEWS.read_bytes()).hexdigest() in (REVIEWS.parent / "README.md").read_text()
