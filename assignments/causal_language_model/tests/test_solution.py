"""A Causal Language Model: what is particular to this notebook.

The course-wide specification every assignment meets is tests/test_assignments.py.
"""

from __future__ import annotations

import json
import math
import re

import nbformat
import pytest
import torch
import torch.nn as nn
import torch.nn.functional as F

from course import paths
from course.grading.grade_one import kernel_folder
from course.measuring.grader_accuracy import failed_checks
from course.samples import sample_notebook
from course.verdicts import grade_cells as points_of
from helpers import SOLUTION_STUDENT, long_running_cells, paths_of, solution_namespace, whole_notebook_namespace

ASSIGNMENT = "causal_language_model"
PROMPT = "HAMLET\nTo be, or not to be"  # the samples' prompt (the notebook's cell demo-samples)


@pytest.fixture(scope="module")
def solution() -> dict:
    """The namespace of the instructor notebook's definitions."""
    return solution_namespace(ASSIGNMENT)


@pytest.fixture(scope="module")
def before_training() -> dict:
    """The notebook's code cells above its training, run here: the masks' and saturation's demonstrations, the data
    and the baselines."""
    return whole_notebook_namespace(ASSIGNMENT, before_training=True)


@pytest.fixture(scope="module")
def graded(graded_solution) -> dict:
    """The notebook as the course graded its solution: nbgrader ran it whole, training included, in the sandboxed
    kernel (the repository conftest's graded_solution, whose grades tests/test_pipeline.py checks; training it here
    again would test nothing more). The submission_log.json the kernel wrote, and the samples its cells printed."""
    course = graded_solution(ASSIGNMENT)
    with paths_of(course, paths.ASSIGNMENTS_DIR):
        log = kernel_folder(ASSIGNMENT, SOLUTION_STUDENT) / "submission_log.json"
        executed = paths.autograded_dir(SOLUTION_STUDENT, ASSIGNMENT) / f"{ASSIGNMENT}.ipynb"
    return {"log": json.loads(log.read_text()), "samples": printed_samples(nbformat.read(executed, as_version=4))}


def printed_samples(notebook: nbformat.NotebookNode) -> dict[str, str]:
    """The samples that the executed notebook's cell demo-samples printed, by name (each printed as a line
    '----- name -----', then the sample, then a blank line)."""
    [cell] = [cell for cell in notebook.cells if cell.id == "demo-samples"]
    printed = "".join(output.text for output in cell.outputs if output.get("name") == "stdout")
    parts = re.split(r"^----- (.+) -----\n", printed, flags=re.MULTILINE)
    return {name: text.removesuffix("\n\n") for name, text in zip(parts[1::2], parts[2::2])}


def test_points_add_up_to_forty_two_autograded_and_fifteen_by_hand():
    auto, manual = points_of(ASSIGNMENT)
    assert (sum(auto.values()), sum(manual.values())) == (42, 15)


def test_only_the_training_cell_gets_the_long_time_limit():
    assert long_running_cells(ASSIGNMENT) == ["demo-train"]


def test_the_partial_sample_is_told_the_mistakes_it_made_and_the_mask_convention():
    failed = failed_checks(ASSIGNMENT, sample_notebook(ASSIGNMENT, "partial"))
    assert {check_id: result["mistake"] for check_id, result in failed.items()} == {
        "causal_mask": "mask-convention-may-attend", "attention_entropy": "entropy-log-base", "train_lm": "no-zero-grad"}
    assert "nn.MultiheadAttention reads a bool attn_mask the other way round, True = BLOCKED" in failed["causal_mask"]["message"]


# ---------------------------------------------------------------- the facts the notebook teaches, measured


def test_a_fully_masked_row_is_zeros_as_in_torch_scaled_dot_product_attention(solution):
    generator = torch.Generator().manual_seed(0)
    Q, K, V = (torch.randn(2, 4, 3, generator=generator) for _ in range(3))
    may_attend = torch.tensor([[1, 0, 0, 0], [0, 0, 0, 0], [1, 1, 1, 0], [1, 1, 1, 1]], dtype=torch.bool)
    ours, weights = solution["attention"](Q, K, V, may_attend)
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(Q, K, V, attn_mask=may_attend))
    assert torch.all(weights[:, 1] == 0) and torch.all(ours[:, 1] == 0)


def test_multihead_attention_reads_masks_the_other_way_round():
    """True = blocked; assignment 1's tril mask as bools blocks the past and NaNs the last row; as floats it is added
    to the scores and blocks nothing; is_causal without a mask raises."""
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(4, 1, batch_first=True).eval()
    x = torch.randn(1, 5, 4)
    assignment_1 = torch.tril(torch.ones(5, 5))
    with torch.no_grad():
        causal = mha(x, x, x, attn_mask=torch.triu(torch.ones(5, 5, dtype=torch.bool), 1))[0]
        as_bools = mha(x, x, x, attn_mask=assignment_1.bool())[0]
        as_floats = mha(x, x, x, attn_mask=assignment_1)[0]
        future_changed = torch.cat([x[:, :3], x[:, 3:] + 1], dim=1)
        assert torch.isnan(as_bools[0, -1]).all()
        assert not torch.allclose(mha(future_changed, future_changed, future_changed, attn_mask=assignment_1)[0][:, :3],
                                  as_floats[:, :3])  # it reads the future
        assert torch.allclose(mha(future_changed, future_changed, future_changed,
                                  attn_mask=torch.triu(torch.ones(5, 5, dtype=torch.bool), 1))[0][:, :3], causal[:, :3])
        with pytest.raises(RuntimeError, match="Need attn_mask"):
            mha(x, x, x, is_causal=True)


def test_a_fill_of_minus_1e9_does_not_fit_in_float16(solution):
    with pytest.raises(RuntimeError, match="overflow"):
        torch.zeros(2, dtype=torch.float16).masked_fill(torch.tensor([True, False]), -1e9)
    half = solution["masked_softmax"](torch.zeros(2, 3, dtype=torch.float16), torch.tensor([[1, 0, 1], [0, 0, 0]]))
    assert half.tolist() == [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]]


def test_scaling_keeps_attention_responsive_and_its_absence_saturates_it(before_training):
    """The saturation table the first written answer quotes."""
    table = before_training["saturation"]
    scaled = [table[True, d]["jacobian_norm"] for d in (4, 1024)]
    unscaled = {key: [table[False, d][key] for d in (4, 1024)] for key in ("max_weight", "entropy", "jacobian_norm")}
    assert all(0.25 < norm < 0.35 for norm in scaled)
    assert unscaled["max_weight"] == pytest.approx([0.36, 0.96], abs=0.005)
    assert unscaled["entropy"] == pytest.approx([2.0, 0.09], abs=0.03)
    assert unscaled["jacobian_norm"] == pytest.approx([0.32, 0.04], abs=0.005)


def test_the_causal_layer_depends_on_no_later_input_and_the_reversed_mask_leaks(before_training):
    matrices = before_training["dependencies"]
    assert torch.all(torch.triu(matrices["causal (1 = may attend)"], diagonal=1) == 0)
    assert torch.triu(matrices["reversed"], diagonal=1).max() > 0.5
    assert torch.all(torch.tril(matrices["reversed"], diagonal=-1) == 0)


# ---------------------------------------------------------------- the model against trusted implementations


def test_decoder_block_is_torch_pre_norm_encoder_layer_with_a_causal_mask(solution):
    torch.manual_seed(0)
    block = solution["DecoderBlock"](8, 2, 16, 0.0).eval()
    layer = nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0, activation="gelu", batch_first=True, norm_first=True).eval()
    renamed = {"attn": "self_attn", "ff.0": "linear1", "ff.2": "linear2", "ln1": "norm1", "ln2": "norm2"}
    state = {}
    for name, value in block.state_dict().items():
        prefix = next(p for p in renamed if name.startswith(p + "."))
        state[renamed[prefix] + name[len(prefix):]] = value
    layer.load_state_dict(state)
    x, mask = torch.randn(3, 6, 8), solution["causal_mask"](6)
    with torch.no_grad():
        torch.testing.assert_close(block(x, mask), layer(x, src_mask=mask), atol=1e-5, rtol=1e-5)


def test_tiny_gpt_has_the_tied_head_and_the_size_the_notebook_states(solution):
    model = solution["TinyGPT"](64, 64, 64, 4, 2, 256, 0.0)
    assert model.head.weight is model.tok_emb.weight
    assert sum(p.numel() for p in model.parameters()) == 108_288


def test_greedy_generation_from_a_long_prompt_reads_only_the_last_block(solution):
    torch.manual_seed(0)
    model = solution["TinyGPT"](11, 4, 8, 2, 1, 16, 0.0).eval()
    prompt = torch.randint(0, 11, (2, 9))
    out = solution["generate"](model, prompt, 3, greedy=True)
    assert torch.equal(out[:, :9], prompt)
    assert torch.equal(out[:, 9:], solution["generate"](model, prompt[:, -4:], 3, greedy=True)[:, 4:])


# ---------------------------------------------------------------- the trained model


def test_the_trained_model_beats_every_baseline_on_validation_and_test(graded, before_training):
    metrics = graded["log"]["metrics"]
    assert round(metrics["uniform_val_loss"], 2) == 4.16 and round(metrics["bigram_val_loss"], 2) == 2.50
    assert metrics["val_loss"] < metrics["bigram_val_loss"] - 0.4  # 1.88 vs 2.50 in the prose
    ns = before_training
    test_bigram = ns["baseline_losses"](ns["data"]["train"], ns["data"]["test"], ns["tokenizer"].vocab_size)["bigram"]
    assert metrics["test_loss"] < test_bigram - 0.4
    assert graded["log"]["details"]["history"]["step"] == list(range(100, 1001, 100))


def test_the_samples_keep_the_prompt_and_follow_the_plays_layout(graded):
    samples = graded["samples"]
    assert list(samples) == ["greedy", "temperature 0.5", "temperature 0.8", "temperature 1.2",
                             "temperature 1.2, top-k 5"]
    assert all(text.startswith(PROMPT) and len(text) == len(PROMPT) + 200 for text in samples.values())
    # The play's layout: a speaker's name alone on a line, in capitals. Which sample shows one, and which name, depends
    # on the CPU's rounding (training and sampling amplify it): any of them will do.
    lines = [line for text in samples.values() for line in text.splitlines()[2:]]
    assert any(len(line) >= 4 and line.replace(" ", "").isalpha() and line.isupper() for line in lines), samples


def test_the_submission_log_keeps_metrics_history_samples_and_the_saturation_table(graded):
    log = graded["log"]
    assert log["probe_errors"] == {}
    assert math.isclose(log["metrics"]["val_perplexity"], math.exp(log["metrics"]["val_loss"]))
    assert set(log["metrics"]) == {"val_loss", "test_loss", "val_perplexity", "training_seconds", "steps",
                                   "uniform_val_loss", "unigram_val_loss", "bigram_val_loss"}
    assert log["details"]["history"]["step"][-1] == 1000
    assert log["details"]["samples"]["temperature 0.8, seed 0"] == graded["samples"]["temperature 0.8"]
    assert log["details"]["samples"]["temperature 0.8, seed 0"].startswith(PROMPT)
    assert len(log["details"]["saturation"]) == 10
