"""Transformer Architecture Fundamentals: what is particular to this notebook.

The course-wide specification every assignment meets is tests/test_assignments.py.
"""

from __future__ import annotations

import math

import nbformat
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from course import paths
from course.grading import limits
from course.measuring.grader_accuracy import failed_checks
from course.probe_runner import load_probes
from course.samples import sample_notebook
from course.verdicts import grade_cells as points_of
from helpers import grade_cells, long_running_cells, solution_namespace

ASSIGNMENT = "transformer_fundamentals"
SOURCE_NB = nbformat.read(paths.source_notebook(ASSIGNMENT), as_version=4)


@pytest.fixture(scope="module")
def solution() -> dict:
    """The namespace of the instructor notebook's definitions."""
    return solution_namespace(ASSIGNMENT)


def test_points_add_up_to_sixty_six_autograded_and_twenty_nine_by_hand():
    auto, manual = points_of(ASSIGNMENT)
    assert (sum(auto.values()), sum(manual.values())) == (66, 29)


def test_fifteen_answer_cells_of_code_and_six_written_answers_one_on_part_7():
    assert len([c for c in grade_cells(SOURCE_NB, solution=True) if c.cell_type == "code"]) == 15
    written = [c for c in grade_cells(SOURCE_NB, solution=True) if c.cell_type == "markdown"]
    assert len(written) == 6 and "Part 7" in SOURCE_NB.cells[SOURCE_NB.cells.index(written[-1]) - 1].source


def test_only_the_training_cells_get_the_long_time_limit():
    assert long_running_cells(ASSIGNMENT) == ["demo-train", "demo-reversal"]
    assert limits.CELL_TIMEOUT_S < limits.LONG_CELL_TIMEOUT_S


def test_the_partial_sample_is_told_the_mistakes_it_made():
    failed = failed_checks(ASSIGNMENT, sample_notebook(ASSIGNMENT, "partial"))
    assert {check_id: result["mistake"] for check_id, result in failed.items()} == {
        "tokenizer_clean_text": "clean-punctuation", "attention_values": "attention-scale",
        "layer_norm": "variance-unbiased", "mini_transformer": "pooling-includes-padding"}
    assert "sqrt(d_k)" in failed["attention_values"]["message"]
    assert "Likely mistake `variance-unbiased`: Use the biased variance" in failed["layer_norm"]["message"]


def test_attention_matches_torch(solution):
    torch.manual_seed(0)
    Q, K, V = torch.randn(2, 3, 4, 5), torch.randn(2, 3, 6, 5), torch.randn(2, 3, 6, 7)
    mask = torch.rand(2, 1, 4, 6) > 0.3
    mask[..., 0] = True
    output, weights = solution["scaled_dot_product_attention"](Q, K, V, mask=mask)
    torch.testing.assert_close(output, F.scaled_dot_product_attention(Q, K, V, attn_mask=mask), atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(weights.sum(-1), torch.ones(2, 3, 4))


def test_probe_stand_in_attention_is_the_solution(solution):
    """The multi-head check swaps in torch's attention: it must agree with the solution's."""
    torch.manual_seed(1)
    Q, K, V = torch.randn(2, 3, 5, 4), torch.randn(2, 3, 5, 4), torch.randn(2, 3, 5, 4)
    mask = torch.tensor([[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])[:, None, None, :]
    ours = solution["scaled_dot_product_attention"](Q, K, V, mask=mask)
    stand_in = load_probes(ASSIGNMENT)._reference_attention(Q, K, V, mask=mask)
    for a, b in zip(ours, stand_in):
        torch.testing.assert_close(a, b, atol=1e-5, rtol=1e-5)


def torch_twin(module: nn.Module) -> nn.MultiheadAttention:
    """torch.nn.MultiheadAttention with the weights of a module with W_q, W_k, W_v, W_o."""
    twin = nn.MultiheadAttention(module.d_model, module.num_heads, batch_first=True).eval()
    with torch.no_grad():
        twin.in_proj_weight.copy_(torch.cat([module.W_q.weight, module.W_k.weight, module.W_v.weight]))
        twin.in_proj_bias.copy_(torch.cat([module.W_q.bias, module.W_k.bias, module.W_v.bias]))
        twin.out_proj.load_state_dict(module.W_o.state_dict())
    return twin


def test_multi_head_attention_matches_torch(solution):
    torch.manual_seed(2)
    mha = solution["MultiHeadAttention"](12, 3, dropout=0.0).eval()
    reference = torch_twin(mha)
    with torch.no_grad():
        x = torch.randn(2, 5, 12)
        padding = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]])
        ours, our_weights = mha(x, mask=padding[:, None, None, :])
        theirs, their_weights = reference(x, x, x, key_padding_mask=padding == 0, average_attn_weights=False)
    torch.testing.assert_close(ours, theirs, atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(our_weights, their_weights, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("eps", [1e-6, 0.5])
def test_layer_norm_is_torch_layer_norm(solution, eps):
    x = torch.randn(3, 4, 5) * 3 + 1
    torch.testing.assert_close(solution["LayerNorm"](5, eps=eps)(x), nn.LayerNorm(5, eps=eps)(x))


def test_positional_encoding_values(solution):
    pe = solution["PositionalEncoding"](8, max_length=20).pe
    for pos in (0, 3, 19):
        for i in range(4):
            angle = pos / 10000 ** (2 * i / 8)
            assert pe[pos, 2 * i].item() == pytest.approx(math.sin(angle), abs=1e-5)
            assert pe[pos, 2 * i + 1].item() == pytest.approx(math.cos(angle), abs=1e-5)


def test_classifier_ignores_padding(solution):
    torch.manual_seed(3)
    model = solution["MiniTransformer"](30, 16, 2, 2, 32, 20, 2, dropout=0.0).eval()
    ids = torch.tensor([[2, 5, 9, 0, 0, 0]])
    with torch.no_grad():
        short, _ = model(ids[:, :3], torch.ones(1, 3, dtype=torch.long))
        padded, _ = model(torch.tensor([[2, 5, 9, 7, 7, 7]]), (ids != 0).long())
    torch.testing.assert_close(short, padded)


def test_crossover_is_where_the_counted_costs_meet(solution):
    attention, feed_forward, crossover = (solution[n] for n in ("attention_cost", "feed_forward_cost", "crossover_length"))
    for d_model, d_ff in ((64, 256), (48, 400), (16, 24), (512, 2048)):
        n = crossover(d_model, d_ff)
        assert attention(n, d_model) >= feed_forward(n, d_model, d_ff)
        assert n == 1 or attention(n - 1, d_model) < feed_forward(n - 1, d_model, d_ff)


def test_cross_attention_is_torch_multihead_attention_from_the_decoder_to_the_memory(solution):
    torch.manual_seed(4)
    cross = solution["CrossAttention"](d_model=16, num_heads=4, dropout=0.0).eval()
    reference = torch_twin(cross)
    with torch.no_grad():
        x, memory = torch.randn(3, 2, 16), torch.randn(3, 7, 16)
        padding = torch.tensor([[0] * 7, [0] * 5 + [1] * 2, [0] * 4 + [1] * 3]).bool()  # True = padding, torch's way
        expected, expected_weights = reference(x, memory, memory, key_padding_mask=padding, average_attn_weights=False)
        output, weights = cross(x, memory, (~padding).long()[:, None, None, :])
    torch.testing.assert_close(output, expected, atol=1e-5, rtol=1e-4)
    torch.testing.assert_close(weights, expected_weights, atol=1e-5, rtol=1e-4)


def test_the_encoder_decoders_output_at_a_position_depends_on_no_later_decoder_input(solution):
    torch.manual_seed(5)
    model = solution["EncoderDecoder"](vocab_size=12, d_model=16, num_heads=2, num_layers=2, d_ff=32, max_length=10,
                                       dropout=0.0).eval()
    src, tgt = torch.randint(3, 12, (2, 6)), torch.randint(3, 12, (2, 8))
    with torch.no_grad():
        logits, _ = model(src, tgt)
        for t in range(1, 8):
            changed = tgt.clone()
            changed[:, t:] = torch.randint(3, 12, (2, 8 - t))
            torch.testing.assert_close(model(src, changed)[0][:, :t], logits[:, :t])


def test_the_trained_check_passes_the_solution_and_fails_a_decoder_that_sees_the_future():
    perfect = sample_notebook(ASSIGNMENT, "perfect")
    assert "encoder_decoder_trained" not in failed_checks(ASSIGNMENT, perfect)
    for cell in perfect.cells:
        if cell.metadata.get("nbgrader", {}).get("grade_id") == "answer-encoder-decoder":
            cell.source = cell.source.replace("block(x, memory, causal, memory_mask)", "block(x, memory, None, memory_mask)")
    assert failed_checks(ASSIGNMENT, perfect)["encoder_decoder_trained"]["mistake"] == "causal-mask-missing"
