"""Checks of the Causal Language Model assignment, and its catalogue of mistakes.

One `Check` per hidden test cell of the notebook (same id). Each expectation
names a probe output (see probes.py beside this file) and the mistake that
most often breaks it; clues are outputs worth nothing that tell mistakes
apart; a diagnosis names the mistake behind a pattern of wrong and right
outputs (course.checks.diagnose).

Sampling is judged by distribution: EVIDENCE compares the frequencies of a
student's 4,000 seeded samples with the exact probabilities the reference
recorded, so two correct samplers that draw random numbers differently both
pass.
"""

from pathlib import Path

import numpy as np

from course.checks import Check, Clue, Diagnosis, Expect, reference_for

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
    "masked-softmax-dtype": "Keep the scores' dtype: float64 scores give float64 weights (a mask of another dtype "
                            "must not change it).",
    # attention_entropy
    "entropy-formula": "H = -sum_j p_j ln p_j over the last dimension (the keys), one value per row: "
                       "(..., T_q, T_k) -> (..., T_q).",
    "entropy-log-base": "Entropy here is in nats: use the natural log (torch.log, torch.special.xlogy), not log2.",
    "entropy-nan-at-zero": "0 ln 0 must count as 0: torch.log(0) is -inf and 0 * -inf is NaN. Use "
                           "torch.special.xlogy(p, p), which is 0 where p is 0.",
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
                          "diagonal (torch.triu(..., diagonal=1)), False on and below it.",
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
    # TinyGPT
    "gpt-attribute-names": "Create tok_emb, pos_emb, blocks, ln_f and head as named, of the kinds asked for: the "
                           "grader sets them by name.",
    "gpt-blocks": "Build num_layers DecoderBlocks in an nn.ModuleList (a Python list hides them from "
                  "model.parameters()), and run x through each in order.",
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
    "gpt-too-long": "Raise a ValueError when T > block_size: there is no position embedding beyond it.",
    # lm_loss
    "loss-values": "Flatten logits to (B*T, V) and targets to (B*T,) for F.cross_entropy, which wants the classes in "
                   "dimension 1, and return the mean.",
    "loss-sum": "Average over all B*T positions (F.cross_entropy's default reduction='mean'), not the sum.",
    "loss-softmax-first": "Give F.cross_entropy the raw logits: it applies the log-softmax itself.",
    "loss-no-gradient": "Return the loss as a tensor that keeps its gradient: no .item(), float() or "
                        "torch.tensor(...) of it.",
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
    "generate-grad": "Generate under torch.no_grad(): no step needs gradients, and with them every step keeps a graph "
                     "in memory.",
    "sampling-distribution": "Sample each id with torch.multinomial(next_token_probs(logits, temperature, top_k), 1, "
                             "generator=generator), from the logits of the last position.",
    "sampling-argmax": "When greedy is False, sample: torch.multinomial(probs, 1, generator=generator). argmax "
                       "always picks the same id.",
    "sampling-generator": "Pass generator on to torch.multinomial: the same generator seed must give the same "
                          "samples.",
}


# ---------------------------------------------------------------- evidence: sampling judged by distribution

SAMPLING_SETTINGS = ("cool_top_3", "hot")
FREQUENCY_TOLERANCE = 0.04  # 4,000 rows: a frequency's standard deviation is at most 0.008, so 5 of them


def sampling_evidence(outputs: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """For each setting: whether the first new id's frequencies are within FREQUENCY_TOLERANCE of the exact
    probabilities the reference recorded (and, a clue, of those after the prompt's first id: position 0's logits),
    and whether one id took every sample."""
    exact = reference_for(ASSIGNMENT)["generate_sampling"]
    found = {}
    for name in SAMPLING_SETTINGS:
        if f"{name}_frequencies" in outputs:
            frequencies = np.asarray(outputs[f"{name}_frequencies"], dtype=float)
            for suffix, probabilities in (("close", exact[f"{name}_exact"]),
                                          ("like_position_0", exact[f"{name}_exact_position_0"])):
                found[f"{name}_{suffix}"] = np.array(bool(np.abs(frequencies - probabilities).max()
                                                          <= FREQUENCY_TOLERANCE))
            found[f"{name}_one_id"] = np.array(bool(frequencies.max() == 1.0))
    return found


EVIDENCE = {"generate_sampling": sampling_evidence}


# ---------------------------------------------------------------- checks

MASK_CLUES = (Clue("row_sums"), Clue("like_reversed"), Clue("like_additive"), Clue("like_no_mask"))


def mask_diagnoses(output: str) -> tuple[Diagnosis, ...]:
    """The mask's mistakes that break a masked softmax's `output` (probes.py, _mask_clues)."""
    return (Diagnosis("mask-polarity", wrong=(output, "like_reversed")),
            Diagnosis("mask-added", wrong=(output, "like_additive")),
            Diagnosis("mask-ignored", wrong=(output, "like_no_mask")),
            Diagnosis("softmax-axis", wrong=(output, "row_sums")))


CHECKS = (
    Check("masked_softmax_values", "masked_softmax", (
        Expect("no_mask", "softmax-axis"),
        Expect("bool_mask", "masked-softmax-values"),
        Expect("int_mask", "masked-softmax-values"),
        Expect("float_mask", "mask-added"),
        Expect("key_mask", "mask-broadcast"),
        Expect("batch_mask", "mask-broadcast"),
        Expect("float16", "fill-value", atol=2e-3),
        Expect("float64_dtype", "masked-softmax-dtype"),
    ), clues=(*MASK_CLUES, Clue("full_shape_mask")), diagnoses=(
        Diagnosis("mask-broadcast", wrong=("key_mask", "bool_mask"), right=("full_shape_mask",)),
        *mask_diagnoses("float_mask"),
    )),
    Check("masked_softmax_empty_rows", "masked_softmax", (
        Expect("weights", "masked-softmax-values"),
        Expect("empty_rows", "fill-value"),
        Expect("grad", "masked-softmax-gradient"),
        Expect("grad_finite", "masked-softmax-gradient"),
        Expect("nan_score_shows", "nan-repair-hides"),
    ), clues=(*MASK_CLUES, Clue("empty_rows_nan"), Clue("empty_rows_uniform")), diagnoses=(
        Diagnosis("fill-nan-row", wrong=("empty_rows", "empty_rows_nan")),
        Diagnosis("fill-value", wrong=("empty_rows", "empty_rows_uniform")),
        *mask_diagnoses("weights"),
    )),
    Check("attention_entropy", "attention_entropy", (
        Expect("entropy", "entropy-formula"),
        Expect("one_row", "entropy-formula"),
    ), clues=(Clue("finite"), Clue("like_log2")), diagnoses=(
        Diagnosis("entropy-log-base", wrong=("entropy", "like_log2")),
        Diagnosis("entropy-nan-at-zero", wrong=("entropy", "finite")),
    )),
    Check("saturation_stats", "saturation_stats", (
        Expect("keys", "saturation-keys"),
        Expect("max_weight", "saturation-values"),
        Expect("entropy", "saturation-values"),
        Expect("jacobian_norm", "jacobian-norm"),
    ), clues=(Clue("max_like_global"), Clue("jacobian_like_spectral")), diagnoses=(
        Diagnosis("max-global", wrong=("max_weight", "max_like_global")),
        Diagnosis("jacobian-norm", wrong=("jacobian_norm", "jacobian_like_spectral")),
    )),
    Check("dependency_matrix", "dependency_matrix", (
        Expect("causal", "dependency-values"),
        Expect("upper_exactly_zero", "dependency-values"),
        Expect("dense", "dependency-values"),
        Expect("x_unchanged", "modifies-input"),
        Expect("leaf_unchanged", "modifies-input"),
    ), clues=(Clue("like_transposed"), Clue("like_sum_gradient")), diagnoses=(
        Diagnosis("dependency-transposed", wrong=("causal", "like_transposed")),
        Diagnosis("dependency-sum-gradient", wrong=("causal", "like_sum_gradient")),
    )),
    Check("causal_mask", "causal_mask", (
        Expect("blocked_1", "causal-mask-values"),
        Expect("blocked_4", "causal-mask-values"),
        Expect("blocked_7", "causal-mask-values"),
        Expect("attention_output", "causal-mask-values"),
        Expect("device", "mask-device"),
    ), clues=(Clue("dtype"), Clue("may_attend_convention"), Clue("diagonal_blocked"), Clue("float_zero_one")),
        diagnoses=(
        Diagnosis("mask-convention-may-attend", wrong=("blocked_4", "may_attend_convention")),
        Diagnosis("mask-diagonal-blocked", wrong=("blocked_4", "diagonal_blocked")),
        Diagnosis("mask-float-zero-one", wrong=("blocked_4", "float_zero_one")),
    )),
    Check("make_examples", "make_examples", (
        Expect("x", "examples-windows"),
        Expect("y", "examples-windows"),
        Expect("last_window", "examples-windows"),
        Expect("dtypes", "examples-dtype"),
    ), clues=(Clue("targets_like_inputs"), Clue("targets_shifted_by_2")), diagnoses=(
        Diagnosis("targets-not-shifted", wrong=("y", "targets_like_inputs")),
        Diagnosis("targets-shifted-by-2", wrong=("y", "targets_shifted_by_2")),
    )),
    Check("decoder_block", "DecoderBlock", (
        Expect("kinds", "block-attribute-names"),
        Expect("parameters", "block-attribute-names"),
        Expect("batch_first", "block-batch-first"),
        Expect("masked_output", "block-formula"),
        Expect("float_mask_output", "block-formula"),
        Expect("unmasked_output", "block-formula"),
        Expect("train_output", "block-dropout"),
    ), clues=(Clue("like_post_norm"), Clue("mask_changes_output"), Clue("eval_deterministic")), diagnoses=(
        Diagnosis("block-post-norm", wrong=("masked_output", "like_post_norm")),
        Diagnosis("block-mask-not-passed", wrong=("masked_output", "mask_changes_output")),
        Diagnosis("block-batch-first", wrong=("masked_output", "batch_first")),
        Diagnosis("block-dropout", wrong=("masked_output", "eval_deterministic")),
        Diagnosis("block-attribute-names", wrong=("masked_output", "parameters")),
    )),
    Check("tiny_gpt", "TinyGPT", (
        Expect("kinds", "gpt-attribute-names"),
        Expect("blocks_made", "gpt-blocks"),
        Expect("blocks_registered", "gpt-blocks"),
        Expect("head_tied", "gpt-head-not-tied"),
        Expect("head_bias", "gpt-head-bias"),
        Expect("logits", "gpt-forward"),
    ), clues=(Clue("block_input"), Clue("input_like_scaled"), Clue("like_no_final_norm"), Clue("masks_causal")),
        diagnoses=(
        Diagnosis("gpt-mask", wrong=("logits", "masks_causal")),
        Diagnosis("gpt-blocks", wrong=("logits", "blocks_made")),
        Diagnosis("gpt-blocks", wrong=("kinds", "blocks_registered")),
        Diagnosis("gpt-embeddings", wrong=("logits", "block_input")),
        Diagnosis("gpt-embedding-scale", wrong=("logits", "block_input", "input_like_scaled")),
        Diagnosis("gpt-no-final-norm", wrong=("logits", "like_no_final_norm"), right=("block_input",)),
        Diagnosis("gpt-head-not-tied", wrong=("logits", "head_tied")),
    )),
    Check("tiny_gpt_causal", "TinyGPT.forward", (
        Expect("masks_given", "gpt-mask"),
        Expect("future_independent", "gpt-mask"),
        Expect("prefix_consistent", "gpt-mask"),
        Expect("too_long", "gpt-too-long"),
    )),
    Check("lm_loss", "lm_loss", (
        Expect("loss", "loss-values"),
        Expect("grad", "loss-no-gradient"),
        Expect("shape", "loss-values"),
    ), clues=(Clue("like_sum"), Clue("like_softmax_first")), diagnoses=(
        Diagnosis("loss-sum", wrong=("loss", "like_sum")),
        Diagnosis("loss-softmax-first", wrong=("loss", "like_softmax_first")),
        Diagnosis("loss-no-gradient", wrong=("grad",), right=("loss",)),
    )),
    Check("train_lm", "train_lm", (
        Expect("history_keys", "train-loop"),
        Expect("step", "history-steps"),
        Expect("train_loss", "train-loop"),
        Expect("val_loss", "validates-on-train"),
        Expect("final_parameters", "train-loop"),
        Expect("seed_5_parameters", "seed-ignored"),
    ), clues=(Clue("like_adam"), Clue("like_no_zero_grad"), Clue("like_eval_mode"), Clue("val_like_train")),
        diagnoses=(
        Diagnosis("adam-not-adamw", wrong=("final_parameters", "like_adam")),
        Diagnosis("no-zero-grad", wrong=("final_parameters", "like_no_zero_grad")),
        Diagnosis("no-train-mode", wrong=("final_parameters", "like_eval_mode")),
        Diagnosis("validates-on-train", wrong=("val_loss", "val_like_train")),
        Diagnosis("seed-ignored", wrong=("seed_5_parameters",), right=("final_parameters",)),
    )),
    Check("next_token_probs", "next_token_probs", (
        Expect("plain", "probs-values"),
        Expect("cold", "temperature-multiplied"),
        Expect("hot_top_3", "top-k-values"),
        Expect("top_20", "top-k-too-large"),
        Expect("one_row", "probs-values"),
    ), clues=(Clue("top_3_sums"), Clue("like_multiplied"), Clue("like_unnormalised")), diagnoses=(
        Diagnosis("temperature-multiplied", wrong=("cold", "like_multiplied")),
        Diagnosis("top-k-not-renormalised", wrong=("hot_top_3", "top_3_sums")),
        Diagnosis("top-k-not-renormalised", wrong=("hot_top_3", "like_unnormalised")),
    )),
    Check("generate_greedy", "generate", (
        Expect("greedy", "generate-greedy"),
        Expect("long_prompt", "generate-no-crop"),
        Expect("grad_off", "generate-grad"),
    ), clues=(Clue("like_position_0"), Clue("uncropped"), Clue("new_only")), diagnoses=(
        Diagnosis("generate-no-crop", wrong=("greedy", "uncropped")),
        Diagnosis("generate-no-crop", wrong=("long_prompt", "uncropped")),
        Diagnosis("generate-position-0", wrong=("greedy", "like_position_0")),
        Diagnosis("generate-new-only", wrong=("greedy", "new_only")),
    )),
    Check("generate_sampling", "generate", (
        Expect("cool_top_3_shape", "generate-new-only"),
        Expect("cool_top_3_prompt_kept", "generate-new-only"),
        Expect("cool_top_3_close", "sampling-distribution"),
        Expect("cool_top_3_outside_top_k", "sampling-distribution"),
        Expect("hot_close", "sampling-distribution"),
        Expect("cool_top_3_repeatable", "sampling-generator"),
        Expect("hot_repeatable", "sampling-generator"),
    ), clues=(Clue("cool_top_3_one_id"), Clue("hot_one_id"), Clue("hot_like_position_0"), Clue("uncropped")),
        diagnoses=(
        Diagnosis("sampling-argmax", wrong=("hot_close", "hot_one_id")),
        Diagnosis("generate-position-0", wrong=("hot_close", "hot_like_position_0")),
        Diagnosis("generate-no-crop", wrong=("cool_top_3_shape", "uncropped")),
    )),
)
