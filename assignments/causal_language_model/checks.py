"""Checks of the Causal Language Model assignment, and its catalogue of mistakes.

One `Check` per hidden test cell of the notebook (same id). Each expectation
names a probe output (see probes.py beside this file) and the mistake that
most often breaks it; clues are outputs worth nothing that tell mistakes
apart; a diagnosis names the mistake behind a pattern of wrong and right
outputs (course.verdicts.diagnose).

Sampling is judged by distribution: EVIDENCE compares the frequencies of a
student's 4,000 seeded samples with the exact probabilities the reference
recorded, so two correct samplers that draw random numbers differently both
pass.
"""

from pathlib import Path

import numpy as np

from course.verdicts import Check, Clue, Diagnosis, Expect, reference_for

ASSIGNMENT = Path(__file__).parent.name

MISTAKES = {
    # masked_softmax
    "masked-softmax-values": "Fill the scores of blocked keys (mask == 0) before a softmax over the last dimension, "
                             "then multiply the weights by the mask: allowed keys share all the weight.",
    "mask-polarity": "In masked_softmax, 1 (True) means MAY attend: block the keys where the mask is 0 (False), keep "
                     "the others. Your weights are those of the opposite mask.",
    "mask-added": "A 0/1 mask says which keys are allowed; it is not added to the scores. Turn it into bools "
                  "(mask != 0) and fill the blocked scores.",
    "mask-ignored": "The mask changed nothing: fill the blocked scores before the softmax "
                    "(scores.masked_fill(~allowed, ...)).",
    "mask-broadcast": "The mask must broadcast to the scores: a (T_k,) mask applies to every query, a (B, 1, T_k) mask "
                      "to every query of its sequence. masked_fill and * broadcast; indexing with the mask does not.",
    "softmax-axis": "Apply the softmax over the last dimension, the keys: each row of weights sums to 1.",
    "fill-value": "The fill value fails on some inputs: with a fixed number such as -1e9, a row whose keys are all "
                  "blocked comes out uniform (the softmax spreads its weight over forbidden keys), and float16 cannot "
                  "hold -1e9 at all (its most negative value is -65,504). Fill with torch.finfo(scores.dtype).min, "
                  "which every dtype holds, and multiply the weights by the mask, so that such a row is all zeros.",
    "fill-nan-row": "A row whose keys are all blocked came out NaN: with a fill of -inf the softmax computes 0/0. Fill "
                    "with torch.finfo(scores.dtype).min instead, then multiply the weights by the mask.",
    "nan-repair-hides": "Repairing NaN after the softmax (nan_to_num, masked_fill(isnan(...))) also zeroes a NaN that "
                        "comes from a bug before masked_softmax, so that bug goes unseen. Make a fill that cannot "
                        "produce NaN instead: torch.finfo(scores.dtype).min, then multiply by the mask.",
    "masked-softmax-gradient": "The gradient must be finite and right: keep every step differentiable and free of "
                               "0/0 (fill with torch.finfo(scores.dtype).min, multiply by the mask).",
    "masked-softmax-dtype": "Keep the scores' dtype: float64 scores give float64 weights, and a mask of another "
                            "dtype must not change it (multiply by the bool mask, allowed = mask != 0, not by the "
                            "mask as given: float32 weights times a float64 mask are float64).",
    "mask-after-softmax": "Mask before the softmax, not after: zeroing the blocked weights of a plain softmax and "
                          "renormalising divides 0 by 0 in a row with no allowed key (NaN), and loses every allowed "
                          "weight to underflow when a blocked score is far larger than the allowed ones. Fill the "
                          "blocked scores with torch.finfo(scores.dtype).min, softmax, then multiply by the mask.",
    "softmax-overflow": "Use torch.softmax (or subtract each row's maximum before exp): exp(x) / exp(x).sum() "
                        "overflows to inf / inf = NaN for scores above about 88 in float32 (11 in float16), and a row "
                        "whose scores all underflow gives 0 / 0.",
    "modifies-argument": "Do not change a tensor you were given in place (masked_fill_, /=, +=, [...] = ...): the "
                         "caller's tensor changes under it, and autograd refuses in-place changes of a leaf that "
                         "requires grad. Use the out-of-place forms (masked_fill, x = x / t).",
    # attention_entropy
    "entropy-formula": "H = -sum_j p_j ln p_j over the last dimension (the keys), one value per row: "
                       "(..., T_q, T_k) -> (..., T_q).",
    "entropy-log-base": "Entropy here is in nats: use the natural log (torch.log, torch.special.xlogy), not log2.",
    "entropy-nan-at-zero": "0 ln 0 must count as 0: torch.log(0) is -inf and 0 * -inf is NaN. Use "
                           "torch.special.xlogy(p, p), which is 0 where p is 0.",
    "entropy-zero-rows": "A row of all zeros (masked_softmax's row with every key blocked) has entropy 0: compute "
                         "-sum xlogy(p, p) over the last dimension directly. Do not renormalise the rows: "
                         "torch.distributions.Categorical does, and rejects (or gives NaN for) an all-zero row.",
    # saturation_stats
    "saturation-keys": "Return a dict with exactly the keys max_weight, entropy and jacobian_norm, each a Python "
                       "float.",
    "saturation-values": "Average over every row of every batch dimension (weights.reshape(-1, T_k)): each row's "
                         "largest weight, its entropy, and the Frobenius norm of its Jacobian diag(p) - p p^T.",
    "max-global": "max_weight is the mean over rows of each row's largest weight, weights.max(dim=-1).values.mean(), "
                  "not the largest weight of the whole tensor.",
    "jacobian-norm": "Measure each row's Jacobian diag(p) - p p^T with the Frobenius norm (the square root of the sum "
                     "of squared entries, torch.linalg.matrix_norm's default), then average over rows: not the "
                     "spectral norm (ord=2), not its square.",
    # dependency_matrix
    "dependency-values": "D[i, j] = ||d fn(x)[i] / d x[j]||_F: the square root of the sum of squares of the Jacobian's "
                         "block for output row i and input row j, over both feature dimensions.",
    "dependency-transposed": "Rows of D are outputs and columns are inputs: D[i, j] is how much output i depends on "
                             "input j. Your matrix is the transpose.",
    "dependency-sum-gradient": "The gradient of fn(x).sum() adds every output row together: it gives one number per "
                               "input, not one per (output, input) pair. Take the full Jacobian "
                               "(torch.autograd.functional.jacobian) or the gradient of each output row.",
    "modifies-input": "dependency_matrix changed x (its values, requires_grad or .grad): work on a copy, "
                      "x.detach().clone().",
    # causal_mask
    "causal-mask-values": "Block exactly the keys after each query: a bool mask that is True strictly above the "
                          "diagonal (torch.triu(..., diagonal=1)), False on and below it. A float mask must hold "
                          "exactly 0 (allowed) and -inf (blocked): 0 * -inf is NaN, so do not multiply a 0/1 mask "
                          "by -inf (use masked_fill).",
    "mask-convention-may-attend": "This is assignment 1's convention, True = may attend. nn.MultiheadAttention reads "
                                  "a bool attn_mask the other way round, True = BLOCKED: your mask blocks the past "
                                  "and shows the future. Return True above the diagonal.",
    "mask-diagonal-blocked": "Each position may attend to itself: block only the keys strictly after the query "
                             "(diagonal=1). With the diagonal blocked, the first query has no key left (NaN).",
    "mask-float-zero-one": "nn.MultiheadAttention ADDS a float attn_mask to the scores, so 0s and 1s block nothing "
                           "and the model reads the future. Return bools (True = blocked), or floats 0 (allowed) and "
                           "-inf (blocked).",
    "mask-device": "Create the mask on the device you are given: torch.ones(..., device=device).",
    # make_examples
    "examples-windows": "x[b] = data[s : s+T] and y[b] = data[s+1 : s+T+1] for s = starts[b]: B windows of block_size "
                        "consecutive ids, and the same windows one id later.",
    "targets-not-shifted": "The targets are the inputs: y must be the window shifted by ONE, data[s+1 : s+T+1], so "
                           "that each position predicts the next character.",
    "targets-shifted-by-2": "The targets are shifted by two: y = data[s+1 : s+T+1], one id after x, not two.",
    "examples-dtype": "Return int64 ids (torch.long), as data is: embeddings and cross_entropy need integer ids.",
    # DecoderBlock
    "block-formula": "h = x + drop(attn(ln1(x))) with the mask, then h + drop(ff(ln2(h))): each sublayer reads the "
                     "normalised stream and adds its output to the raw one.",
    "block-attribute-names": "Create exactly the attributes ln1, attn, ln2, ff (nn.Sequential(Linear, GELU, Linear)) "
                             "and drop: the grader sets their weights by name.",
    "block-post-norm": "This is post-norm, LN(x + sublayer(x)). The block is pre-norm: x + drop(attn(ln1(x))), then "
                       "h + drop(ff(ln2(h))): the residual stream itself is never normalised.",
    "block-mask-not-passed": "The mask makes no difference: pass attn_mask on, self.attn(h, h, h, "
                             "attn_mask=attn_mask).",
    "block-batch-first": "Create the attention with batch_first=True: without it nn.MultiheadAttention reads "
                         "(B, T, d) as (T, B, d) and attends across the batch.",
    "block-dropout": "Apply self.drop (an nn.Dropout module, which eval mode turns off) to each sublayer's output "
                     "before adding it to the stream, and nowhere else.",
    "attention-maps-accumulate": "Do not keep tensors on the module at every forward (a list of attention maps): "
                                 "it grows without end and holds every call's autograd graph in memory. Return or "
                                 "compute maps only when asked.",
    # TinyGPT
    "gpt-attribute-names": "Create tok_emb, pos_emb, blocks, ln_f and head as named, of the kinds asked for: the "
                           "grader sets them by name.",
    "gpt-blocks": "Build num_layers DecoderBlocks in an nn.ModuleList (a Python list hides them from "
                  "model.parameters()), and run x through each in order: x = block(x, mask), each block reading "
                  "the previous block's output.",
    "gpt-position-table": "The position table has one row per position: nn.Embedding(block_size, d_model), not one "
                          "per character of the vocabulary.",
    "gpt-head-not-tied": "Tie the head to the token embedding: self.head.weight = self.tok_emb.weight (the same "
                         "parameter, not a copy).",
    "gpt-head-bias": "The tied head has no bias: nn.Linear(d_model, vocab_size, bias=False).",
    "gpt-embeddings": "The first block gets tok_emb(idx) + pos_emb(positions 0..T-1), with positions "
                      "torch.arange(T, device=idx.device).",
    "gpt-embedding-scale": "Add the token and position embeddings as they are: a sqrt(d_model) scale also multiplies "
                           "every logit through the tied head.",
    "gpt-no-final-norm": "Apply the final LayerNorm ln_f to the last block's output, before the head.",
    "gpt-forward": "logits = head(ln_f(blocks(tok_emb(idx) + pos_emb(positions)))), each block given the causal mask.",
    "gpt-mask": "Build the mask with causal_mask(T, idx.device) and give it to every block: without it (or with one "
                "in the wrong convention) each position reads the characters it must predict.",
    "default-changed": "Keep the signature's defaults as given: TinyGPT(vocab_size, block_size, d_model=64, "
                       "num_heads=4, num_layers=2, d_ff=256, dropout=0.1), passing d_model, num_heads, d_ff and "
                       "dropout on to every DecoderBlock.",
    "gpt-too-long": "Raise a ValueError when T > block_size: there is no position embedding beyond it.",
    # lm_loss
    "loss-values": "Flatten logits to (B*T, V) and targets to (B*T,) for F.cross_entropy, which wants the classes in "
                   "dimension 1, and return the mean.",
    "loss-sum": "Average over all B*T positions (F.cross_entropy's default reduction='mean'), not the sum.",
    "loss-softmax-first": "Give F.cross_entropy the raw logits: it applies the log-softmax itself.",
    "loss-no-gradient": "Return the loss as a tensor that keeps its gradient: no .item(), float() or "
                        "torch.tensor(...) of it.",
    "loss-ignore-index": "Every target counts: id 0 is a real character, not padding. Do not pass ignore_index to "
                         "F.cross_entropy.",
    "loss-nll-on-logits": "F.nll_loss expects log-probabilities: give the raw logits to F.cross_entropy (or take "
                          "F.log_softmax first); nll_loss of raw logits is just minus the target's logit.",
    # train_lm
    "train-loop": "Each step: model.train(); starts from sample_starts with the seeded generator; make_examples; "
                  "lm_loss; zero_grad, backward, step. Return the dict of step, train_loss and val_loss lists.",
    "history-steps": "Evaluate when the step, counted from 1, is a multiple of eval_every, and after the last step: "
                     "7 steps every 3 are evaluated at steps 3, 6 and 7.",
    "no-zero-grad": "Call optimizer.zero_grad() at every step: otherwise each step adds its gradient to all earlier "
                    "ones.",
    "adam-not-adamw": "Use torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01): Adam applies "
                      "weight decay to the gradient instead (or not at all).",
    "no-train-mode": "Call model.train() at every step: estimate_loss leaves the model in eval mode, where dropout is "
                     "off.",
    "validates-on-train": "history['val_loss'] must be estimate_loss(model, val_data), on the validation text.",
    "seed-ignored": "Seed the batch generator with the seed argument, torch.Generator().manual_seed(seed), and draw "
                    "every batch from it.",
    "same-batch-every-step": "Create the seeded generator once, before the loop: re-seeding it at every step draws "
                             "the same batch every time.",
    "optimizer-recreated": "Create the optimizer once, before the loop: a new AdamW at every step forgets its moment "
                           "estimates, so every step is a first step.",
    "learning-rate-ignored": "Give AdamW the learning_rate argument (lr=learning_rate), not a constant of your own.",
    # next_token_probs
    "probs-values": "softmax(logits / temperature) over the last dimension, one distribution per row.",
    "temperature-multiplied": "Divide the logits by the temperature: a temperature below 1 must sharpen the "
                              "distribution, above 1 flatten it.",
    "top-k-values": "Keep each row's logits at or above its k-th largest and set the others to -inf before the "
                    "softmax.",
    "top-k-not-renormalised": "Set the logits outside the top k to -inf BEFORE the softmax, so that the kept "
                              "probabilities sum to 1.",
    "top-k-too-large": "A top_k larger than the vocabulary keeps everything: ask torch.topk for min(top_k, V).",
    # generate
    "generate-greedy": "Greedy: max_new_tokens times, append the argmax of the last position's logits and run the "
                       "model again on the longer text.",
    "generate-no-crop": "Crop the context to the last model.block_size ids at every step: idx[:, -model.block_size:].",
    "generate-position-0": "Take the logits of the LAST position, logits[:, -1, :]: it predicts the next id.",
    "generate-new-only": "Return the prompts with the new ids appended: shape (B, T + max_new_tokens).",
    "generate-count": "Append exactly max_new_tokens ids, one per step: loop for _ in range(max_new_tokens).",
    "generate-grad": "Generate under torch.no_grad(): no step needs gradients, and with them every step keeps a graph "
                     "in memory.",
    "sampling-distribution": "Sample each id with torch.multinomial(next_token_probs(logits, temperature, top_k), 1, "
                             "generator=generator), from the logits of the last position.",
    "sampling-argmax": "When greedy is False, sample: torch.multinomial(probs, 1, generator=generator). argmax "
                       "always picks the same id.",
    "sampling-generator": "Pass generator on to torch.multinomial: the same generator seed must give the same "
                          "samples.",
    "sampling-default-generator": "With no generator given, sample from PyTorch's global generator (pass "
                                  "generator=None on to torch.multinomial): a fresh torch.Generator() starts from the "
                                  "same fixed seed at every call, so every call draws the same numbers and "
                                  "torch.manual_seed changes nothing.",
}


# ---------------------------------------------------------------- evidence: sampling judged by distribution

SAMPLING_SETTINGS = ("cool_top_3", "hot")
FREQUENCY_TOLERANCE = 0.04  # 4,000 rows: a frequency's standard deviation is at most 0.008, so 5 of them


def sampling_evidence(outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """For each setting: whether the first new id's frequencies are within FREQUENCY_TOLERANCE of the exact
    probabilities the reference recorded (and, clues, of those after the prompt's first id: position 0's logits,
    and of those at temperature 1), and whether one id took every sample."""
    exact = reference_for(ASSIGNMENT)["generate_sampling"]
    found = {}
    for name in SAMPLING_SETTINGS:
        if f"{name}_frequencies" in outputs:
            frequencies = np.asarray(outputs[f"{name}_frequencies"], dtype=float)
            for suffix, probabilities in (("close", exact[f"{name}_exact"]),
                                          ("like_position_0", exact[f"{name}_exact_position_0"]),
                                          ("like_temperature_1", exact[f"{name}_exact_temperature_1"])):
                found[f"{name}_{suffix}"] = np.array(bool(np.abs(frequencies - probabilities).max()
                                                          <= FREQUENCY_TOLERANCE))
            found[f"{name}_one_id"] = np.array(bool(frequencies.max() == 1.0))
    return found


EVIDENCE = {"generate_sampling": sampling_evidence}


# ---------------------------------------------------------------- checks

MASK_CLUES = (Clue("row_sums"), Clue("like_masked_query_axis"), Clue("like_reversed"), Clue("like_additive"),
              Clue("like_no_mask"))


def mask_diagnoses(output: str) -> tuple[Diagnosis, ...]:
    """The mask's mistakes that break a masked softmax's `output` (probes.py, _mask_clues)."""
    return (Diagnosis("mask-polarity", wrong=(output, "like_reversed")),
            Diagnosis("mask-added", wrong=(output, "like_additive")),
            Diagnosis("mask-ignored", wrong=(output, "like_no_mask")),
            Diagnosis("softmax-axis", wrong=(output, "like_masked_query_axis")))


CHECKS = (
    Check("masked_softmax_values", "masked_softmax", (
        Expect("no_mask", "softmax-axis",
               observed="without a mask, the weights differ from torch.softmax(scores, dim=-1)"),
        Expect("bool_mask", "masked-softmax-values",
               observed="with a bool mask (True = may attend), the weights are not the softmax over the allowed keys"),
        Expect("int_mask", "masked-softmax-values",
               observed="with a 0/1 int mask, the weights are not the softmax over the allowed keys"),
        Expect("float_mask", "mask-added",
               observed="with a 0/1 float mask, the weights are not the softmax over the allowed keys"),
        Expect("key_mask", "mask-broadcast",
               observed="with a (T_k,) mask, one for every query, the weights are not the softmax over the allowed "
                        "keys"),
        Expect("batch_mask", "mask-broadcast",
               observed="with a (B, 1, T_k) float mask, the weights are not the softmax over the allowed keys"),
        Expect("float16", "fill-value", atol=2e-3,
               observed="with float16 scores and a bool mask, the weights are not the softmax over the allowed keys"),
        Expect("dtype_kept", "masked-softmax-dtype"),
        Expect("scores_unchanged", "modifies-argument"),
    ), clues=(*MASK_CLUES, Clue("full_shape_mask"), Clue("like_query_axis")), diagnoses=(
        Diagnosis("mask-broadcast", wrong=("key_mask", "bool_mask"), right=("full_shape_mask",)),
        Diagnosis("softmax-axis", wrong=("no_mask", "like_query_axis")),
        Diagnosis("fill-value", wrong=("float16",), right=("bool_mask", "int_mask", "float_mask")),
        *mask_diagnoses("float_mask"),
    )),
    Check("masked_softmax_empty_rows", "masked_softmax", (
        Expect("weights", "masked-softmax-values",
               observed="with a mask whose second row blocks every key, the weights are not the softmax over the "
                        "allowed keys"),
        Expect("empty_rows", "fill-value", observed="a row whose keys are all blocked is not all zeros"),
        Expect("grad", "masked-softmax-gradient",
               observed="the gradient of a weighted sum of the weights, with a row whose keys are all blocked, is "
                        "not what it should be"),
        Expect("grad_finite", "masked-softmax-gradient",
               observed="with a row whose keys are all blocked, the gradient holds NaN or infinite values"),
        Expect("nan_score_shows", "nan-repair-hides",
               observed="a NaN score of an allowed key (a bug before masked_softmax) does not show as NaN in the "
                        "weights"),
        Expect("far_blocked", "mask-after-softmax",
               observed="with the blocked scores far above the allowed ones (near +100 against -100), the weights "
                        "are not the softmax over the allowed keys"),
        Expect("large_scores", "softmax-overflow",
               observed="with scores near 100 (with a mask and without), the weights are not the softmax (NaN or "
                        "wrong values)"),
    ), clues=(*MASK_CLUES, Clue("nan_other_rows"), Clue("empty_rows_nan"), Clue("empty_rows_uniform"),
              Clue("like_after_softmax"),
              Clue("like_no_max_shift")), diagnoses=(
        Diagnosis("fill-nan-row", wrong=("empty_rows", "empty_rows_nan"), right=("far_blocked", "large_scores")),
        Diagnosis("fill-value", wrong=("empty_rows", "empty_rows_uniform")),
        Diagnosis("nan-repair-hides", wrong=("nan_score_shows",), right=("nan_other_rows", "weights", "empty_rows")),
        Diagnosis("mask-after-softmax", wrong=("empty_rows", "far_blocked", "like_after_softmax")),
        Diagnosis("softmax-overflow", wrong=("large_scores", "like_no_max_shift")),
        *mask_diagnoses("weights"),
    )),
    Check("attention_entropy", "attention_entropy", (
        Expect("entropy", "entropy-formula",
               observed="on rows that contain zeros, the entropies differ from -sum_j p_j ln p_j over the keys"),
        Expect("one_row", "entropy-formula",
               observed="on a single row of shape (T_k,), the entropy is not -sum_j p_j ln p_j (a 0-d tensor)"),
        Expect("zero_row", "entropy-zero-rows",
               observed="on a batch with an all-zero row, the entropies are not -sum_j p_j ln p_j (0 for that row)"),
    ), clues=(Clue("finite"), Clue("like_log2"), Clue("like_over_queries"), Clue("like_normalised"),
              Clue("like_negated"), Clue("like_keepdim")), diagnoses=(
        Diagnosis("entropy-log-base", wrong=("entropy", "like_log2")),
        Diagnosis("entropy-nan-at-zero", wrong=("entropy", "finite")),
        Diagnosis("entropy-formula", wrong=("entropy", "like_over_queries")),
        Diagnosis("entropy-formula", wrong=("entropy", "like_normalised")),
        Diagnosis("entropy-formula", wrong=("entropy", "like_negated")),
        Diagnosis("entropy-formula", wrong=("entropy", "like_keepdim")),
        Diagnosis("entropy-zero-rows", wrong=("zero_row",), right=("entropy", "one_row")),
    )),
    Check("saturation_stats", "saturation_stats", (
        Expect("keys", "saturation-keys"),
        Expect("value_types", "saturation-keys"),
        Expect("max_weight", "saturation-values",
               observed="max_weight is not the mean over rows of each row's largest weight"),
        Expect("entropy", "saturation-values", observed="entropy is not the mean over rows of each row's entropy"),
        Expect("jacobian_norm", "jacobian-norm",
               observed="jacobian_norm is not the mean over rows of the Frobenius norm of diag(p) - p p^T"),
    ), clues=(Clue("max_like_global"), Clue("max_like_over_rows"), Clue("jacobian_like_spectral"),
              Clue("jacobian_like_squared"), Clue("jacobian_like_torch_diag")), diagnoses=(
        Diagnosis("max-global", wrong=("max_weight", "max_like_global")),
        Diagnosis("saturation-values", wrong=("max_weight", "max_like_over_rows")),
        Diagnosis("jacobian-norm", wrong=("jacobian_norm", "jacobian_like_spectral")),
        Diagnosis("jacobian-norm", wrong=("jacobian_norm", "jacobian_like_squared")),
        Diagnosis("saturation-values", wrong=("jacobian_norm", "jacobian_like_torch_diag")),
    )),
    Check("dependency_matrix", "dependency_matrix", (
        Expect("causal", "dependency-values",
               observed="for a causal attention layer, D[i, j] is not ||d fn(x)[i] / d x[j]||_F"),
        Expect("upper_exactly_zero", "dependency-values",
               observed="for a causal layer, D is not (T, T) with exact zeros above the diagonal"),
        Expect("dense", "dependency-values",
               observed="for a layer where every output depends on every input, D[i, j] is not "
                        "||d fn(x)[i] / d x[j]||_F"),
        Expect("x_unchanged", "modifies-input"),
        Expect("leaf_unchanged", "modifies-input"),
    ), clues=(Clue("like_transposed"), Clue("like_sum_gradient"), Clue("like_squared"), Clue("like_row_sums")),
        diagnoses=(
        Diagnosis("dependency-transposed", wrong=("causal", "like_transposed")),
        Diagnosis("dependency-sum-gradient", wrong=("causal", "like_sum_gradient")),
        Diagnosis("dependency-values", wrong=("causal", "like_squared")),
        Diagnosis("dependency-values", wrong=("causal", "like_row_sums")),
    )),
    Check("causal_mask", "causal_mask", (
        Expect("blocked_1", "causal-mask-values",
               observed="for T = 1, nn.MultiheadAttention does not read the mask as blocking nothing"),
        Expect("blocked_4", "causal-mask-values",
               observed="for T = 4, the keys nn.MultiheadAttention reads as blocked are not exactly those after "
                        "each query"),
        Expect("blocked_7", "causal-mask-values",
               observed="for T = 7, the keys nn.MultiheadAttention reads as blocked are not exactly those after "
                        "each query"),
        Expect("attention_output", "causal-mask-values",
               observed="nn.MultiheadAttention given the mask for T = 5 does not compute causal attention"),
        Expect("device", "mask-device"),
        Expect("float_values", "causal-mask-values",
               observed="the mask is a float tensor with values other than 0 (allowed) and -inf (blocked)"),
    ), clues=(Clue("dtype"), Clue("may_attend_convention"), Clue("diagonal_blocked"), Clue("float_zero_one"),
              Clue("has_nan")), diagnoses=(
        Diagnosis("mask-convention-may-attend", wrong=("blocked_4", "may_attend_convention")),
        Diagnosis("mask-diagonal-blocked", wrong=("blocked_4", "diagonal_blocked")),
        Diagnosis("mask-float-zero-one", wrong=("blocked_4", "float_zero_one")),
        Diagnosis("causal-mask-values", wrong=("attention_output", "has_nan")),
        Diagnosis("causal-mask-values", wrong=("float_values",),
                  right=("blocked_1", "blocked_4", "blocked_7", "attention_output")),
    )),
    Check("make_examples", "make_examples", (
        Expect("x", "examples-windows"),
        Expect("y", "examples-windows", observed="y is not the windows shifted by one, data[s+1 : s+T+1]"),
        Expect("last_window", "examples-windows",
               observed="for the window whose last target is the data's last id, x and y are not data[s : s+T] and "
                        "data[s+1 : s+T+1]"),
        Expect("dtypes", "examples-dtype"),
    ), clues=(Clue("targets_like_inputs"), Clue("targets_shifted_by_2"), Clue("targets_rolled")), diagnoses=(
        Diagnosis("targets-not-shifted", wrong=("y", "targets_like_inputs"), right=("x",)),
        Diagnosis("targets-shifted-by-2", wrong=("y", "targets_shifted_by_2"), right=("x",)),
        Diagnosis("examples-windows", wrong=("y", "targets_rolled")),
    )),
    Check("decoder_block", "DecoderBlock", (
        Expect("kinds", "block-attribute-names"),
        Expect("parameters", "block-attribute-names"),
        Expect("batch_first", "block-batch-first"),
        Expect("masked_output", "block-formula",
               observed="in eval mode with the causal mask, the output is not x + attn(ln1(x)), then "
                        "+ ff(ln2(.))"),
        Expect("float_mask_output", "block-formula",
               observed="in eval mode with the causal mask as floats (0 and -inf), the output is not the pre-norm "
                        "block's"),
        Expect("unmasked_output", "block-formula",
               observed="in eval mode without a mask, the output is not the pre-norm block's"),
        Expect("train_output", "block-dropout",
               observed="in training mode, the output is not the pre-norm block's with dropout on each sublayer's "
                        "output"),
        Expect("holds_no_more", "attention-maps-accumulate"),
    ), clues=(Clue("like_post_norm"), Clue("mask_changes_output"), Clue("eval_deterministic"), Clue("like_ff_ln1"),
              Clue("like_ff_reads_input"), Clue("like_relu")), diagnoses=(
        Diagnosis("block-post-norm", wrong=("masked_output", "like_post_norm")),
        Diagnosis("block-mask-not-passed", wrong=("masked_output", "mask_changes_output")),
        Diagnosis("block-batch-first", wrong=("masked_output", "batch_first")),
        Diagnosis("block-dropout", wrong=("masked_output", "eval_deterministic")),
        Diagnosis("block-dropout", wrong=("train_output",),
                  right=("masked_output", "float_mask_output", "unmasked_output")),
        Diagnosis("block-attribute-names", wrong=("masked_output", "parameters")),
        Diagnosis("block-formula", wrong=("masked_output", "like_ff_ln1")),
        Diagnosis("block-formula", wrong=("masked_output", "like_ff_reads_input")),
        Diagnosis("block-formula", wrong=("masked_output", "like_relu")),
    )),
    Check("tiny_gpt", "TinyGPT", (
        Expect("kinds", "gpt-attribute-names"),
        Expect("blocks_made", "gpt-blocks"),
        Expect("blocks_registered", "gpt-blocks"),
        Expect("head_tied", "gpt-head-not-tied"),
        Expect("head_bias", "gpt-head-bias"),
        Expect("position_rows", "gpt-position-table"),
        Expect("logits", "gpt-forward",
               observed="with the grader's blocks, the logits for T = block_size are not "
                        "head(ln_f(blocks(tok_emb(idx) + pos_emb(0..T-1))))"),
        Expect("positions_on_device", "gpt-embeddings"),
        Expect("mask_on_device", "gpt-mask"),
        Expect("defaults", "default-changed",
               observed="built with only vocab_size and block_size, the model does not make num_layers=2 blocks of "
                        "d_model=64, num_heads=4, d_ff=256 and dropout=0.1, the signature's defaults"),
    ), clues=(Clue("dropout_passed"), Clue("arguments_passed"), Clue("block_input"), Clue("short_block_input"),
              Clue("input_like_scaled"), Clue("like_no_final_norm"),
              Clue("masks_causal"), Clue("blocks_share_input"), Clue("value_error_at_block_size")),
        diagnoses=(
        Diagnosis("gpt-mask", wrong=("logits", "masks_causal")),
        Diagnosis("gpt-blocks", wrong=("logits", "blocks_made")),
        Diagnosis("gpt-blocks", wrong=("kinds", "blocks_registered")),
        Diagnosis("gpt-blocks", wrong=("logits", "blocks_share_input")),
        Diagnosis("gpt-embeddings", wrong=("logits", "block_input")),
        Diagnosis("gpt-embeddings", wrong=("logits", "short_block_input")),
        Diagnosis("gpt-embedding-scale", wrong=("logits", "block_input", "input_like_scaled")),
        Diagnosis("gpt-no-final-norm", wrong=("logits", "like_no_final_norm"), right=("block_input",)),
        Diagnosis("gpt-head-not-tied", wrong=("logits", "head_tied")),
        Diagnosis("gpt-too-long", wrong=("logits", "value_error_at_block_size")),
        Diagnosis("default-changed", wrong=("defaults",),
                  right=("dropout_passed", "arguments_passed", "logits", "kinds", "blocks_made",
                         "blocks_registered")),
    )),
    Check("tiny_gpt_causal", "TinyGPT.forward", (
        Expect("masks_given", "gpt-mask"),
        Expect("future_independent", "gpt-mask"),
        Expect("prefix_consistent", "gpt-embeddings",
               observed="the logits of the first 3 ids differ from the first 3 logits of the 5 ids"),
        Expect("value_error_at_block_size", "gpt-too-long"),
        Expect("too_long", "gpt-too-long"),
    ), diagnoses=(
        Diagnosis("gpt-mask", wrong=("prefix_consistent", "future_independent")),
    )),
    Check("lm_loss", "lm_loss", (
        Expect("loss", "loss-values",
               observed="the loss is not the mean cross-entropy over all B*T positions (targets with id 0 among "
                        "them)"),
        Expect("grad", "loss-no-gradient",
               observed="the gradient of the loss with respect to the logits is not that of the mean cross-entropy"),
        Expect("shape", "loss-values", observed="the loss is not a 0-d tensor"),
    ), clues=(Clue("no_gradient"), Clue("like_sum"), Clue("like_softmax_first"), Clue("like_ignore_0"),
              Clue("like_nll_on_logits"), Clue("like_unflattened")), diagnoses=(
        Diagnosis("loss-sum", wrong=("loss", "like_sum")),
        Diagnosis("loss-softmax-first", wrong=("loss", "like_softmax_first")),
        Diagnosis("loss-ignore-index", wrong=("loss", "like_ignore_0")),
        Diagnosis("loss-nll-on-logits", wrong=("loss", "like_nll_on_logits")),
        Diagnosis("loss-values", wrong=("loss", "like_unflattened")),
        Diagnosis("loss-no-gradient", wrong=("grad", "no_gradient"), right=("loss",)),
    )),
    Check("train_lm", "train_lm", (
        Expect("history_keys", "train-loop"),
        Expect("step", "history-steps"),
        Expect("train_loss", "train-loop", observed="the training losses in the history are not those expected"),
        Expect("val_loss", "validates-on-train",
               observed="the validation losses in the history are not those expected"),
        Expect("final_parameters", "train-loop",
               observed="after 7 steps with the default seed, the parameters are not those of AdamW steps on the "
                        "seeded batches"),
        Expect("seed_5_parameters", "seed-ignored",
               observed="after 7 steps with seed 5, the parameters are not those expected"),
    ), clues=(Clue("like_adam"), Clue("like_no_zero_grad"), Clue("like_eval_mode"), Clue("like_same_batch"),
              Clue("like_new_optimizer"), Clue("learning_rate_used"), Clue("trained"), Clue("val_like_train"),
              Clue("seed_5_like_default")),
        diagnoses=(
        Diagnosis("adam-not-adamw", wrong=("final_parameters", "like_adam")),
        Diagnosis("no-zero-grad", wrong=("final_parameters", "like_no_zero_grad")),
        Diagnosis("no-train-mode", wrong=("final_parameters", "like_eval_mode")),
        Diagnosis("same-batch-every-step", wrong=("final_parameters", "like_same_batch")),
        Diagnosis("optimizer-recreated", wrong=("final_parameters", "like_new_optimizer")),
        Diagnosis("learning-rate-ignored", wrong=("final_parameters", "learning_rate_used"), right=("trained",)),
        Diagnosis("validates-on-train", wrong=("val_loss", "val_like_train")),
        Diagnosis("seed-ignored", wrong=("seed_5_parameters",), right=("final_parameters",)),
        Diagnosis("seed-ignored", wrong=("seed_5_parameters", "seed_5_like_default"), right=("trained",)),
    )),
    Check("next_token_probs", "next_token_probs", (
        Expect("plain", "probs-values", observed="at temperature 1 without top_k, the probabilities differ from "
                                                 "softmax(logits) over the last dimension"),
        Expect("cold", "temperature-multiplied",
               observed="at temperature 0.5, the probabilities differ from softmax(logits / 0.5)"),
        Expect("hot_top_3", "top-k-values",
               observed="at temperature 2 with top_k=3, the probabilities are not softmax(logits / 2) over each "
                        "row's 3 largest logits"),
        Expect("top_20", "top-k-too-large",
               observed="with top_k=20, more than the 8 logits there are, the probabilities differ from "
                        "softmax(logits)"),
        Expect("one_row", "probs-values", observed="on a single row of logits (V,), the probabilities are not "
                                                   "those expected"),
        Expect("logits_unchanged", "modifies-argument"),
    ), clues=(Clue("top_3_sums"), Clue("like_multiplied"), Clue("like_unnormalised"), Clue("like_k_minus_1"),
              Clue("like_k_plus_1"), Clue("like_other_k")), diagnoses=(
        Diagnosis("temperature-multiplied", wrong=("cold", "like_multiplied")),
        Diagnosis("top-k-not-renormalised", wrong=("hot_top_3", "top_3_sums"), right=("plain",)),
        Diagnosis("top-k-not-renormalised", wrong=("hot_top_3", "like_unnormalised")),
        Diagnosis("top-k-values", wrong=("hot_top_3", "like_k_minus_1")),
        Diagnosis("top-k-values", wrong=("hot_top_3", "like_k_plus_1")),
        Diagnosis("top-k-values", wrong=("hot_top_3", "like_other_k")),
        Diagnosis("top-k-too-large", wrong=("top_20",), right=("plain", "hot_top_3")),
    )),
    Check("generate_greedy", "generate", (
        Expect("greedy", "generate-greedy",
               observed="greedy decoding of a scripted model from a 3-id prompt does not give the expected ids"),
        Expect("long_prompt", "generate-no-crop",
               observed="greedy decoding from a prompt longer than block_size does not give the expected ids"),
        Expect("grad_off", "generate-grad"),
    ), clues=(Clue("like_position_0"), Clue("like_first_ids"), Clue("uncropped"), Clue("new_only"),
              Clue("other_count"), Clue("like_short_crop")), diagnoses=(
        Diagnosis("generate-no-crop", wrong=("greedy", "uncropped")),
        Diagnosis("generate-no-crop", wrong=("long_prompt", "uncropped")),
        Diagnosis("generate-no-crop", wrong=("greedy", "like_first_ids")),
        Diagnosis("generate-no-crop", wrong=("greedy", "like_short_crop")),
        Diagnosis("generate-position-0", wrong=("greedy", "like_position_0")),
        Diagnosis("generate-new-only", wrong=("greedy", "new_only")),
        Diagnosis("generate-count", wrong=("greedy", "other_count")),
    )),
    Check("generate_sampling", "generate", (
        Expect("cool_top_3_shape", "generate-new-only",
               observed="sampling 3 new ids after 2-id prompts does not return shape (rows, 5)"),
        Expect("cool_top_3_prompt_kept", "generate-new-only"),
        Expect("cool_top_3_close", "sampling-distribution",
               observed="at temperature 0.8 with top_k=3, the first new id's frequencies are not the probabilities "
                        "of next_token_probs"),
        Expect("cool_top_3_outside_top_k", "sampling-distribution",
               observed="with top_k=3, some sampled ids are outside the 3 most likely of their step"),
        Expect("hot_close", "sampling-distribution",
               observed="at temperature 1.5, the first new id's frequencies are not the probabilities of "
                        "next_token_probs"),
        Expect("cool_top_3_repeatable", "sampling-generator"),
        Expect("hot_repeatable", "sampling-generator"),
        Expect("default_generator", "sampling-default-generator",
               observed="with no generator given, the samples do not follow torch.manual_seed (the same seed, the "
                        "same ids; another seed, other ids)"),
    ), clues=(Clue("cool_top_3_one_id"), Clue("hot_one_id"), Clue("hot_like_position_0"),
              Clue("hot_like_temperature_1"), Clue("cool_top_3_new_only"), Clue("uncropped")),
        diagnoses=(
        Diagnosis("sampling-argmax", wrong=("hot_close", "hot_one_id")),
        Diagnosis("generate-position-0", wrong=("hot_close", "hot_like_position_0")),
        Diagnosis("sampling-distribution", wrong=("hot_close", "hot_like_temperature_1")),
        Diagnosis("generate-no-crop", wrong=("cool_top_3_shape", "uncropped")),
        Diagnosis("generate-new-only", wrong=("cool_top_3_shape", "cool_top_3_new_only")),
        Diagnosis("sampling-default-generator", wrong=("default_generator",),
                  right=("cool_top_3_close", "hot_close", "hot_repeatable")),
    )),
)
