"""Checks of the Pretrained Attention assignment, and its catalogue of mistakes.

One `Check` per hidden test cell of the notebook (same id). Each expectation
names a probe output (see probes.py beside this file) and the mistake that
most often breaks it; clues are outputs worth nothing that tell mistakes
apart; a diagnosis names the mistake behind a pattern of wrong and right
outputs (course.verdicts.diagnose).

An expectation without `observed` is targeted: only its mistake breaks it (a flag such as "the input came back
changed"), and its failure alone names it. The others are broad: many mistakes change them, so their failure names
a mistake only with a diagnosis: a clue that simulates the mistake (the probe's trusted re-computation with that
mistake, `like_*`) or a flag that catches the mistake in the act. A broad output wrong while no clue holds names
nothing: ruling out the mistakes the grader can simulate does not single out one it cannot (an unseen bug would be
named as the piece's general recipe), so the verdict says what was observed and lists the candidate causes.
"""

from course.verdicts import Check, Clue, Diagnosis, Expect


MISTAKES = {
    # cosine_similarity_matrix
    "cosine-values": "Divide each row by its own norm (over the features, the last dimension), then take all the dot "
                     "products at once: unit @ unit.T, an (n, n) matrix with 1 on the diagonal.",
    "cosine-gram": "X @ X.T is the Gram matrix: its entries grow with the rows' lengths. Divide each row by its norm "
                   "first.",
    "cosine-distance": "Return the similarity itself, cos = u.v / (|u| |v|), not a distance such as 1 - cos.",
    "cosine-wrong-dim": "Normalise each ROW over its features, X.norm(dim=-1, keepdim=True); dim=0 normalises each "
                        "feature over the rows.",
    "cosine-dtype": "Keep the input's dtype: float64 rows give float64 similarities.",
    "cosine-input-modified": "Do not change X in place (X /= ...): divide into a new tensor, unit = X / norm, so the "
                             "caller's table is left as it was.",
    # input_embeddings
    "embeddings-state": "Keep nothing between calls (no cache of position vectors by length): another model, or the "
                        "same one after its weights change, has other embeddings.",
    "embeddings-values": "LayerNorm(word_embeddings(ids) + position_embeddings(0..T-1) + token_type_embeddings(types)) "
                         "with the parts of model.embeddings; token_type_ids None means all zeros.",
    "embeddings-no-token-types": "Add the token-type embeddings too (segment 0 for the first sentence, 1 for the "
                                 "second; zeros when token_type_ids is None).",
    "embeddings-positions": "Positions start at 0: position_embeddings(torch.arange(T)), not 1..T.",
    "embeddings-no-layer-norm": "Normalise the sum with the model's LayerNorm, model.embeddings.LayerNorm.",
    "embeddings-eps": "Use the model's own LayerNorm module (or its eps, model.embeddings.LayerNorm.eps): neither "
                      "F.layer_norm's default eps of 1e-5 nor MiniLM's 1e-12 typed in is the eps of every model.",
    "embeddings-sqrt-scale": "Add the three embeddings as they are: BERT does not multiply the word embeddings by "
                             "sqrt(hidden) as assignment 1's transformer did.",
    "embeddings-wrong-layer-norm": "Normalise with the embeddings' own LayerNorm, model.embeddings.LayerNorm: the "
                                   "encoder layers' LayerNorms have other learned scales and shifts.",
    "embeddings-fresh-layer-norm": "A new LayerNorm has none of the learned scale and shift: call the model's own "
                                   "model.embeddings.LayerNorm.",
    "embeddings-module-called": "Build the sum from the parts (word_embeddings, position_embeddings, "
                                "token_type_embeddings, LayerNorm) without calling model.embeddings(...) or the "
                                "whole model.",
    "embeddings-dropout": "Leave dropout out: the embeddings asked for are LayerNorm(sum) without dropout, and in "
                          "training mode model.embeddings.dropout zeroes random features at every call.",
    "argument-ignored": "Use every argument you are given (num_heads, k, residual): a value typed in from MiniLM or "
                        "the notebook's demos (12 heads, the top 3, the residual always on) is wrong for the grader's "
                        "inputs.",
    "notebook-model": "Use the model you are given, not the notebook's global `model`: the grader passes models of "
                      "its own, of other sizes.",
    # get_attention_maps
    "maps-values": "Tokenise the text with return_tensors='pt', run the model in eval mode under torch.no_grad() with "
                   "output_attentions=True, stack the layers in order and drop the batch dimension: (L, H, T, T).",
    "maps-no-eval": "Call model.eval() first: in training mode dropout changes the weights at every call.",
    "maps-last-layer": "Return every layer, torch.stack(outputs.attentions), not the last one only.",
    "maps-batch-kept": "Drop the batch dimension of 1: torch.stack(outputs.attentions)[:, 0] is (L, H, T, T).",
    "maps-gradients": "Run the model under torch.no_grad(): the maps must not carry gradients.",
    "tokens-split": "The tokens are the tokenizer's, not text.split(): "
                    "tokenizer.convert_ids_to_tokens(encoded['input_ids'][0]).",
    "maps-state": "A second model got the first model's maps: keep nothing between calls (no cache by text); run "
                  "the model you are given every time.",
    "tokens-no-specials": "Keep [CLS] and [SEP]: the maps have a row and a column for each of them.",
    "model-left-in-training": "Do not switch the model back to training mode after reading its maps: model.train() "
                              "at the end leaves dropout on for everything that uses the model next (a model handed "
                              "over in eval mode must stay in eval mode).",
    # attention_entropy
    "entropy-formula": "H = -sum_j p_j ln p_j over the last dimension (the keys): (..., T_q, T_k) -> (..., T_q).",
    "entropy-log-base": "Entropy here is in nats: use the natural log (torch.special.xlogy), not log2.",
    "entropy-input-modified": "Do not change attn in place (attn[attn == 0] = 1): the caller's maps must be left as "
                              "they were; use torch.special.xlogy(attn, attn), which needs no such trick.",
    "entropy-nan-at-zero": "0 ln 0 must count as 0: torch.log(0) is -inf and 0 * -inf is NaN. Use "
                           "torch.special.xlogy(p, p).",
    # head_pattern_scores
    "pattern-values": "Each score is a mean over queries: previous = diagonal(offset=-1), self = diagonal(0), next = "
                      "diagonal(+1) (each averaged over its own length), cls = column 0, sep = the last column, "
                      "future = the sum strictly above the diagonal, averaged over all queries.",
    "pattern-keys": "Return a dict with exactly the keys previous, self, next, cls, sep and future.",
    "pattern-previous-next-swapped": "Previous and next are swapped: the previous token of query t is key t-1, "
                                     "below the diagonal, torch.diagonal(attn, offset=-1, dim1=-2, dim2=-1).",
    "pattern-future-diagonal": "Later tokens are strictly after the query: torch.triu(attn, diagonal=1), without the "
                               "diagonal (that is the query itself).",
    "pattern-cls-row": "Attention TO [CLS] is column 0 of every row, attn[..., :, 0]; attn[..., 0, :] is what [CLS] "
                       "itself attends to (and always sums to 1).",
    "pattern-previous-count": "Average the previous- and next-token weights over the T-1 queries that have one (the "
                              "diagonals at offsets -1 and +1 have T-1 entries), not over all T.",
    # top_heads
    "top-heads-values": "Flatten the (L, H) scores, torch.topk(flat, k), and turn each flat index i into "
                        "(i // H, i % H), highest score first.",
    "top-heads-ascending": "Highest first: torch.topk sorts in descending order; argsort sorts ascending.",
    "top-heads-unravel": "Unravel with the number of HEADS, the size of the last dimension: (i // H, i % H).",
    "top-heads-types": "Return a list of (layer, head) tuples of Python ints: int(i) // H, int(i) % H.",
    "top-heads-input-modified": "Do not overwrite the scores you are given (setting the best to -inf in place): take "
                                "torch.topk of the flattened scores, which leaves the caller's tensor as it was.",
    # capture_qkv
    "capture-values": "Hook query, key and value of model.encoder.layer[layer].attention.self and that module itself "
                      "(element 0 of its output is the context), run model(**encoded) once in eval mode under "
                      "torch.no_grad() with every field of encoded (token_type_ids too), and return the four "
                      "tensors.",
    "capture-layer": "Layers count from 0: capture model.encoder.layer[layer], not the one before or after.",
    "capture-context-after-output": "The context is the output of attention.self, before the output projection and "
                                    "its LayerNorm: hook model.encoder.layer[layer].attention.self, not .attention.",
    "capture-token-types": "Run the model on every field of encoded, model(**encoded): without token_type_ids the "
                           "second sentence of a pair is read as the first.",
    "capture-no-eval": "Call model.eval() before running it: in training mode dropout changes the hidden states.",
    "capture-state": "Create a new dict at every call, not a mutable default argument: with `captured={}` every "
                     "call returns the same dict, and a later call overwrites what an earlier one returned.",
    "capture-gradients": "Run the model under torch.no_grad() and detach what the hooks keep: the captured tensors "
                         "must not carry gradients (or hold on to the graph).",
    "hooks-late-binding": "A lambda defined in a loop sees the loop variable's LAST value when it runs: bind the "
                          "name when the hook is made (a factory such as keep(name), or a default argument "
                          "name=name), so each hook stores under its own key.",
    "hooks-left": "Remove every hook you register (handle.remove()), in a finally block so that it happens even "
                  "when the model raises.",
    "hooks-left-on-error": "When the model raises, your hooks stay: remove them in a `finally:` block "
                           "(try: model(**encoded) finally: for h in handles: h.remove()).",
    # recompute_attention
    "recompute-values": "Split into heads, (B, T, D) -> (B, T, H, D/H) -> (B, H, T, D/H); scores = q @ k^T / "
                        "sqrt(D/H); fill the padding keys with the dtype's minimum; softmax over keys; merge the heads "
                        "of weights @ v back to (B, T, D).",
    "recompute-scale": "Scale by the square root of the HEAD size, sqrt(D / num_heads), not of the hidden size D.",
    "recompute-heads-no-transpose": "Split the heads with .view(B, T, H, d).transpose(1, 2): reshaping (B, T, D) "
                                    "straight to (B, H, T, d) mixes tokens into heads.",
    "recompute-mask-polarity": "attention_mask is 1 for real tokens and 0 for padding: block the keys where it is 0.",
    "recompute-mask-queries": "Mask the padding KEYS only (the last dimension of the scores): padding queries are "
                              "computed like the others.",
    "recompute-mask-missing": "Apply attention_mask to the SCORES before the softmax (padding keys get the dtype's "
                              "minimum), so that padding keys get weight 0 and each row still sums to 1.",
    "recompute-bool-mask": "attention_mask may be bools (True = real token) as well as 0/1: compare it, "
                           "attention_mask == 0, instead of doing arithmetic with it.",
    "recompute-mask-inf": "Fill the padding scores with torch.finfo(scores.dtype).min, not -inf: a sequence whose "
                          "keys are all padding gets NaN weights with -inf, and uniform ones (as the model gives) "
                          "with min.",
    "softmax-overflow": "Use torch.softmax (or subtract each row's max before exp): exp of large scores overflows to "
                        "inf and inf / inf is NaN.",
    # attention_rollout
    "rollout-values": "Average the heads of each layer; with residual, 0.5 A + 0.5 I and each row divided by its sum; "
                      "then multiply with the last layer on the left: R = A_{L-1} @ ... @ A_1 @ A_0.",
    "rollout-order": "The last layer goes on the LEFT: rollout = layer @ rollout for each later layer.",
    "rollout-no-identity": "With residual=True, mix in the identity: 0.5 * A + 0.5 * torch.eye(T), then renormalise "
                           "the rows.",
    "rollout-max-heads": "Average the heads (attn.mean(dim=1)); the max over heads is another method.",
    "rollout-not-renormalised": "After 0.5 A + 0.5 I, divide each row by its sum: rows of a map may not sum to 1.",
    # word_level_attention
    "words-values": "Drop the special tokens; the attention to a word is the SUM over its key pieces and the "
                    "attention from a word is the MEAN over its query pieces; no renormalisation: (W, W).",
    "words-keys-averaged": "Sum over a word's key pieces (the attention it receives in total), do not average them.",
    "words-queries-summed": "Average over a word's query pieces, do not sum them: a word split in three must not "
                            "count three times.",
    "words-renormalised": "Do not renormalise the rows: a word's row sums to the weight it gives to real words "
                          "(what went to [CLS] and [SEP] is dropped).",
    "words-input-modified": "Do not change the caller's word_ids list (None replaced in place): build a new list or "
                            "tensor from it.",
    "words-return-type": "Return a (W, W) tensor in attn's dtype, not a Python list (.tolist()) or another dtype.",
}


_COSINE_CLUES = ("like_gram", "like_distance", "like_columns_normalised", "like_columns_compared", "like_squared_norm")
_EMBEDDINGS_CLUES = ("like_no_token_types", "like_token_types_ignored", "like_positions_from_1",
                     "one_sequence_like_positions_all_0", "like_no_layer_norm", "like_default_eps", "like_minilm_eps",
                     "like_fresh_layer_norm", "like_other_layer_norm", "like_notebook_model",
                     "training_like_dropout", "like_words_normalised_first")
_MAPS_CLUES = ("like_training_mode", "like_last_layer", "like_batch_kept", "like_notebook_model",
               "second_like_first_model", "like_heads_averaged")
_PATTERN_CLUES = ("previous_like_next", "future_with_diagonal", "cls_like_row_0", "previous_over_all_queries",
                  "next_over_all_queries", "like_leading_dims_diagonal", "future_like_earlier",
                  "future_over_all_entries")
_PATTERN_OBSERVED = {
    "previous": "the previous-token score differs from the mean of each map's diagonal at offset -1 (key t-1 of "
                "query t)",
    "self": "the self score differs from the mean of each map's main diagonal",
    "next": "the next-token score differs from the mean of each map's diagonal at offset +1 (key t+1 of query t)",
    "cls": "the [CLS] score differs from the mean of each map's column 0 (the weight every query gives to [CLS])",
    "sep": "the [SEP] score differs from the mean of each map's last column",
    "future": "the future score differs from the weight each query gives to the keys strictly after it, averaged over "
              "the queries",
}
_CAPTURE_CLUES = ("like_training_mode", "like_other_layer", "context_like_block_output", "like_notebook_model",
                  "like_without_token_types", "value_like_query", "like_first_sequence", "like_inputs_kept")
_RECOMPUTE_CLUES = ("like_full_scale", "like_no_scale", "like_no_transpose", "like_mask_reversed",
                    "like_queries_masked", "like_mask_ignored", "like_mask_after_softmax", "like_heads_ignored",
                    "large_scores_finite", "all_padding_like_minus_inf",
                    "context_like_keys")
_ROLLOUT_CLUES = ("like_first_on_left", "like_no_identity", "like_max_over_heads", "cut_like_not_renormalised",
                  "like_columns_renormalised", "plain_like_residual", "like_layers_averaged",
                  "like_first_layer_twice")
_WORDS_CLUES = ("like_keys_averaged", "like_queries_summed", "like_renormalised", "like_last_word_dropped",
                "like_specials_in_word_0")

CHECKS = (
    Check("cosine_similarity", "cosine_similarity_matrix", (
        Expect("similarity", "cosine-values", observed="for rows of very different lengths (two of them parallel), "
               "the matrix differs from u.v / (|u| |v|) for each pair of rows"),
        Expect("tall", "cosine-values", observed="for a tall (12, 4) X, the (12, 12) matrix differs from the cosines "
               "of its rows"),
        Expect("wide", "cosine-values", observed="for a wide (3, 20) X, the (3, 3) matrix differs from the cosines of "
               "its rows"),
        Expect("dtype_changed", "cosine-dtype"),
        Expect("input_unchanged", "cosine-input-modified"),
    ), clues=tuple(Clue(key) for key in _COSINE_CLUES), diagnoses=(
        Diagnosis("cosine-gram", wrong=("similarity", "like_gram")),
        Diagnosis("cosine-distance", wrong=("similarity", "like_distance")),
        Diagnosis("cosine-wrong-dim", wrong=("similarity", "like_columns_normalised")),
        Diagnosis("cosine-values", wrong=("similarity", "like_columns_compared")),
        Diagnosis("cosine-values", wrong=("similarity", "like_squared_norm")),
    )),
    Check("input_embeddings", "input_embeddings", (
        Expect("with_types", "embeddings-values", observed="for a padded batch of sentence pairs with token_type_ids, "
               "the embeddings differ from LayerNorm(word + position + token-type embeddings) of the model given"),
        Expect("without_types", "embeddings-values", observed="with token_type_ids None, the embeddings differ from "
               "those with every token type 0"),
        Expect("one_sequence", "embeddings-values", observed="for a batch of one sequence, the embeddings differ from "
               "LayerNorm(word + position + token-type embeddings)"),
        Expect("second_model", "embeddings-values", observed="for a second model with other weights and the same "
               "inputs, the embeddings differ from that model's own"),
        Expect("embeddings_module_called", "embeddings-module-called"),
        Expect("training_mode", "embeddings-dropout", same_as="with_types"),
    ), clues=tuple(Clue(key) for key in _EMBEDDINGS_CLUES), diagnoses=(
        Diagnosis("embeddings-no-token-types", wrong=("with_types", "like_no_token_types")),
        Diagnosis("embeddings-no-token-types", wrong=("with_types", "like_token_types_ignored")),
        Diagnosis("embeddings-positions", wrong=("with_types", "like_positions_from_1")),
        Diagnosis("embeddings-positions", wrong=("one_sequence", "one_sequence_like_positions_all_0")),
        Diagnosis("embeddings-no-layer-norm", wrong=("with_types", "like_no_layer_norm")),
        Diagnosis("embeddings-eps", wrong=("with_types", "like_default_eps")),
        Diagnosis("embeddings-eps", wrong=("with_types", "like_minilm_eps")),
        Diagnosis("embeddings-fresh-layer-norm", wrong=("with_types", "like_fresh_layer_norm")),
        Diagnosis("notebook-model", wrong=("with_types", "like_notebook_model")),
        Diagnosis("embeddings-wrong-layer-norm", wrong=("with_types", "like_other_layer_norm")),
        Diagnosis("embeddings-values", wrong=("with_types", "like_words_normalised_first")),
        Diagnosis("embeddings-state", wrong=("second_model",),
                  right=("with_types", "without_types", "one_sequence", "training_mode")),
        Diagnosis("embeddings-dropout", wrong=("training_mode", "training_like_dropout"),
                  right=("embeddings_module_called",)),
    )),
    Check("attention_maps", "get_attention_maps", (
        Expect("attn", "maps-values", observed="for a model handed over in training mode, the maps differ from "
               "torch.stack(outputs.attentions)[:, 0] of that model in eval mode"),
        Expect("tokens", "maps-values", observed="the tokens differ from the tokenizer's tokens of the text, [CLS] and "
               "[SEP] included"),
        Expect("requires_grad", "maps-gradients"),
        Expect("second_model", "maps-values", observed="for a second model and the same text, the maps differ from "
               "that model's own"),
        Expect("left_in_training", "model-left-in-training"),
    ), clues=tuple(Clue(key) for key in _MAPS_CLUES + ("tokens_like_split", "tokens_without_specials")), diagnoses=(
        Diagnosis("maps-no-eval", wrong=("attn", "like_training_mode")),
        Diagnosis("maps-last-layer", wrong=("attn", "like_last_layer")),
        Diagnosis("maps-batch-kept", wrong=("attn", "like_batch_kept")),
        Diagnosis("maps-values", wrong=("attn", "like_heads_averaged")),
        Diagnosis("tokens-split", wrong=("tokens", "tokens_like_split")),
        Diagnosis("tokens-no-specials", wrong=("tokens", "tokens_without_specials")),
        Diagnosis("notebook-model", wrong=("attn", "like_notebook_model")),
        Diagnosis("maps-state", wrong=("second_model", "second_like_first_model")),
    )),
    Check("attention_entropy", "attention_entropy", (
        Expect("entropy", "entropy-formula", observed="for batched maps with zero weights (one-hot rows among them), "
               "the entropies differ from -sum p ln p over the keys"),
        Expect("one_map", "entropy-formula", observed="for one (T, T) map, the entropies differ from -sum p ln p over "
               "the keys"),
        Expect("input_unchanged", "entropy-input-modified"),
    ), clues=(Clue("finite"), Clue("like_log2"), Clue("like_no_minus"), Clue("like_mean_over_keys")), diagnoses=(
        Diagnosis("entropy-log-base", wrong=("entropy", "like_log2")),
        Diagnosis("entropy-formula", wrong=("entropy", "like_no_minus")),
        Diagnosis("entropy-formula", wrong=("entropy", "like_mean_over_keys")),
        Diagnosis("entropy-nan-at-zero", wrong=("entropy", "finite")),
    )),
    Check("head_pattern_scores", "head_pattern_scores", (
        Expect("keys", "pattern-keys"),
        *(Expect(key, "pattern-values", observed=f"for (L, H, T, T) maps, {seen}")
          for key, seen in _PATTERN_OBSERVED.items()),
        Expect("one_map", "pattern-values", observed="for one (T, T) map, the six scores differ from those of the same "
               "map inside a batch of maps"),
    ), clues=tuple(Clue(key) for key in _PATTERN_CLUES), diagnoses=(
        Diagnosis("pattern-previous-next-swapped", wrong=("previous", "previous_like_next")),
        Diagnosis("pattern-future-diagonal", wrong=("future", "future_with_diagonal")),
        Diagnosis("pattern-cls-row", wrong=("cls", "cls_like_row_0")),
        Diagnosis("pattern-previous-count", wrong=("previous", "previous_over_all_queries")),
        Diagnosis("pattern-previous-count", wrong=("next", "next_over_all_queries")),
        Diagnosis("pattern-values", wrong=("previous", "like_leading_dims_diagonal")),
        Diagnosis("pattern-values", wrong=("future", "future_like_earlier")),
        Diagnosis("pattern-values", wrong=("future", "future_over_all_entries")),
    )),
    Check("top_heads", "top_heads", (
        Expect("top_5", "top-heads-values", observed="for a (4, 6) grid of scores, the top 5 (layer, head) pairs "
               "differ from the 5 highest scores' positions, highest first"),
        Expect("top_3_of_3_by_7", "top-heads-values", observed="for a (3, 7) grid (more heads than layers), the top 3 "
               "(layer, head) pairs differ from the 3 highest scores' positions, highest first"),
        Expect("top_1", "top-heads-values", observed="for k = 1, the pair differs from the position of the highest "
               "score"),
        Expect("int_pairs", "top-heads-types"),
        Expect("input_unchanged", "top-heads-input-modified"),
    ), clues=(Clue("like_ascending"), Clue("like_unravelled_by_layers"), Clue("like_k_ignored"),
              Clue("like_head_and_layer_swapped"), Clue("like_sorted_by_index")), diagnoses=(
        Diagnosis("argument-ignored", wrong=("top_5", "like_k_ignored")),
        Diagnosis("top-heads-ascending", wrong=("top_3_of_3_by_7", "like_ascending")),
        Diagnosis("top-heads-unravel", wrong=("top_3_of_3_by_7", "like_unravelled_by_layers")),
        Diagnosis("top-heads-values", wrong=("top_3_of_3_by_7", "like_head_and_layer_swapped")),
        Diagnosis("top-heads-values", wrong=("top_5", "like_sorted_by_index")),
    )),
    Check("capture_qkv", "capture_qkv", (
        *(Expect(name, "capture-values", observed=f"for a model handed over in training mode, the captured {name} of "
                 f"layer 1 differs from the output of {where} in eval mode")
          for name, where in (("query", "attention.self.query"), ("key", "attention.self.key"),
                              ("value", "attention.self.value"), ("context", "element 0 of attention.self's output"))),
        Expect("layer_2_context", "capture-values", observed="the context captured from layer 2 differs from element 0 "
               "of that layer's attention.self output in eval mode"),
        Expect("requires_grad", "capture-gradients"),
        Expect("first_result_kept", "capture-state"),
    ), clues=tuple(Clue(key) for key in _CAPTURE_CLUES), diagnoses=(
        Diagnosis("capture-token-types", wrong=("query", "like_without_token_types")),
        Diagnosis("capture-no-eval", wrong=("key", "like_training_mode")),
        Diagnosis("capture-layer", wrong=("query", "like_other_layer")),
        Diagnosis("capture-context-after-output", wrong=("context", "context_like_block_output"), right=("query",)),
        Diagnosis("notebook-model", wrong=("query", "like_notebook_model")),
        Diagnosis("capture-values", wrong=("value", "value_like_query"), right=("query", "key")),
        Diagnosis("capture-values", wrong=("query", "like_first_sequence")),
        Diagnosis("capture-values", wrong=("query", "like_inputs_kept")),
    )),
    Check("capture_qkv_hooks", "capture_qkv", (
        Expect("works", "capture-values", observed="on a model handed over in eval mode, the dict returned does not "
               "have exactly the keys query, key, value and context"),
        Expect("hooks_left", "hooks-left"),
        Expect("hooks_left_after_error", "hooks-left-on-error", observed="after a call whose model raised (an input "
               "longer than the model's positions), hooks of yours are left on the model"),
    ), diagnoses=(
        Diagnosis("hooks-left-on-error", wrong=("hooks_left_after_error",), right=("hooks_left",)),
    )),
    Check("recompute_attention", "recompute_attention", (
        Expect("weights", "recompute-values", observed="for (2, 5, 12) tensors, 3 heads and a 0/1 padding mask, the "
               "weights differ from softmax(q k^T / sqrt(d)) over the keys with the padding keys blocked"),
        Expect("context", "recompute-values", observed="for (2, 5, 12) tensors, 3 heads and a padding mask, the "
               "context differs from weights @ values with the heads merged back to (B, T, D)"),
        Expect("bool_mask", "recompute-bool-mask", same_as="weights"),
        Expect("no_mask", "recompute-values", observed="without a mask, the weights differ from softmax(q k^T / "
               "sqrt(d)) over the keys"),
        Expect("six_heads", "recompute-values", observed="with 6 heads, the context differs from the multi-head "
               "attention of the same tensors"),
        Expect("matches_model", "recompute-values", observed="on tensors captured from the grader's model and its "
               "padded batch, the weights differ from the model's own attentions"),
        Expect("large_scores", "recompute-values", observed="with queries and keys ten times larger (scores in the "
               "hundreds), the weights differ from the softmax or are not finite"),
        Expect("all_padding", "recompute-values", observed="for a sequence whose attention_mask is all 0, the weights "
               "differ from the uniform weights the model gives, or are NaN"),
    ), clues=tuple(Clue(key) for key in _RECOMPUTE_CLUES), diagnoses=(
        Diagnosis("argument-ignored", wrong=("six_heads", "like_heads_ignored")),
        Diagnosis("recompute-scale", wrong=("weights", "like_full_scale")),
        Diagnosis("recompute-scale", wrong=("weights", "like_no_scale")),
        Diagnosis("recompute-heads-no-transpose", wrong=("weights", "like_no_transpose")),
        Diagnosis("recompute-mask-polarity", wrong=("weights", "like_mask_reversed")),
        Diagnosis("recompute-mask-queries", wrong=("weights", "like_queries_masked")),
        Diagnosis("recompute-mask-missing", wrong=("weights", "like_mask_ignored")),
        Diagnosis("recompute-mask-missing", wrong=("weights", "like_mask_after_softmax")),
        Diagnosis("recompute-mask-inf", wrong=("all_padding", "all_padding_like_minus_inf"),
                  right=("weights", "large_scores_finite")),
        Diagnosis("softmax-overflow", wrong=("large_scores", "large_scores_finite"), right=("weights",)),
        Diagnosis("recompute-values", wrong=("context", "context_like_keys"), right=("weights",)),
    )),
    Check("attention_rollout", "attention_rollout", (
        Expect("residual", "rollout-values", observed="with residual, the rollout differs from the product of the "
               "layers' 0.5 A + 0.5 I (heads averaged, rows renormalised), last layer on the left"),
        Expect("plain", "rollout-values", observed="with residual=False, the rollout differs from the product of the "
               "layers (heads averaged), last layer on the left"),
        Expect("cut_rows", "rollout-not-renormalised", observed="for maps whose rows sum to less than 1, the rollout "
               "differs from the product of the renormalised 0.5 A + 0.5 I"),
        Expect("one_layer", "rollout-values", observed="for one layer, the rollout differs from its 0.5 A + 0.5 I "
               "(heads averaged, rows renormalised)"),
    ), clues=tuple(Clue(key) for key in _ROLLOUT_CLUES), diagnoses=(
        Diagnosis("argument-ignored", wrong=("plain", "plain_like_residual"), right=("residual",)),
        Diagnosis("rollout-order", wrong=("residual", "like_first_on_left")),
        Diagnosis("rollout-no-identity", wrong=("residual", "like_no_identity")),
        Diagnosis("rollout-max-heads", wrong=("residual", "like_max_over_heads")),
        Diagnosis("rollout-not-renormalised", wrong=("cut_rows", "cut_like_not_renormalised")),
        Diagnosis("rollout-not-renormalised", wrong=("residual", "like_columns_renormalised")),
        Diagnosis("rollout-values", wrong=("residual", "like_layers_averaged")),
        Diagnosis("rollout-values", wrong=("residual", "like_first_layer_twice")),
    )),
    Check("word_level_attention", "word_level_attention", (
        Expect("words", "words-values", observed="for words of 2, 1, 3 and 1 pieces, the (W, W) attention differs from "
               "the sum over each word's key pieces averaged over its query pieces"),
        Expect("single_pieces", "words-values", observed="for words of one piece each, the (W, W) attention differs "
               "from the token attention without [CLS] and [SEP]"),
        Expect("wrong_return_type", "words-return-type"),
        Expect("input_unchanged", "words-input-modified"),
    ), clues=tuple(Clue(key) for key in _WORDS_CLUES), diagnoses=(
        Diagnosis("words-keys-averaged", wrong=("words", "like_keys_averaged")),
        Diagnosis("words-queries-summed", wrong=("words", "like_queries_summed")),
        Diagnosis("words-renormalised", wrong=("words", "like_renormalised")),
        Diagnosis("words-values", wrong=("words", "like_last_word_dropped")),
        Diagnosis("words-values", wrong=("words", "like_specials_in_word_0")),
    )),
)
