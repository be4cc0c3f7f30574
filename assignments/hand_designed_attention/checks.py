"""Checks of the Attention Designed by Hand assignment, and its catalogue of mistakes.

One `Check` per hidden test cell of the notebook (same id). Each expectation
names a probe output (see probes.py beside this file) and the mistake that
most often breaks it; clues are outputs worth nothing that tell mistakes
apart; a diagnosis names the mistake behind a pattern of wrong and right
outputs (course.checks.diagnose).

A design is judged by what it does, never by its matrices: EVIDENCE runs the
matrices a student's function returned on every sequence of the task, in the
judge's process, with the notebook's own given code (reference_attention,
check_design: the rule the student reads and runs), and derives the verdict
line and clues from the outputs and attention weights.
"""

from pathlib import Path

import numpy as np

from course.checks import Check, Clue, Diagnosis, Expect
from course.parts import given_cells

ASSIGNMENT = Path(__file__).parent.name

MISTAKES = {
    # PytorchTransformer.__init__
    "raw-parameters": "Create self.Qm, self.Km and self.Vm as nn.Linear layers, not raw nn.Parameter or tensors: "
                      "layers are found and set by name (model.Km.weight), in nn.Linear's convention.",
    "unregistered-parameters": "A plain tensor stored on a module is not a parameter: model.parameters() misses it, "
                               "so no optimizer trains it. Use nn.Linear layers.",
    "linear-bias": "Create each layer with bias=False: the layer computes x @ Km, with no offset.",
    "in-features-pos": "The layers take total_input_dim = input_dim + pos_dim inputs: the positional features are "
                       "part of every input row.",
    "layers-shared": "Create three separate layers: Qm, Km and Vm each need weights of their own (a layer assigned "
                     "to two names is one set of weights).",
    "out-features": "Qm and Km map total_input_dim features to qk_dim, Vm to v_dim: nn.Linear(in, out).",
    # PytorchTransformer.forward
    "softmax-axis": "Apply the softmax over the keys (dim=-1): each query's row of weights must sum to 1; dim=0 "
                    "normalises over the queries.",
    "attention-scale": "Divide the scores by sqrt(qk_dim), the number of columns of Q: not by qk_dim, not by "
                       "sqrt(v_dim) or the sequence length, and not left unscaled.",
    "scores-transposed": "The scores are Q @ K.T (row i: query i against every key); K @ Q.T swaps queries and keys.",
    "attention-formula": "out = softmax(Q K^T / sqrt(qk_dim), dim=-1) @ V, with Q = x Qm, K = x Km, V = x Vm: compare "
                         "your steps with reference_attention.",
    "dropout-added": "This layer has no dropout: in training mode (a new module's mode) dropout changes the outputs "
                     "at random.",
    "mixed-dtypes": "Keep the computation in the input's dtype (float32 here): a float64 tensor mixed in (such as "
                    "torch.as_tensor of a NumPy array) makes the matrix products fail, or turns the output into "
                    "float64, which MSELoss cannot mix with float32 targets.",
    "positions-concat": "Concatenate the first seq_len rows of the positional table after the token features: "
                        "torch.cat([seq, self.pos.weight[:seq_len]], dim=-1).",
    "positions-order": "Positions come after the token features: [seq, pos], not [pos, seq]; the rows of Km, Qm "
                       "and Vm follow that order.",
    "gradients-broken": "Keep the whole forward pass in PyTorch: .detach(), .numpy(), .item(), torch.tensor(...) of "
                        "an intermediate result or torch.no_grad() cut the gradient, and training then changes "
                        "nothing.",
    # the three designs
    "design-shapes": "Return the matrices in the order and shapes the task asks for: read check_design's message.",
    "pos-too-few-rows": "The positional table needs a row for every position of the longest sequence: 4 for the "
                        "position task, 5 (CLS and 4 tokens) for the challenge.",
    "design-not-finite": "Every output must be a finite number: keep your matrices' entries finite and well below "
                         "1e100.",
    "design-values": "Check the values: on a sequence of one token, the output is that token's value x @ Vm, whatever "
                     "the attention, and it must already be the target.",
    "design-margin": "Your design prefers the right keys, but by too small a margin, so the other keys keep some "
                     "weight. Scale Qm or Km up: for m other keys, the gap in scores must be at least ln(100 m), "
                     "about 6.2 for m = 5, and scaling both Qm and Km by s scales the scores by s squared.",
    "content-selection": "Each query must score the keys holding its own token above every other key: a high score "
                         "for matching token features, a low one for different tokens.",
    "position-key": "Give position 0 a key that every query scores highest: mark position 0 in the positional "
                    "table, and read that mark in the position rows of Km.",
    "position-query": "Every query must ask for position 0, whatever its own token: give the three token rows of "
                      "Qm the same entries (each token has exactly one feature equal to 1).",
    "design-rule": "Run check_design on your design and look at the first failing sequence with plot_example: which "
                   "keys does each query attend to, and what are their values?",
    "challenge-value-signs": "Your outputs have the opposite sign of the targets: swap the signs of the values (the "
                             "value of CLS and the values of the tokens).",
    "challenge-self-match": "A token scores highest against its own key, so it never looks past itself: add a "
                            "penalty for query and key at the same position (a position block of Qm Km^T with a "
                            "negative diagonal), so that only a copy at another position can outscore CLS.",
    "challenge-cls-offset": "A token that occurs once must attend to CLS: give the CLS key a score, for every query, "
                            "above what any other single token gets and below a match with a copy.",
    "challenge-content": "A repeated token must attend to its copy: a content block that scores a query highest "
                         "against keys holding its own token, above the CLS key.",
}


# ---------------------------------------------------------------- evidence: designs judged in the judge's process


def _notebook():
    """The notebook's own given code: reference_attention, the tasks, as_design and check_design."""
    return given_cells(ASSIGNMENT, "setup-reference", "setup-tasks")


def _returned(outputs: dict[str, np.ndarray]) -> tuple | None:
    """The design a function returned, as the probe recorded it (None: not a tuple or list)."""
    count = int(outputs.get("n_matrices", -1))
    if count < 0:
        return None
    return tuple(outputs.get(f"matrix_{i}") for i in range(min(count, 8)))


def _attends_right(weights: np.ndarray, ids: tuple, target_ids: np.ndarray) -> np.ndarray:
    """Per query: does the largest weight on a key holding the target's token beat the largest on any other key?"""
    right = np.asarray(ids)[None, :] == target_ids[:, None]  # (queries, keys)
    best_right = np.where(right, weights, -1.0).max(axis=1)
    best_wrong = np.where(right, -1.0, weights).max(axis=1)
    return best_right > best_wrong + 1e-9


def _token_evidence(nb, runs: list, report) -> dict[str, np.ndarray]:
    """Content and position: whether one-token sequences give the right values, and whether the queries of each
    token attend to keys that hold their target. runs: (token ids, target, output, weights) of every sequence."""
    attends = {token: True for token in range(3)}
    for ids, target, _, weights in runs:
        for token, ok in zip(ids, _attends_right(weights, ids, target.argmax(axis=1))):
            attends[token] &= bool(ok)
    return {"values_right": np.array(report.rows[0]["max_error"] <= nb.TOLERANCE),
            "every_query_attends_right": np.array(all(attends.values())),
            "some_query_attends_right": np.array(any(attends.values()))}


def _challenge_evidence(nb, design: tuple, runs: list) -> dict[str, np.ndarray]:
    """Challenge: whether lone and repeated tokens get the right sign, whether a lone token attends to itself
    most, and whether the design would pass with the opposite values. runs: as for _token_evidence."""
    Km, Qm, Vm, pos = design
    right = {1.0: True, -1.0: True}
    lone_attends_self = False
    for _, target, out, weights in runs:
        for i, (value, wanted) in enumerate(zip(out[1:, 0], target[:, 0]), start=1):
            right[wanted] &= bool(np.sign(value) == wanted and abs(value) >= nb.MIN_SIZE)
            if wanted == 1.0:
                others = np.delete(weights[i], i)
                lone_attends_self |= bool(weights[i, i] > others.max() + 1e-9)
    negated = nb.check_design("challenge", (Km, Qm, -Vm, pos), verbose=False)
    return {"lone_right": np.array(right[1.0]), "repeated_right": np.array(right[-1.0]),
            "lone_attends_self": np.array(lone_attends_self), "negated_passes": np.array(negated.passed)}


def design_evidence(task: str):
    """The evidence function of one task's check: from the returned matrices to the verdict line and clues."""

    def evidence(outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        with np.errstate(all="ignore"):  # infinite or NaN entries are the student's; the rule reports them
            return _evidence(task, outputs)

    return evidence


def _evidence(task: str, outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """shapes ("right" or what is wrong), and if they are right: the rule's verdict line, whether every output is
    finite, and the task's clues."""
    nb, returned = _notebook(), _returned(outputs)
    report = nb.check_design(task, returned, verbose=False)
    found = {"shapes": np.array("right" if report.rows else report.problem)}
    if task != "content" and returned is not None and len(returned) == 4 and np.ndim(returned[3]) == 2:
        found["pos_rows_enough"] = np.array(len(returned[3]) >= nb.rows_needed(task))
    if not report.rows:  # the shapes are wrong: nothing more to run
        return found
    design = nb.as_design(task, returned)
    runs = [(ids, target, *nb.reference_attention(seq, *design)) for ids, seq, target in nb.all_examples(task)]
    found |= {"rule": np.array(report.verdict), "finite": np.array(all(np.isfinite(out).all() for *_, out, _ in runs))}
    if task == "challenge":
        return found | _challenge_evidence(nb, design, runs)
    return found | _token_evidence(nb, runs, report)


EVIDENCE = {"attention_by_content": design_evidence("content"), "attention_by_position": design_evidence("position"),
            "attention_by_content_and_position": design_evidence("challenge")}


# ---------------------------------------------------------------- checks

# Clues the forward checks record (probes.py, _structure and _formula) that tell mistakes apart.
STRUCTURE_CLUES = (Clue("layer_kinds"), Clue("registered"), Clue("distinct"), Clue("in_features"),
                   Clue("out_features"))
FORMULA_CLUES = (Clue("weight_row_sums"), Clue("rows_sum_alike"), Clue("scale", atol=1e-3),
                 Clue("like_scores_transposed"), Clue("eval_weights"), Clue("output_dtype"), Clue("double_weights"))


def structure_diagnoses(output: str) -> tuple[Diagnosis, ...]:
    """The layers' mistakes that break `output` (a module's parameters cannot be set by name)."""
    return (
        Diagnosis("raw-parameters", wrong=(output, "layer_kinds")),
        Diagnosis("unregistered-parameters", wrong=(output, "layer_kinds", "registered")),
        Diagnosis("layers-shared", wrong=(output, "distinct"),
                  right=("layer_kinds", "registered", "in_features", "out_features")),
        Diagnosis("in-features-pos", wrong=(output, "in_features"), right=("layer_kinds",)),
        Diagnosis("out-features", wrong=(output, "out_features"), right=("layer_kinds",)),
    )


def formula_diagnoses(output: str) -> tuple[Diagnosis, ...]:
    """The mistakes of the attention formula that break `output`, and those of the layers."""
    return (
        *structure_diagnoses(output),
        Diagnosis("mixed-dtypes", wrong=(output, "output_dtype"), right=("double_weights",)),
        Diagnosis("dropout-added", wrong=(output, "weight_row_sums"), right=("eval_weights",)),
        Diagnosis("softmax-axis", wrong=(output, "weight_row_sums", "eval_weights")),
        Diagnosis("scores-transposed", wrong=(output, "like_scores_transposed")),
        Diagnosis("attention-scale", wrong=(output, "scale"), right=("weight_row_sums", "like_scores_transposed")),
        Diagnosis("attention-scale", wrong=(output, "weight_row_sums", "scale"), right=("rows_sum_alike",)),
    )


def design_check(check_id: str, piece: str, default: str, clues: tuple[Clue, ...],
                 diagnoses: tuple[Diagnosis, ...]) -> Check:
    """A design's check: the right shapes, then the notebook's rule on every sequence of the task."""
    return Check(check_id, piece, (Expect("shapes", "design-shapes"), Expect("rule", default)),
                 clues=(Clue("pos_rows_enough"), Clue("finite"), *clues),
                 diagnoses=(Diagnosis("pos-too-few-rows", wrong=("shapes", "pos_rows_enough")),
                            Diagnosis("design-not-finite", wrong=("rule", "finite")), *diagnoses))


CHECKS = (
    Check("pytorch_transformer_layers", "PytorchTransformer.__init__", (
        Expect("layer_kinds_plain", "raw-parameters"),
        Expect("registered_plain", "unregistered-parameters"),
        Expect("distinct_plain", "layers-shared"),
        Expect("biases_plain", "linear-bias"),
        Expect("weight_shapes_plain", "out-features"),
        Expect("parameters_plain", "raw-parameters"),
        Expect("layer_kinds_positions", "raw-parameters"),
        Expect("registered_positions", "unregistered-parameters"),
        Expect("distinct_positions", "layers-shared"),
        Expect("biases_positions", "linear-bias"),
        Expect("weight_shapes_positions", "in-features-pos"),
        Expect("parameters_positions", "in-features-pos"),
    ), diagnoses=(
        Diagnosis("unregistered-parameters", wrong=("layer_kinds_plain", "registered_plain")),
    )),
    Check("pytorch_transformer_attention", "PytorchTransformer.forward", (
        Expect("weight_row_sums", "softmax-axis"),
        Expect("scale", "attention-scale", atol=1e-3),
        Expect("output_1", "attention-formula"),
        Expect("output_4", "attention-formula"),
        Expect("output_5", "attention-formula"),
        Expect("output_dtype", "mixed-dtypes"),
    ), clues=(*STRUCTURE_CLUES, *(clue for clue in FORMULA_CLUES if clue.key not in ("weight_row_sums", "scale",
                                                                                      "output_dtype"))),
        diagnoses=formula_diagnoses("output_4")),
    Check("pytorch_transformer_positions", "PytorchTransformer.forward", (
        Expect("output_1", "positions-concat"),
        Expect("output_3", "positions-concat"),
        Expect("output_7", "positions-concat"),
    ), clues=(*STRUCTURE_CLUES, *FORMULA_CLUES, Clue("like_positions_first")), diagnoses=(
        Diagnosis("positions-order", wrong=("output_3", "like_positions_first")),
        *formula_diagnoses("output_3"),
    )),
    Check("pytorch_transformer_gradients", "PytorchTransformer.forward", (
        Expect("forward_error", "raises-error"),
        Expect("backward_error", "gradients-broken"),
        Expect("loss_requires_grad", "gradients-broken"),
        Expect("gradients_nonzero", "gradients-broken"),
        *(Expect(f"grad_{name}", "gradients-broken", same_as=f"numeric_grad_{name}")
          for name in ("Qm", "Km", "Vm", "pos", "seq")),
    ), clues=STRUCTURE_CLUES, diagnoses=structure_diagnoses("forward_error")),
    design_check("attention_by_content", "attention_by_content", "content-selection", (
        Clue("values_right"), Clue("every_query_attends_right")), (
        Diagnosis("design-values", wrong=("rule", "values_right")),
        Diagnosis("design-margin", wrong=("rule",), right=("values_right", "every_query_attends_right")),
    )),
    design_check("attention_by_position", "attention_by_position", "design-rule", (
        Clue("values_right"), Clue("every_query_attends_right"), Clue("some_query_attends_right")), (
        Diagnosis("design-values", wrong=("rule", "values_right")),
        Diagnosis("position-key", wrong=("rule", "some_query_attends_right", "every_query_attends_right")),
        Diagnosis("position-query", wrong=("rule", "every_query_attends_right"), right=("some_query_attends_right",)),
        Diagnosis("design-margin", wrong=("rule",), right=("values_right", "every_query_attends_right")),
    )),
    design_check("attention_by_content_and_position", "attention_by_content_and_position", "design-rule", (
        Clue("lone_right"), Clue("repeated_right"), Clue("lone_attends_self"), Clue("negated_passes")), (
        Diagnosis("challenge-value-signs", wrong=("rule", "negated_passes")),
        Diagnosis("challenge-self-match", wrong=("rule", "lone_right", "lone_attends_self"),
                  right=("repeated_right",)),
        Diagnosis("challenge-cls-offset", wrong=("rule", "lone_right"), right=("repeated_right",)),
        Diagnosis("challenge-content", wrong=("rule", "repeated_right"), right=("lone_right",)),
    )),
)
