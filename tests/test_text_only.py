"""What a student wrote or displayed reaches the feedback and formgrader as text (course.grading.nbgrader_hooks.as_text):
nbconvert renders the graded notebook, and nothing in it may run as script in the reader's browser."""

from __future__ import annotations

from html.parser import HTMLParser

import nbformat
import pytest
from nbconvert.exporters import HTMLExporter

from course.grading.nbgrader_hooks import as_text, renders_safely

RUNNING_MARKUP = ["<script>window.x = 1</script>", '<img src="x" onerror="window.x = 1">', "<svg onload=x>",
                  "[a link](javascript:alert(1))", '<a href="JaVaScRiPt:alert(1)">a</a>', '<p style="x">styled</p>',
                  "\\`<script>x</script>\\`", "<iframe src='data:text/html,x'></iframe>"]


class Page(HTMLParser):
    """The parts of a page that would run the students' markup: event handlers, javascript: links, frames, SVG,
    styles on elements, and scripts that hold it."""

    def __init__(self):
        super().__init__()
        self.running: list[str] = []
        self.in_script = False

    def handle_starttag(self, tag, attrs):
        self.in_script = tag == "script"
        self.running += [tag for _ in [0] if tag in ("iframe", "svg", "object", "embed")]
        for name, value in attrs:
            if name.startswith("on") or (name in ("href", "src") and "".join((value or "").split()).lower().startswith(
                    "javascript:")) or (name == "style" and value == "x"):
                self.running.append(f"{tag} {name}={value}")

    def handle_data(self, data):
        if self.in_script and ("window.x" in data or "alert(1)" in data or data.strip() == "x"):
            self.running.append(f"script {data.strip()[:40]}")

    def handle_endtag(self, tag):
        self.in_script = False


def running_parts(html: str) -> list[str]:
    page = Page()
    page.feed(html)
    return page.running

PLAIN_MARKDOWN = ["Attention is **softmax** of $QK^T/\\sqrt{d}$, where $a<b$.", "The token `<PAD>` is masked.",
                  "```python\nprint('<b>')\n```", "[the paper](https://arxiv.org/abs/1706.03762)"]


@pytest.mark.parametrize("markdown", RUNNING_MARKUP)
def test_markdown_that_would_render_running_markup_is_shown_as_its_text(markdown):
    nb = as_text(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markdown)]))
    assert renders_safely(nb.cells[0].source) and markdown in nb.cells[0].source
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert running_parts(html) == []


@pytest.mark.parametrize("markdown", PLAIN_MARKDOWN)
def test_ordinary_markdown_is_left_as_written(markdown):
    nb = as_text(nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(markdown)]))
    assert nb.cells[0].source == markdown


def test_outputs_keep_their_text_and_bitmaps_raw_cells_their_text_only():
    outputs = [nbformat.v4.new_output("display_data", data={"text/html": "<script>x</script>", "text/plain": "a table"}),
               nbformat.v4.new_output("display_data", data={"application/javascript": "alert(1)"}),
               nbformat.v4.new_output("execute_result", data={"image/png": "iVBORw0KGgo=", "image/svg+xml": "<svg/>"},
                                      execution_count=1)]
    raw = nbformat.v4.new_raw_cell("<script>x</script>", metadata={"format": "text/html"})
    nb = as_text(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x", outputs=outputs), raw]))
    assert [dict(output.data) for output in nb.cells[0].outputs] == [
        {"text/plain": "a table"}, {"text/plain": "[an output of a kind not shown here: application/javascript]"},
        {"image/png": "iVBORw0KGgo="}]
    html, _ = HTMLExporter().from_notebook_node(nb)
    assert "<script>x</script>" not in html and "alert(1)" not in html
