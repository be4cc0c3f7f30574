"""This assignment's own figures for `make bench`: training time, validation and test loss against the bigram."""

from __future__ import annotations

import re

import nbformat

from course.samples import cell_text


def figures(nb: nbformat.NotebookNode) -> list[str]:
    """Lines to print, read off the executed instructor notebook."""
    text = cell_text(nb, "demo-train")
    trained = re.search(r"trained (\d+) steps in (\d+) s", text)
    val = re.search(r"validation loss ([\d.]+) \(perplexity ([\d.]+)\); bigram ([\d.]+) \(perplexity ([\d.]+)\)", text)
    test = re.search(r"test loss ([\d.]+) \(perplexity ([\d.]+)\); bigram on test ([\d.]+)", text)
    return [f"training ({trained[1]} steps): {trained[2]} s",
            f"TinyGPT: validation loss {val[1]} (perplexity {val[2]}), test loss {test[1]} (perplexity {test[2]})",
            f"bigram baseline: validation loss {val[3]} (perplexity {val[4]}), test loss {test[3]}"]
