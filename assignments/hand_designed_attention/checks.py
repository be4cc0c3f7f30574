"""Checks of the Attention Designed by Hand assignment, and its catalogue of mistakes.

One `Check` per hidden test cell of the notebook (same id). Each expectation
names a probe output (see probes.py beside this file) and the mistake that
most often breaks it; clues are outputs worth nothing that tell mistakes
apart; a diagnosis names the mistake behind a pattern of wrong and right
outputs (course.verdicts.diagnose).

A design is judged by what it does, never by its matrices: EVIDENCE runs the
matrices a student's function returned on every sequence of the task, in the
judge's process, with the notebook's own given code (reference_attention,
check_design: the rule the student reads and runs), and derives the verdict
line and clues from the outputs and attention weights.
"""

from pathlib import Path

import numpy as np

from course.assignment_parts import given_cells
from course.verdicts import Check, Clue, Diagnosis, Expect

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
    "attention-scale": "Divide the scores (before the softmax, not the weights after it) by sqrt(qk_dim), the number "
                       "of columns of Q: not by qk_dim, not by sqrt(input_dim), sqrt(v_dim) or the sequence length, "
                       "and not left unscaled. Mind the precedence: qk_dim ** 1/2 is qk_dim / 2; use "
                       "math.sqrt(self.qk_dim).",
    "softmax-overflow": "Subtract each row's largest score before exp, or call torch.softmax: exp overflows to inf "
                        "above a score of about 88 in float32, and inf / inf is NaN.",
    "broadcast-keepdim": "Reduce with keepdim=True (or index [:, None]) before combining with the scores: a row "
                         "maximum or sum of shape (seq_len,) broadcasts along the last dimension, so column j gets "
                         "row j's value.",
    "mask-added": "This layer has no mask: every query attends to every key, earlier and later positions alike. "
                  "Remove the masking of the scores.",
    "kv-cache-stale": "Compute the keys and values from the sequence of every call: keys and values cached at the "
                      "first call and never recomputed answer later sequences with the first one's.",
    "scores-transposed": "The scores are Q @ K.T (row i: query i against every key); K @ Q.T swaps queries and keys.",
    "attention-formula": "out = softmax(Q K^T / sqrt(qk_dim), dim=-1) @ V, with Q = x Qm, K = x Km, V = x Vm: compare "
                         "your steps with reference_attention.",
    "dropout-added": "This layer has no dropout: remove it. In training mode (a new module's mode) dropout changes "
                     "the outputs at random, and F.dropout without training=self.training drops in every mode.",
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
    "design-shapes": "Return the matrices in the order and shapes the task asks for, keys first: (Km, Qm, Vm) or "
                     "(Km, Qm, Vm, pos); read check_design's message.",
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
    "challenge-cls-value": "The output of a token that occurs once is (almost) the value of CLS: give CLS a value "
                           "with the sign of \"occurs once\", as large as the tokens' values.",
    "forward-returns-tuple": "forward returns one tensor, the output (seq_len, v_dim); reference_attention also "
                             "returns the weights, but the module must not (callers multiply, compare and train on "
                             "model(seq) directly).",
    "output-squeezed": "Return the (seq_len, v_dim) result as it is: .squeeze() drops the dimensions of size 1, so a "
                       "sequence of one token or a layer with v_dim = 1 returns the wrong shape.",
    "zero-init": "Keep nn.Linear's random initialisation: with Qm and Km both zero, the gradient of each is "
                 "multiplied by the other, so both stay zero and the attention stays uniform however long you train.",
    "arrays-aliased": "Your matrices are one array with several names (Km = Qm = Vm = np.eye(3)): scaling one in "
                      "place (*=) scales them all. Create each matrix on its own, or .copy() it.",
    "challenge-blocks-overlap": "Give each block of Qm and Km columns of its own: blocks that share a column add "
                                "cross scores between unrelated features (such as a token feature against a "
                                "position feature).",
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
            "every_query_attends_right": np.array(all(attends.values()))}


def _key0_distinct(design: tuple) -> np.ndarray:
    """Position: whether each token's key at position 0 differs from its keys at every other position (if not, no
    query can tell position 0 apart)."""
    Km, _, _, pos = design
    keys = [[np.concatenate([np.eye(3)[token], pos[i]]) @ Km for i in range(4)] for token in range(3)]
    return np.array(all(np.abs(row[0] - row[i]).max() > 1e-9 for row in keys for i in range(1, 4)))


def _challenge_evidence(nb, runs: list) -> dict[str, np.ndarray]:
    """Challenge: whether lone and repeated tokens get the right sign, and whether the query of every lone token
    weighs CLS above itself and above every other key. runs: as for _token_evidence."""
    right = {1.0: True, -1.0: True}
    cls_beats_self, cls_beats_others, self_first = True, True, True
    for _, target, out, weights in runs:
        for i, (value, wanted) in enumerate(zip(out[1:, 0], target[:, 0]), start=1):
            right[wanted] &= bool(np.sign(value) == wanted and abs(value) >= nb.MIN_SIZE)
            if wanted == 1.0:
                cls_beats_self &= bool(weights[i, 0] > weights[i, i] + 1e-9)
                rest = np.delete(weights[i], [0, i])
                cls_beats_others &= bool(rest.size == 0 or weights[i, 0] > rest.max() + 1e-9)
                self_first &= bool(weights[i, i] > np.delete(weights[i], i).max() + 1e-9)
    return {"lone_right": np.array(right[1.0]), "repeated_right": np.array(right[-1.0]),
            "cls_beats_self": np.array(cls_beats_self), "cls_beats_others": np.array(cls_beats_others),
            "lone_self_first": np.array(self_first)}


def _blocks_apart(design: tuple, token_dim: int) -> tuple:
    """The design with the token rows and the position rows of Qm and Km in columns of their own: the same scores
    without the cross terms between token and position features."""
    Km, Qm, Vm, pos = design

    def apart(m):
        return np.block([[m[:token_dim], np.zeros_like(m[:token_dim])], [np.zeros_like(m[token_dim:]), m[token_dim:]]])

    return apart(Km), apart(Qm), Vm, pos


def _fixes(nb, task: str, design: tuple, passed: bool) -> dict[str, np.ndarray]:
    """Whether the design, failing, would pass with one change: Km and Qm swapped (swapped_passes); in the
    challenge, also Vm negated (negated_passes) and its blocks in columns apart (apart_passes)."""
    Km, Qm, Vm, pos = design
    tail = () if task == "content" else (pos,)
    changed = {"swapped_passes": (Qm, Km, Vm, *tail)}
    if task == "challenge":
        changed |= {"negated_passes": (Km, Qm, -Vm, pos), "apart_passes": _blocks_apart(design, 4)}
    return {key: np.array(not passed and nb.check_design(task, d, verbose=False).passed) for key, d in changed.items()}


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
    # Vm (the third matrix) one array with Km or Qm: changed in place with them
    found["values_aliased"] = np.array(any("2" in pair.split("-") for pair in np.atleast_1d(outputs.get("aliased", ()))
                                           if str(pair)))
    found |= _fixes(nb, task, design, report.passed)
    if task == "challenge":
        return found | _challenge_evidence(nb, runs)
    if task == "position":
        found["key0_distinct"] = _key0_distinct(design)
    return found | _token_evidence(nb, runs, report)


EVIDENCE = {"attention_by_content": design_evidence("content"), "attention_by_position": design_evidence("position"),
            "attention_by_content_and_position": design_evidence("challenge")}


# ---------------------------------------------------------------- checks

# Clues the forward checks record (probes.py: _structure, _formula and _calls) that tell mistakes apart. The
# like_* clues simulate one mistake each: the probe computes, with the same matrices, the output that mistake gives.
STRUCTURE_CLUES = (Clue("layer_kinds"), Clue("registered"), Clue("distinct"), Clue("in_features"),
                   Clue("out_features"))
FORMULA_CLUES = (Clue("weights"), Clue("weight_row_sums"), Clue("rows_sum_alike"), Clue("scale", atol=1e-3),
                 Clue("rescaled_softmax"), Clue("like_scores_transposed"), Clue("like_softmax_over_queries"),
                 Clue("like_weights_transposed"), Clue("like_causal_mask"), Clue("like_broadcast_row_stat"),
                 Clue("like_values_from_queries"), Clue("large_weights"), Clue("large_finite"),
                 Clue("output_dtype"), Clue("double_weights"))
SHAPE_CLUES = (Clue("output_is_tuple"), Clue("like_squeezed"))
CALL_CLUES = (Clue("first_call"), Clue("first_call_without_dropout"), Clue("like_stale_keys"),
              Clue("changes_when_repeated"))


def structure_diagnoses(output: str) -> tuple[Diagnosis, ...]:
    """The layers' mistakes that break `output` (a module's parameters cannot be set by name)."""
    return (
        Diagnosis("raw-parameters", wrong=(output, "layer_kinds"), right=("registered",)),
        Diagnosis("unregistered-parameters", wrong=(output, "layer_kinds", "registered")),
        Diagnosis("layers-shared", wrong=(output, "distinct"),
                  right=("layer_kinds", "registered", "in_features", "out_features")),
        Diagnosis("in-features-pos", wrong=(output, "in_features"), right=("layer_kinds",)),
        Diagnosis("out-features", wrong=(output, "out_features"), right=("layer_kinds",)),
    )


def formula_diagnoses(output: str) -> tuple[Diagnosis, ...]:
    """The mistakes of the attention formula that break `output`, and those of the layers: each singled out by a
    clue that simulates it, or by a first call that is right where the later ones are not."""
    return (
        *structure_diagnoses(output),
        Diagnosis("mixed-dtypes", wrong=("output_dtype",), right=("double_weights",)),
        Diagnosis("dropout-added", wrong=(output, "first_call", "changes_when_repeated"),
                  right=("first_call_without_dropout",)),
        Diagnosis("state-between-calls", wrong=(output, "changes_when_repeated"), right=("first_call",)),
        Diagnosis("kv-cache-stale", wrong=(output, "like_stale_keys"), right=("first_call",)),
        Diagnosis("softmax-axis", wrong=(output, "like_softmax_over_queries")),
        Diagnosis("scores-transposed", wrong=(output, "like_scores_transposed")),
        Diagnosis("attention-formula", wrong=(output, "like_weights_transposed")),
        Diagnosis("attention-formula", wrong=(output, "like_values_from_queries")),
        Diagnosis("mask-added", wrong=(output, "like_causal_mask")),
        Diagnosis("broadcast-keepdim", wrong=(output, "like_broadcast_row_stat")),
        # the weights are a softmax of the scores at another scale (or times a constant), and the same every time
        Diagnosis("attention-scale", wrong=(output, "scale"),
                  right=("rescaled_softmax", "weight_row_sums", "changes_when_repeated")),
        Diagnosis("attention-scale", wrong=(output, "weight_row_sums"),
                  right=("rescaled_softmax", "rows_sum_alike", "changes_when_repeated")),
        Diagnosis("softmax-overflow", wrong=("large_weights", "large_finite"), right=("weights",)),
    )


def shape_diagnoses(output: str) -> tuple[Diagnosis, ...]:
    """What forward returns, told by its type and shape: a tuple, or the output with its dimensions of 1 dropped
    (the right values, computed by the probe from the same matrices, squeezed)."""
    return (Diagnosis("forward-returns-tuple", wrong=(output, "output_is_tuple")),
            Diagnosis("output-squeezed", wrong=("output_1", "like_squeezed")))


RULE_FAILS = "check_design fails on your design: the line above names the first failing sequence"
# Clues of the designs' evidence that say the design would pass with one change (checks.py, _fixes).
FIXES = {"content": ("swapped_passes",), "position": ("swapped_passes",),
         "challenge": ("swapped_passes", "negated_passes", "apart_passes")}


def design_check(check_id: str, task: str, default: str, clues: tuple[Clue, ...],
                 diagnoses: tuple[Diagnosis, ...], fixed: tuple[Diagnosis, ...] = ()) -> Check:
    """A design's check: the right shapes, then the notebook's rule on every sequence of the task. `fixed`: the
    diagnoses of a design that passes with one change (a clue of FIXES); the others hold only when none does."""
    fixes = FIXES[task]
    order = Diagnosis("design-shapes", wrong=("rule", "swapped_passes"))
    return Check(check_id, check_id, (Expect("shapes", "design-shapes"), Expect("rule", default, observed=RULE_FAILS)),
                 clues=(Clue("pos_rows_enough"), Clue("finite"), *(Clue(key) for key in fixes), *clues),
                 diagnoses=(Diagnosis("pos-too-few-rows", wrong=("shapes", "pos_rows_enough")),
                            Diagnosis("design-not-finite", wrong=("rule", "finite")), order, *fixed,
                            *(Diagnosis(d.mistake, d.wrong, d.right + ("finite", *fixes)) for d in diagnoses)))


# the values are wrong, and Vm is the very array of Km or Qm: changed with them (an in-place scaling of one changes all)
ALIASED = Diagnosis("arrays-aliased", wrong=("rule", "values_right", "values_aliased"))
INITIALISED = ("a new module's layer weights are all zero: nn.Linear initialises them at random, and Qm and Km "
               "that start at zero get no gradient")
LAYER_SHAPES = ("the layers' weights do not have nn.Linear's shape (out_features, in_features): (qk_dim, "
                "total_input_dim) for Qm and Km, (v_dim, total_input_dim) for Vm")
OUTPUT_WRONG = "the output differs from reference_attention's with the same matrices"
GRADIENT_WRONG = ("the gradient that loss.backward() gives {} differs from the one measured by nudging its entries "
                  "and running your forward again")

CHECKS = (
    Check("pytorch_transformer_layers", "PytorchTransformer.__init__", (
        Expect("layer_kinds_plain", "raw-parameters",
               observed="self.Qm, self.Km and self.Vm are not all nn.Linear layers"),
        Expect("registered_plain", "unregistered-parameters"),
        Expect("distinct_plain", "layers-shared"),
        Expect("biases_plain", "linear-bias"),
        Expect("weight_shapes_plain", "out-features", observed=LAYER_SHAPES),
        Expect("initialised_plain", "zero-init", observed=INITIALISED),
        Expect("parameters_plain", "raw-parameters",
               observed="model.named_parameters() is not exactly Qm.weight, Km.weight and Vm.weight, in nn.Linear's "
                        "shapes"),
        Expect("layer_kinds_positions", "raw-parameters",
               observed="with a positional table, self.Qm, self.Km and self.Vm are not all nn.Linear layers"),
        Expect("registered_positions", "unregistered-parameters"),
        Expect("distinct_positions", "layers-shared"),
        Expect("biases_positions", "linear-bias"),
        Expect("weight_shapes_positions", "in-features-pos", observed="with a positional table, " + LAYER_SHAPES),
        Expect("initialised_positions", "zero-init", observed="with a positional table, " + INITIALISED),
        Expect("parameters_positions", "in-features-pos",
               observed="with a positional table, model.named_parameters() is not exactly Qm.weight, Km.weight, "
                        "Vm.weight and pos.weight, in their shapes"),
    ), clues=(Clue("in_features_plain"), Clue("out_features_plain"), Clue("in_features_positions"),
              Clue("out_features_positions")), diagnoses=(
        Diagnosis("raw-parameters", wrong=("layer_kinds_plain",), right=("registered_plain",)),
        Diagnosis("unregistered-parameters", wrong=("layer_kinds_plain", "registered_plain")),
        # nn.Linear layers, registered, of the right shapes, whose weights start at zero
        *(Diagnosis("zero-init", wrong=(f"initialised_{s}",),
                    right=(f"layer_kinds_{s}", f"registered_{s}", f"weight_shapes_{s}")) for s in ("plain", "positions")),
        Diagnosis("out-features", wrong=("weight_shapes_plain", "out_features_plain"), right=("layer_kinds_plain",)),
        Diagnosis("out-features", wrong=("weight_shapes_positions", "out_features_positions"),
                  right=("layer_kinds_positions",)),
        Diagnosis("in-features-pos", wrong=("weight_shapes_positions", "in_features_positions"),
                  right=("layer_kinds_positions", "in_features_plain")),
    )),
    Check("pytorch_transformer_attention", "PytorchTransformer.forward", (
        Expect("weight_row_sums", "softmax-axis",
               observed="the attention weights' rows do not sum to 1 (each query's weights over the keys must)"),
        Expect("scale", "attention-scale", atol=1e-3,
               observed="the attention weights are not a softmax of the scores divided by sqrt(qk_dim)"),
        Expect("output_1", "attention-formula", observed=OUTPUT_WRONG + " (a sequence of 1)"),
        Expect("output_4", "attention-formula", observed=OUTPUT_WRONG + " (a sequence of 4)"),
        Expect("output_5", "attention-formula", observed=OUTPUT_WRONG + " (a sequence of 5)"),
        Expect("output_dtype", "mixed-dtypes", observed="the output is not a float32 tensor for a float32 input"),
        Expect("large_weights", "softmax-overflow",
               observed="with scores of several hundred (as in the notebook's factor-100 demo), the attention "
                        "weights are not softmax's"),
    ), clues=(*STRUCTURE_CLUES, *(clue for clue in FORMULA_CLUES if clue.key not in (
        "weight_row_sums", "scale", "output_dtype", "large_weights")), *CALL_CLUES, *SHAPE_CLUES),
        diagnoses=(*formula_diagnoses("output_4"), *shape_diagnoses("output_4"))),
    Check("pytorch_transformer_positions", "PytorchTransformer.forward", (
        Expect("output_1", "positions-concat", observed=f"with a positional table, {OUTPUT_WRONG} (a sequence of 1)"),
        Expect("output_3", "positions-concat", observed=f"with a positional table, {OUTPUT_WRONG} (a sequence of 3)"),
        Expect("output_7", "positions-concat",
               observed=f"with a positional table, {OUTPUT_WRONG} (a sequence of 7, every row of the table)"),
    ), clues=(*STRUCTURE_CLUES, *FORMULA_CLUES, *CALL_CLUES, Clue("like_positions_first"), Clue("concat_by_grader_1"),
              Clue("concat_by_grader_3"), Clue("concat_by_grader_7"), *SHAPE_CLUES), diagnoses=(
        *shape_diagnoses("output_3"),
        # the grader's own concatenation [seq, pos], given to a module without a table, gives the right outputs
        *(Diagnosis("positions-concat", wrong=(f"output_{n}",),
                    right=(f"concat_by_grader_{n}", "like_positions_first", "layer_kinds", "in_features"))
          for n in (3, 7, 1)),
        Diagnosis("positions-order", wrong=("output_3", "like_positions_first")),
        *formula_diagnoses("output_3"),
    )),
    Check("pytorch_transformer_gradients", "PytorchTransformer.forward", (
        Expect("forward_error", "raises-error"),
        Expect("backward_error", "gradients-broken", observed="loss.backward() raised an error"),
        Expect("loss_requires_grad", "gradients-broken"),
        Expect("gradients_nonzero", "gradients-broken",
               observed="loss.backward() gives no gradient, or an all-zero one, to some parameter or to the input"),
        *(Expect(f"grad_{name}", "gradients-broken", same_as=f"numeric_grad_{name}",
                 observed=GRADIENT_WRONG.format(what))
          for name, what in (("Qm", "Qm.weight"), ("Km", "Km.weight"), ("Vm", "Vm.weight"), ("pos", "pos.weight"),
                             ("seq", "the input"))),
    ), clues=(*STRUCTURE_CLUES, Clue("output"), Clue("output_is_tuple")), diagnoses=(
        *structure_diagnoses("forward_error"),
        Diagnosis("forward-returns-tuple", wrong=("forward_error", "output_is_tuple")),
        # the forward pass is right, and the gradients do not reach everything
        Diagnosis("gradients-broken", wrong=("gradients_nonzero",), right=("output",)),
        Diagnosis("gradients-broken", wrong=("backward_error",), right=("output",)),
    )),
    design_check("attention_by_content", "content", "content-selection", (
        Clue("values_right"), Clue("every_query_attends_right"), Clue("values_aliased")), (
        Diagnosis("design-values", wrong=("rule", "values_right")),
        ALIASED,
        Diagnosis("content-selection", wrong=("rule", "every_query_attends_right"), right=("values_right",)),
        Diagnosis("design-margin", wrong=("rule",), right=("values_right", "every_query_attends_right")),
    )),
    design_check("attention_by_position", "position", "design-rule", (
        Clue("values_right"), Clue("every_query_attends_right"), Clue("key0_distinct"), Clue("values_aliased")), (
        Diagnosis("design-values", wrong=("rule", "values_right")),
        ALIASED,
        # no key tells position 0 apart: the keys (or the table) are at fault, whatever the queries ask
        Diagnosis("position-key", wrong=("rule", "key0_distinct"), right=("values_right",)),
        Diagnosis("position-query", wrong=("rule", "every_query_attends_right"),
                  right=("values_right", "key0_distinct")),
        Diagnosis("design-margin", wrong=("rule",), right=("values_right", "every_query_attends_right")),
    )),
    design_check("attention_by_content_and_position", "challenge", "design-rule", (
        Clue("lone_right"), Clue("repeated_right"), Clue("cls_beats_self"), Clue("cls_beats_others"),
        Clue("lone_self_first")), (
        # lone tokens weigh CLS above every other key, and still get the wrong sign: the value of CLS
        Diagnosis("challenge-cls-value", wrong=("rule", "lone_right"),
                  right=("repeated_right", "cls_beats_self", "cls_beats_others")),
        Diagnosis("challenge-self-match", wrong=("rule", "lone_right", "cls_beats_self"),
                  right=("repeated_right", "cls_beats_others")),
        # every lone token weighs its own key above every other key, CLS included: it matches itself
        Diagnosis("challenge-self-match", wrong=("rule", "lone_right", "cls_beats_self", "lone_self_first"),
                  right=("repeated_right",)),
        Diagnosis("challenge-cls-offset", wrong=("rule", "lone_right", "cls_beats_others"),
                  right=("repeated_right", "lone_self_first")),
        Diagnosis("challenge-content", wrong=("rule", "repeated_right"), right=("lone_right",)),
    ), fixed=(
        Diagnosis("challenge-value-signs", wrong=("rule", "negated_passes")),
        Diagnosis("challenge-blocks-overlap", wrong=("rule", "apart_passes")),
    )),
)
