"""A Small GPT, Trained Well: what is particular to this notebook.

The course-wide specification every assignment meets is tests/test_assignments.py.
"""

from __future__ import annotations

import json
import math
import random

import pytest
import torch
import torch.nn.functional as F

from course import paths
from course.grading.grade_one import kernel_folder
from course.measuring.grader_accuracy import failed_checks
from course.samples import sample_notebook
from course.verdicts import grade_cells as points_of
from helpers import SOLUTION_STUDENT, long_running_cells, paths_of, solution_namespace

ASSIGNMENT = "modern_gpt"
LADDER = ("the recipe", "learned positions", "post-norm", "no warm-up")


@pytest.fixture(scope="module")
def solution() -> dict:
    """The namespace of the instructor notebook's definitions."""
    return solution_namespace(ASSIGNMENT)


@pytest.fixture(scope="module")
def hamlet(solution) -> dict:
    """The notebook's tokenizer: the solution's BPE trained on the training text to 512, and the splits' ids."""
    texts = {split: (paths.assignment_dir(ASSIGNMENT) / "data" / f"{split}.txt").read_text(encoding="utf-8")
             for split in ("train", "val")}
    merges = solution["train_bpe"](texts["train"], 512)
    return {"texts": texts, "merges": merges, "ids": {s: solution["encode"](t, merges) for s, t in texts.items()}}


@pytest.fixture(scope="module")
def log(graded_solution) -> dict:
    """The submission_log.json that the notebook wrote when the course graded its solution (nbgrader ran it whole,
    the ladder's trainings included, in the sandboxed kernel: the repository conftest's graded_solution, whose
    grades tests/test_pipeline.py checks)."""
    course = graded_solution(ASSIGNMENT)
    with paths_of(course, paths.ASSIGNMENTS_DIR):
        return json.loads((kernel_folder(ASSIGNMENT, SOLUTION_STUDENT) / "submission_log.json").read_text())


def test_points_add_up_to_thirty_five_autograded_and_sixteen_by_hand():
    auto, manual = points_of(ASSIGNMENT)
    assert (sum(auto.values()), sum(manual.values())) == (35, 16)


def test_only_the_tokenizer_and_the_ladder_get_the_long_time_limit():
    assert long_running_cells(ASSIGNMENT) == ["demo-tokenizer", "demo-ablations"]


def test_the_partial_sample_is_told_the_mistakes_it_made_and_the_two_rope_conventions():
    failed = failed_checks(ASSIGNMENT, sample_notebook(ASSIGNMENT, "partial"))
    assert {check_id: result["mistake"] for check_id, result in failed.items()} == {
        "bpe_merges": "bpe-tie-rule", "rope_values": "rope-halves", "lr_schedule": "warmup-off-by-one"}
    assert "Pairing i with i + d/2 (halves) is another RoPE convention" in failed["rope_values"]["message"]


# ---------------------------------------------------------------- the tokenizer: integers, the same on every CPU


def test_hamlet_at_512_is_two_bytes_per_token_and_encoding_the_training_text_gives_trainings_sequence(hamlet, solution):
    """The figures the notebook prints and the first written answer uses: exact, since BPE is integer arithmetic."""
    assert len(hamlet["merges"]) == 256
    assert round(len(hamlet["texts"]["val"].encode()) / len(hamlet["ids"]["val"]), 2) == 2.02
    assert solution["decode"](hamlet["ids"]["val"], hamlet["merges"]) == hamlet["texts"]["val"]


def test_decode_inverts_encode_on_random_unicode(hamlet, solution):
    generator = random.Random(0)
    planes = [(0x20, 0x7E), (0xC0, 0x17F), (0x3040, 0x30FF), (0x4E00, 0x4FFF), (0x1F600, 0x1F64F)]
    for _ in range(200):
        text = "".join(chr(generator.randint(*generator.choice(planes))) for _ in range(generator.randint(0, 30)))
        assert solution["decode"](solution["encode"](text, hamlet["merges"]), hamlet["merges"]) == text


# ---------------------------------------------------------------- RoPE and the cache, against trusted forms


def test_rope_is_the_rotation_matrix_of_each_pair(solution):
    x, positions, base = torch.randn(3, 7, 8, dtype=torch.float64), torch.tensor([0, 1, 5, 9, 9, 30, 2]), 10000.0
    rotated = solution["apply_rope"](x, positions, base)
    for t, m in enumerate(positions.tolist()):
        for i in range(4):
            angle = m * base ** (-2 * i / 8)
            R = torch.tensor([[math.cos(angle), -math.sin(angle)], [math.sin(angle), math.cos(angle)]], dtype=torch.float64)
            torch.testing.assert_close(rotated[:, t, 2 * i:2 * i + 2], x[:, t, 2 * i:2 * i + 2] @ R.T)


def test_cached_greedy_decoding_equals_the_full_recomputation_in_the_notebooks_gpt(solution):
    torch.manual_seed(0)
    for rope in (True, False):
        model = solution["GPT"](50, max_len=40, rope=rope).eval()
        prompt = torch.randint(0, 50, (3, 5))
        full, cached = (solution["generate"](model, prompt, 20, use_cache=c) for c in (False, True))
        assert torch.equal(full[0], cached[0])
        torch.testing.assert_close(full[1], cached[1], atol=1e-5, rtol=1e-5)


def test_the_initial_loss_is_near_ln_v_with_the_recipes_initialisation_and_far_above_it_without(solution):
    """The claim of 3.2: PyTorch's own initialisation (the tied weight drawn as nn.Embedding draws it, N(0, 1))
    starts far above ln V; GPT-2's starts within a few hundredths of it."""
    tokens = torch.randint(0, 512, (8, 64), generator=torch.Generator().manual_seed(0))
    targets = tokens.roll(-1, dims=1).reshape(-1)  # the next (random) token: the token itself is easier, tied head
    losses = {}
    for name, init in (("recipe", solution["init_weights"]), ("default", lambda module: None)):
        torch.manual_seed(0)
        saved, solution["init_weights"] = solution["init_weights"], init
        try:
            model = solution["GPT"](512)
        finally:
            solution["init_weights"] = saved
        with torch.no_grad():
            losses[name] = F.cross_entropy(model(tokens)[0].reshape(-1, 512), targets).item()
    assert abs(losses["recipe"] - math.log(512)) < 0.05 and losses["default"] > math.log(512) + 5, losses


# ---------------------------------------------------------------- the ladder, as the graded run wrote it


def test_every_rung_of_the_ladder_beats_the_bigram_baseline(log):
    metrics = log["metrics"]
    assert log["probe_errors"] == {}
    assert metrics["bytes_per_token"] == pytest.approx(2.02, abs=0.005) and metrics["steps"] == 400
    for name in LADDER:
        assert metrics[f"{name.replace(' ', '_')}_val_loss"] < metrics["bigram_val_loss"] - 0.3, name


def test_the_log_keeps_the_histories_the_extrapolation_and_the_sample(log):
    details = log["details"]
    assert list(details["histories"]) == list(LADDER)
    assert all(history["step"] == list(range(50, 401, 50)) for history in details["histories"].values())
    assert set(details["extrapolation"]) == {"the recipe", "learned positions"}
    assert details["sample"].startswith("HAMLET\n") and details["merges"] == 256
