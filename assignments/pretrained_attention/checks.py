"""Checks of the Pretrained Attention assignment, and its catalogue of mistakes.

One `Check` per hidden test cell of the notebook (same id). Each expectation
names a probe output (see probes.py beside this file) and the mistake that
most often breaks it; clues are outputs worth nothing that tell mistakes
apart; a diagnosis names the mistake behind a pattern of wrong and right
outputs (course.checks.diagnose).
"""

from course.checks import Check, Clue, Diagnosis, Expect

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
    # input_embeddings
    "embeddings-values": "LayerNorm(word_embeddings(ids) + position_embeddings(0..T-1) + token_type_embeddings(types)) "
                         "with the parts of model.embeddings; token_type_ids None means all zeros.",
    "embeddings-no-token-types": "Add the token-type embeddings too (segment 0 for the first sentence, 1 for the "
                                 "second; zeros when token_type_ids is None).",
    "embeddings-positions": "Positions start at 0: position_embeddings(torch.arange(T)), not 1..T.",
    "embeddings-no-layer-norm": "Normalise the sum with the model's LayerNorm, model.embeddings.LayerNorm.",
    "embeddings-eps": "Use the model's own LayerNorm module (or its eps, model.embeddings.LayerNorm.eps): neither "
                      "F.layer_norm's default eps of 1e-5 nor MiniLM's 1e-12 typed in is the eps of every model.",
    "embeddings-fresh-layer-norm": "A new LayerNorm has none of the learned scale and shift: call the model's own "
                                   "model.embeddings.LayerNorm.",
    "embeddings-module-called": "Build the sum from the parts (word_embeddings, position_embeddings, "
                                "token_type_embeddings, LayerNorm) without calling model.embeddings(...) or the "
                                "whole model.",
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
    # attention_entropy
    "entropy-formula": "H = -sum_j p_j ln p_j over the last dimension (the keys): (..., T_q, T_k) -> (..., T_q).",
    "entropy-log-base": "Entropy here is in nats: use the natural log (torch.special.xlogy), not log2.",
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
}


CHECKS = (
    Check("cosine_similarity", "cosine_similarity_matrix", (
        Expect("similarity", "cosine-values"),
        Expect("tall", "cosine-values"),
        Expect("wide", "cosine-values"),
        Expect("float64_dtype", "cosine-dtype"),
    ), clues=(Clue("like_gram"), Clue("like_distance"), Clue("like_columns_normalised")), diagnoses=(
        Diagnosis("cosine-gram", wrong=("similarity", "like_gram")),
        Diagnosis("cosine-distance", wrong=("similarity", "like_distance")),
        Diagnosis("cosine-wrong-dim", wrong=("similarity", "like_columns_normalised")),
    )),
    Check("input_embeddings", "input_embeddings", (
        Expect("with_types", "embeddings-values"),
        Expect("without_types", "embeddings-values"),
        Expect("embeddings_module_called", "embeddings-module-called"),
    ), clues=(Clue("like_no_token_types"), Clue("like_positions_from_1"), Clue("like_no_layer_norm"),
              Clue("like_default_eps"), Clue("like_minilm_eps"), Clue("like_fresh_layer_norm"),
              Clue("like_notebook_model")), diagnoses=(
        Diagnosis("embeddings-no-token-types", wrong=("with_types", "like_no_token_types")),
        Diagnosis("embeddings-positions", wrong=("with_types", "like_positions_from_1")),
        Diagnosis("embeddings-no-layer-norm", wrong=("with_types", "like_no_layer_norm")),
        Diagnosis("embeddings-eps", wrong=("with_types", "like_default_eps")),
        Diagnosis("embeddings-eps", wrong=("with_types", "like_minilm_eps")),
        Diagnosis("embeddings-fresh-layer-norm", wrong=("with_types", "like_fresh_layer_norm")),
        Diagnosis("notebook-model", wrong=("with_types", "like_notebook_model")),
    )),
    Check("attention_maps", "get_attention_maps", (
        Expect("attn", "maps-values"),
        Expect("tokens", "maps-values"),
        Expect("requires_grad", "maps-gradients"),
        Expect("second_model", "maps-values"),
    ), clues=(Clue("like_training_mode"), Clue("like_last_layer"), Clue("like_batch_kept"), Clue("tokens_like_split"),
              Clue("tokens_without_specials"), Clue("like_notebook_model")), diagnoses=(
        Diagnosis("maps-no-eval", wrong=("attn", "like_training_mode")),
        Diagnosis("maps-last-layer", wrong=("attn", "like_last_layer")),
        Diagnosis("maps-batch-kept", wrong=("attn", "like_batch_kept")),
        Diagnosis("tokens-split", wrong=("tokens", "tokens_like_split")),
        Diagnosis("tokens-no-specials", wrong=("tokens", "tokens_without_specials")),
        Diagnosis("notebook-model", wrong=("attn", "like_notebook_model")),
        Diagnosis("maps-state", wrong=("second_model",), right=("attn",)),
    )),
    Check("attention_entropy", "attention_entropy", (
        Expect("entropy", "entropy-formula"),
        Expect("one_map", "entropy-formula"),
    ), clues=(Clue("finite"), Clue("like_log2")), diagnoses=(
        Diagnosis("entropy-log-base", wrong=("entropy", "like_log2")),
        Diagnosis("entropy-nan-at-zero", wrong=("entropy", "finite")),
    )),
    Check("head_pattern_scores", "head_pattern_scores", (
        Expect("keys", "pattern-keys"),
        *(Expect(key, "pattern-values") for key in ("previous", "self", "next", "cls", "sep", "future")),
        Expect("one_map", "pattern-values"),
    ), clues=(Clue("previous_like_next"), Clue("future_with_diagonal"), Clue("cls_like_row_0"),
              Clue("previous_over_all_queries"), Clue("next_over_all_queries")), diagnoses=(
        Diagnosis("pattern-previous-next-swapped", wrong=("previous", "previous_like_next")),
        Diagnosis("pattern-future-diagonal", wrong=("future", "future_with_diagonal")),
        Diagnosis("pattern-cls-row", wrong=("cls", "cls_like_row_0")),
        Diagnosis("pattern-previous-count", wrong=("previous", "previous_over_all_queries")),
        Diagnosis("pattern-previous-count", wrong=("next", "next_over_all_queries")),
    )),
    Check("top_heads", "top_heads", (
        Expect("top_5", "top-heads-values"),
        Expect("top_3_of_3_by_7", "top-heads-values"),
        Expect("top_1", "top-heads-values"),
        Expect("int_pairs", "top-heads-types"),
    ), clues=(Clue("like_ascending"), Clue("like_unravelled_by_layers")), diagnoses=(
        Diagnosis("top-heads-ascending", wrong=("top_3_of_3_by_7", "like_ascending")),
        Diagnosis("top-heads-unravel", wrong=("top_3_of_3_by_7", "like_unravelled_by_layers")),
    )),
    Check("capture_qkv", "capture_qkv", (
        *(Expect(name, "capture-values") for name in ("query", "key", "value", "context")),
        Expect("layer_2_context", "capture-values"),
    ), clues=(Clue("like_training_mode"), Clue("like_other_layer"), Clue("context_like_block_output"),
              Clue("like_notebook_model"), Clue("like_without_token_types")), diagnoses=(
        Diagnosis("capture-token-types", wrong=("query", "like_without_token_types")),
        Diagnosis("capture-no-eval", wrong=("key", "like_training_mode")),
        Diagnosis("capture-layer", wrong=("query", "like_other_layer")),
        Diagnosis("capture-context-after-output", wrong=("context", "context_like_block_output"), right=("query",)),
        Diagnosis("notebook-model", wrong=("query", "like_notebook_model")),
    )),
    Check("capture_qkv_hooks", "capture_qkv", (
        Expect("works", "capture-values"),
        Expect("hooks_left", "hooks-left"),
        Expect("hooks_left_after_error", "hooks-left-on-error"),
    )),
    Check("recompute_attention", "recompute_attention", (
        Expect("weights", "recompute-values"),
        Expect("context", "recompute-values"),
        Expect("bool_mask", "recompute-values"),
        Expect("no_mask", "recompute-values"),
        Expect("six_heads", "recompute-values"),
        Expect("matches_model", "recompute-values"),
    ), clues=(Clue("like_full_scale"), Clue("like_no_transpose"), Clue("like_mask_reversed"),
              Clue("like_queries_masked")), diagnoses=(
        Diagnosis("recompute-scale", wrong=("weights", "like_full_scale")),
        Diagnosis("recompute-heads-no-transpose", wrong=("weights", "like_no_transpose")),
        Diagnosis("recompute-mask-polarity", wrong=("weights", "like_mask_reversed")),
        Diagnosis("recompute-mask-queries", wrong=("weights", "like_queries_masked")),
        Diagnosis("recompute-mask-missing", wrong=("weights",), right=("no_mask",)),
        Diagnosis("recompute-bool-mask", wrong=("bool_mask",), right=("weights",)),
    )),
    Check("attention_rollout", "attention_rollout", (
        Expect("residual", "rollout-values"),
        Expect("plain", "rollout-values"),
        Expect("cut_rows", "rollout-not-renormalised"),
        Expect("one_layer", "rollout-values"),
    ), clues=(Clue("like_first_on_left"), Clue("like_no_identity"), Clue("like_max_over_heads"),
              Clue("cut_like_not_renormalised")), diagnoses=(
        Diagnosis("rollout-order", wrong=("residual", "like_first_on_left")),
        Diagnosis("rollout-no-identity", wrong=("residual", "like_no_identity")),
        Diagnosis("rollout-max-heads", wrong=("residual", "like_max_over_heads")),
        Diagnosis("rollout-not-renormalised", wrong=("cut_rows", "cut_like_not_renormalised")),
    )),
    Check("word_level_attention", "word_level_attention", (
        Expect("words", "words-values"),
        Expect("single_pieces", "words-values"),
    ), clues=(Clue("like_keys_averaged"), Clue("like_queries_summed"), Clue("like_renormalised")), diagnoses=(
        Diagnosis("words-keys-averaged", wrong=("words", "like_keys_averaged")),
        Diagnosis("words-queries-summed", wrong=("words", "like_queries_summed")),
        Diagnosis("words-renormalised", wrong=("words", "like_renormalised")),
    )),
)
