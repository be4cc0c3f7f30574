"""Specification of data/: assignment 3's three splits of Hamlet, copied unchanged by build_data.py."""

import hashlib
import importlib.util
from pathlib import Path

ASSIGNMENT_DIR = Path(__file__).resolve().parents[1]
spec = importlib.util.spec_from_file_location("build_data_modern_gpt", ASSIGNMENT_DIR / "build_data.py")
build_data = importlib.util.module_from_spec(spec)
spec.loader.exec_module(build_data)


def test_each_split_is_assignment_3s_byte_for_byte():
    for name, sha256 in build_data.SOURCE_SHA256.items():
        source = (build_data.SOURCE / name).read_bytes()
        assert hashlib.sha256(source).hexdigest() == sha256, f"assignment 3's {name} changed: rebuild both"
        assert (ASSIGNMENT_DIR / "data" / name).read_bytes() == source, f"data/{name} differs from assignment 3's"


def test_the_data_folder_holds_the_three_splits_and_their_readme_only():
    assert sorted(p.name for p in (ASSIGNMENT_DIR / "data").iterdir()) == ["README.md", "test.txt", "train.txt",
                                                                          "val.txt"]
    assert "causal_language_model/data/README.md" in (ASSIGNMENT_DIR / "data" / "README.md").read_text()
