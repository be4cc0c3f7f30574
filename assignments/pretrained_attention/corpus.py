"""The grader's corpus for Pretrained Attention: the partial sample's bugs, mutants (each with the mistake it must be
diagnosed as, from MISTAKES in checks.py) and correct alternatives (course.measuring.grader_accuracy).

Edits change the instructor solution's answer cells; each (old, new) pair must match the solution exactly.
"""

from course.samples import Edit

COSINE, EMBEDDINGS, MAPS, ENTROPY = ("answer-cosine-similarity", "answer-input-embeddings",
                                     "answer-get-attention-maps", "answer-attention-entropy")
PATTERNS, TOP, CAPTURE, RECOMPUTE = ("answer-head-pattern-scores", "answer-top-heads", "answer-capture-qkv",
                                     "answer-recompute-attention")
ROLLOUT, WORDS = "answer-attention-rollout", "answer-word-level-attention"

UNIT = "unit = X / X.norm(dim=-1, keepdim=True)"
SUMMED = ("    summed = (parts.word_embeddings(input_ids) + parts.position_embeddings(positions)\n"
          "              + parts.token_type_embeddings(token_type_ids))\n")
POSITIONS = "positions = torch.arange(input_ids.shape[1], device=input_ids.device)"
STACK = "attn = torch.stack(outputs.attentions)[:, 0].cpu()"
TOKENS = "return attn, tokenizer.convert_ids_to_tokens(encoded[\"input_ids\"][0].tolist())"
XLOGY = "return -torch.special.xlogy(attn, attn).sum(dim=-1)"
PREVIOUS_NEXT = '{"previous": diagonal(-1), "self": diagonal(0), "next": diagonal(1),'
UNRAVEL = "return [(int(i) // num_heads, int(i) % num_heads) for i in best]"
REMOVE = "        for handle in handles:\n            handle.remove()\n"
SCALE = "/ math.sqrt(head_dim)"
PADDING = "[:, None, None, :] == 0  # (B, 1, 1, T): keys"
HEADS = "return x.view(B, T, num_heads, head_dim).transpose(1, 2)"
MERGE = "context = (weights @ heads(value)).transpose(1, 2).reshape(B, T, D)"
MIX = "layers = 0.5 * layers + 0.5 * torch.eye(layers.shape[-1], dtype=layers.dtype, device=layers.device)\n"
RENORMALISE = "        layers = layers / layers.sum(dim=-1, keepdim=True)\n"
PRODUCT = "rollout = layer @ rollout"
WORDS_RETURN = "return pieces @ (attn @ pieces.T) / pieces.sum(dim=1, keepdim=True)"

SAMPLE_BUGS = (
    (Edit("hooks_never_removed", CAPTURE, (("    try:\n", "    if True:\n"), ("    finally:\n" + REMOVE, "")),
          "capture_qkv leaves its hooks on the model", "hooks-left"), "capture_qkv_hooks"),
    (Edit("scaled_by_hidden_size", RECOMPUTE, ((SCALE, "/ math.sqrt(D)"),), "scores scaled by sqrt(D), not sqrt(D/H)",
          "recompute-scale"), "recompute_attention"),
    (Edit("rollout_first_layer_on_the_left", ROLLOUT, ((PRODUCT, "rollout = rollout @ layer"),),
          "rollout multiplied in the wrong order", "rollout-order"), "attention_rollout"),
)

MUTANTS = tuple(edit for edit, _ in SAMPLE_BUGS) + (
    # cosine_similarity_matrix
    Edit("gram_matrix", COSINE, ((UNIT, "unit = X"),), "X @ X.T: the Gram matrix", "cosine-gram"),
    Edit("normalised_over_rows", COSINE, ((UNIT, "unit = X / X.norm(dim=0, keepdim=True)"),),
         "each feature normalised over the rows", "cosine-wrong-dim"),
    Edit("cosine_distance", COSINE, (("return unit @ unit.T", "return 1 - unit @ unit.T"),), "1 - cos: a distance",
         "cosine-distance"),
    Edit("cosine_in_float32", COSINE, (("return unit @ unit.T", "return (unit @ unit.T).float()"),),
         "always float32", "cosine-dtype"),
    # input_embeddings
    Edit("no_token_types", EMBEDDINGS, ((SUMMED, "    summed = parts.word_embeddings(input_ids) + "
                                                 "parts.position_embeddings(positions)\n"),),
         "no token-type term", "embeddings-no-token-types"),
    Edit("positions_from_1", EMBEDDINGS, ((POSITIONS, "positions = torch.arange(1, input_ids.shape[1] + 1, "
                                                      "device=input_ids.device)"),),
         "positions 1..T", "embeddings-positions"),
    Edit("no_layer_norm", EMBEDDINGS, (("return parts.LayerNorm(summed)", "return summed"),), "no LayerNorm",
         "embeddings-no-layer-norm"),
    Edit("default_eps", EMBEDDINGS, (("return parts.LayerNorm(summed)", "return F.layer_norm(summed, summed.shape[-1:], "
                                      "parts.LayerNorm.weight, parts.LayerNorm.bias)"),),
         "F.layer_norm's default eps", "embeddings-eps"),
    Edit("new_layer_norm", EMBEDDINGS, (("return parts.LayerNorm(summed)",
                                         "return nn.LayerNorm(summed.shape[-1], eps=parts.LayerNorm.eps)(summed)"),),
         "a new, untrained LayerNorm: a module outside the model", "embeddings-fresh-layer-norm"),
    Edit("embeddings_module_called", EMBEDDINGS, (("return parts.LayerNorm(summed)",
                                                   "return parts(input_ids=input_ids, token_type_ids=token_type_ids)"),),
         "model.embeddings(...) itself", "embeddings-module-called"),
    Edit("embeddings_of_the_global_model", EMBEDDINGS, (("    parts = model.embeddings\n",
                                                         "    parts = globals()[\"model\"].cpu().embeddings\n"),),
         "the notebook's global model instead of the argument", "notebook-model"),
    # get_attention_maps
    Edit("no_eval", MAPS, (("    model.eval()\n", ""),), "the model left in training mode: dropout", "maps-no-eval"),
    Edit("batch_dimension_kept", MAPS, ((STACK, "attn = torch.stack(outputs.attentions).cpu()"),),
         "(L, 1, H, T, T)", "maps-batch-kept"),
    Edit("last_layer_only", MAPS, ((STACK, "attn = outputs.attentions[-1][0].cpu()"),), "the last layer only",
         "maps-last-layer"),
    Edit("tokens_from_split", MAPS, ((TOKENS, "return attn, text.split()"),), "tokens from text.split()",
         "tokens-split"),
    Edit("special_tokens_dropped", MAPS, ((TOKENS, TOKENS + "[1:-1]"),), "tokens without [CLS] and [SEP]",
         "tokens-no-specials"),
    Edit("maps_with_gradients", MAPS, (("    with torch.no_grad():\n        outputs =", "    if True:\n        outputs ="),),
         "no torch.no_grad(): the maps carry gradients", "maps-gradients"),
    Edit("maps_of_the_global_model", MAPS, (("    model.eval()\n", "    model = globals()[\"model\"].cpu().eval()\n"),),
         "the notebook's global model instead of the argument", "notebook-model"),
    Edit("maps_cached_by_text", MAPS, (("def get_attention_maps(", "_CACHE = {}\n\n\ndef get_attention_maps("),
                                       ("    model.eval()\n", "    if text in _CACHE:\n        return _CACHE[text]\n    model.eval()\n"),
                                       (TOKENS, "_CACHE[text] = attn, tokenizer.convert_ids_to_tokens(encoded[\"input_ids\"][0].tolist())\n"
                                                "    return _CACHE[text]")),
         "results cached by text: a second model gets the first one's maps", "maps-state"),
    # attention_entropy
    Edit("entropy_in_bits", ENTROPY, ((XLOGY, "return -(torch.special.xlogy(attn, attn) / math.log(2)).sum(dim=-1)"),),
         "log base 2", "entropy-log-base"),
    Edit("entropy_nan_at_zero", ENTROPY, ((XLOGY, "return -(attn * torch.log(attn)).sum(dim=-1)"),),
         "p log p with log(0) = -inf: NaN", "entropy-nan-at-zero"),
    # head_pattern_scores
    Edit("previous_next_swapped", PATTERNS, ((PREVIOUS_NEXT, '{"previous": diagonal(1), "self": diagonal(0), '
                                                             '"next": diagonal(-1),'),),
         "previous and next swapped", "pattern-previous-next-swapped"),
    Edit("future_with_diagonal", PATTERNS, (("torch.triu(attn, diagonal=1)", "torch.triu(attn)"),),
         "future including the diagonal", "pattern-future-diagonal"),
    Edit("cls_from_row_0", PATTERNS, (('"cls": attn[..., :, 0].mean(dim=-1)', '"cls": attn[..., 0, :].mean(dim=-1)'),),
         "[CLS] read from row 0", "pattern-cls-row"),
    # top_heads
    Edit("unravelled_by_layers", TOP, (("num_heads = scores.shape[-1]", "num_heads = scores.shape[0]"),),
         "unravelled with the number of layers", "top-heads-unravel"),
    Edit("ascending_order", TOP, (("best = torch.topk(scores.flatten(), k).indices",
                                   "best = torch.argsort(scores.flatten())[:k]"),), "lowest first",
         "top-heads-ascending"),
    # capture_qkv
    Edit("hooks_removed_without_finally", CAPTURE, (("    try:\n        model.eval()\n        with torch.no_grad():\n"
                                                     "            model(**encoded)\n    finally:\n" + REMOVE,
                                                     "    model.eval()\n    with torch.no_grad():\n        model(**encoded)\n"
                                                     "    for handle in handles:\n        handle.remove()\n"),),
         "hooks removed, but not when the model raises", "hooks-left-on-error"),
    Edit("next_layer", CAPTURE, (("model.encoder.layer[layer].attention.self", "model.encoder.layer[layer + 1].attention.self"),),
         "layer off by one", "capture-layer"),
    Edit("context_after_output", CAPTURE, (('handles.append(attention.register_forward_hook(keep("context")))',
                                            'handles.append(model.encoder.layer[layer].attention.register_forward_hook('
                                            'keep("context")))'),),
         "context taken after the output projection and LayerNorm", "capture-context-after-output"),
    Edit("capture_without_eval", CAPTURE, (("        model.eval()\n", ""),), "the model left in training mode",
         "capture-no-eval"),
    Edit("capture_of_the_global_model", CAPTURE, (("    attention = model.encoder.layer[layer].attention.self\n",
                                                    "    model = globals()[\"model\"].cpu()\n"
                                                    "    attention = model.encoder.layer[layer].attention.self\n"),),
         "the notebook's global model instead of the argument", "notebook-model"),
    # recompute_attention
    Edit("heads_without_transpose", RECOMPUTE, ((HEADS, "return x.reshape(B, num_heads, T, head_dim)"),
                                                (MERGE, "context = (weights @ heads(value)).reshape(B, T, D)")),
         "heads split without a transpose", "recompute-heads-no-transpose"),
    Edit("mask_reversed", RECOMPUTE, ((PADDING, "[:, None, None, :] != 0"),), "the padding mask reversed",
         "recompute-mask-polarity"),
    Edit("queries_masked", RECOMPUTE, (("        scores = scores.masked_fill(padding, torch.finfo(scores.dtype).min)\n",
                                        "        scores = scores.masked_fill(padding, torch.finfo(scores.dtype).min)\n"
                                        "        scores = scores.masked_fill(padding.transpose(-1, -2), "
                                        "torch.finfo(scores.dtype).min)\n"),),
         "padding queries masked too", "recompute-mask-queries"),
    Edit("mask_ignored", RECOMPUTE, (("    if attention_mask is not None:\n", "    if False:\n"),), "the mask ignored",
         "recompute-mask-missing"),
    # attention_rollout
    Edit("no_identity", ROLLOUT, (("    if residual:\n", "    if False:\n"),), "the residual identity never added",
         "rollout-no-identity"),
    Edit("max_over_heads", ROLLOUT, (("layers = attn.mean(dim=1)", "layers = attn.max(dim=1).values"),),
         "the max over heads", "rollout-max-heads"),
    Edit("not_renormalised", ROLLOUT, ((RENORMALISE, ""),), "0.5 A + 0.5 I without renormalising the rows",
         "rollout-not-renormalised"),
    # word_level_attention
    Edit("keys_averaged", WORDS, ((WORDS_RETURN, "return pieces @ (attn @ (pieces / pieces.sum(dim=1, keepdim=True)).T)"
                                                 " / pieces.sum(dim=1, keepdim=True)"),),
         "the mean over a word's key pieces", "words-keys-averaged"),
    Edit("rows_renormalised", WORDS, ((WORDS_RETURN, "words = pieces @ (attn @ pieces.T) / pieces.sum(dim=1, keepdim=True)\n"
                                                     "    return words / words.sum(dim=-1, keepdim=True)"),),
         "rows renormalised to 1", "words-renormalised"),
    # held out: written after the catalogue and the mutants above were settled, as tests of the diagnoses
    Edit("norm_without_keepdim", COSINE, ((UNIT, "unit = X / X.norm(dim=-1)"),),
         "row norms without keepdim: they broadcast along the wrong axis", "cosine-values"),
    Edit("positions_buffer_from_1", EMBEDDINGS, ((POSITIONS, "positions = parts.position_ids[:, 1 : input_ids.shape[1] + 1]"),),
         "the position_ids buffer, one place late", "embeddings-positions"),
    Edit("tokens_by_tokenize", MAPS, ((TOKENS, "return attn, tokenizer.tokenize(text)"),),
         "tokenizer.tokenize: no special tokens", "tokens-no-specials"),
    Edit("entropy_over_queries", ENTROPY, (("sum(dim=-1)", "sum(dim=-2)"),), "entropy summed over the queries",
         "entropy-formula"),
    Edit("previous_over_all_queries", PATTERNS, (('"previous": diagonal(-1)',
                                                  '"previous": torch.diagonal(attn, offset=-1, dim1=-2, dim2=-1).sum(dim=-1) '
                                                  '/ attn.shape[-1]'),),
         "the previous-token weights averaged over all T queries", "pattern-previous-count"),
    Edit("top_heads_as_tensors", TOP, ((UNRAVEL, "return [(i // num_heads, i % num_heads) for i in best]"),),
         "pairs of tensors, not ints", "top-heads-types"),
    Edit("previous_layer", CAPTURE, (("model.encoder.layer[layer].attention.self", "model.encoder.layer[layer - 1].attention.self"),),
         "the layer before", "capture-layer"),
    Edit("softmax_over_queries", RECOMPUTE, (("weights = torch.softmax(scores, dim=-1)", "weights = torch.softmax(scores, dim=-2)"),),
         "softmax over the queries", "recompute-values"),
    Edit("real_tokens_blocked", RECOMPUTE, ((PADDING, "[:, None, None, :] == 1"),), "the real tokens blocked",
         "recompute-mask-polarity"),
    Edit("rollout_from_identity_first_on_left", ROLLOUT, (("    rollout = layers[0]\n    for layer in layers[1:]:\n        " + PRODUCT,
                                                           "    rollout = torch.eye(layers.shape[-1], dtype=layers.dtype)\n"
                                                           "    for layer in layers:\n        rollout = rollout @ layer"),),
         "the product started from the identity, each layer on the right", "rollout-order"),
    Edit("queries_summed", WORDS, ((WORDS_RETURN, "return pieces @ (attn @ pieces.T)"),), "a word's query pieces summed",
         "words-queries-summed"),
    # found by the review of this stop, written together with their diagnoses (not held out)
    Edit("additive_int_mask", RECOMPUTE, (("        scores = scores.masked_fill(padding, torch.finfo(scores.dtype).min)\n",
                                           "        scores = scores + (1.0 - attention_mask[:, None, None, :]) * torch.finfo(scores.dtype).min\n"),),
         "the mask added as 1 - mask: breaks on bools", "recompute-bool-mask"),
    Edit("minilm_eps_typed", EMBEDDINGS, (("return parts.LayerNorm(summed)",
                                           "return F.layer_norm(summed, summed.shape[-1:], parts.LayerNorm.weight, "
                                           "parts.LayerNorm.bias, eps=1e-12)"),),
         "MiniLM's eps typed in", "embeddings-eps"),
    Edit("capture_without_token_types", CAPTURE, (("            model(**encoded)\n",
                                                   "            model(input_ids=encoded[\"input_ids\"], attention_mask=encoded[\"attention_mask\"])\n"),),
         "token_type_ids left out", "capture-token-types"),
    Edit("next_over_all_queries", PATTERNS, (('"next": diagonal(1),', '"next": torch.diagonal(attn, offset=1, dim1=-2, dim2=-1).sum(dim=-1) / attn.shape[-1],'),),
         "the next-token weights averaged over all T queries", "pattern-previous-count"),
)

ALTERNATIVES = (
    Edit("cosine_with_normalize", COSINE, ((UNIT, "unit = F.normalize(X, dim=-1)"),), "F.normalize"),
    Edit("cosine_by_broadcasting", COSINE, (("    " + UNIT + "\n    return unit @ unit.T\n",
                                             "    return F.cosine_similarity(X[:, None, :], X[None, :, :], dim=-1)\n"),),
         "F.cosine_similarity over every pair"),
    Edit("embeddings_with_functional_norm", EMBEDDINGS, (("return parts.LayerNorm(summed)",
                                                          "norm = parts.LayerNorm\n    return F.layer_norm(summed, "
                                                          "norm.normalized_shape, norm.weight, norm.bias, norm.eps)"),),
         "F.layer_norm with the module's weights and eps"),
    Edit("embeddings_from_position_buffer", EMBEDDINGS, ((POSITIONS, "positions = parts.position_ids[:, : input_ids.shape[1]]"),),
         "the module's own position_ids buffer"),
    Edit("maps_in_inference_mode", MAPS, (("with torch.no_grad():", "with torch.inference_mode():"),),
         "torch.inference_mode"),
    Edit("maps_by_squeezing", MAPS, ((STACK, "attn = torch.stack([a.squeeze(0) for a in outputs.attentions]).cpu()"),),
         "each layer squeezed, then stacked"),
    Edit("entropy_with_clamp", ENTROPY, ((XLOGY, "return -(attn * attn.clamp_min(1e-30).log()).sum(dim=-1)"),),
         "log of the weights clamped away from 0"),
    Edit("patterns_by_masks", PATTERNS, ((PREVIOUS_NEXT, '{"previous": (attn * torch.ones(attn.shape[-1], attn.shape[-1]).tril(-1).triu(-1)).sum((-2, -1)) / (attn.shape[-1] - 1),\n'
                                                         '            "self": diagonal(0), "next": diagonal(1),'),),
         "the previous-token score as a masked sum"),
    Edit("top_heads_by_argsort", TOP, (("best = torch.topk(scores.flatten(), k).indices",
                                        "best = torch.argsort(scores.flatten(), descending=True)[:k]"),),
         "argsort, descending"),
    Edit("top_heads_with_divmod", TOP, ((UNRAVEL, "return [divmod(int(i), num_heads) for i in best]"),), "divmod"),
    Edit("context_from_the_projection_input", CAPTURE, (('handles.append(attention.register_forward_hook(keep("context")))',
                                                         'handles.append(model.encoder.layer[layer].attention.output.dense'
                                                         '.register_forward_pre_hook(lambda module, args: captured.__setitem__('
                                                         '"context", args[0].detach())))'),),
         "the context as the input of the output projection"),
    Edit("recompute_with_einsum", RECOMPUTE, (("scores = heads(query) @ heads(key).transpose(-2, -1) / math.sqrt(head_dim)",
                                               "scores = torch.einsum(\"bhqd,bhkd->bhqk\", heads(query), heads(key)) / head_dim ** 0.5"),),
         "einsum, and the scale as a power"),
    Edit("recompute_with_additive_mask", RECOMPUTE, (("        scores = scores.masked_fill(padding, torch.finfo(scores.dtype).min)\n",
                                                      "        scores = scores + padding * torch.finfo(scores.dtype).min\n"),),
         "the mask added, as transformers does"),
    Edit("rollout_by_reduce", ROLLOUT, (("    rollout = layers[0]\n    for layer in layers[1:]:\n        " + PRODUCT + "\n    return rollout\n",
                                         "    return torch.linalg.multi_dot(list(layers.flip(0))) if len(layers) > 1 else layers[0]\n"),),
         "one multi_dot of the layers in reverse order"),
    Edit("words_by_loops", WORDS, (("    ids = torch.tensor", "    ids_ = torch.tensor"),
                                   ("    words = int(ids.max()) + 1\n", "    words = int(ids_.max()) + 1\n"),
                                   ("    pieces = (ids[None, :] == torch.arange(words, device=attn.device)[:, None]).to(attn.dtype)  # (W, T)\n"
                                    "    " + WORDS_RETURN + "\n",
                                    "    result = torch.zeros(words, words, dtype=attn.dtype)\n"
                                    "    for q in range(words):\n"
                                    "        rows = attn[ids_ == q]\n"
                                    "        for k in range(words):\n"
                                    "            result[q, k] = rows[:, ids_ == k].sum(dim=-1).mean()\n"
                                    "    return result\n")),
         "loops over words"),
)

# Written after the grader's rules were frozen (git commit 3da4907), without reading them: held-out mutants and
# alternatives, kept apart from MUTANTS and ALTERNATIVES so that their figures stay visible.
#
# Their new mistake names (cosine-input-modified, embeddings-dropout, model-left-in-training, top-heads-input-modified,
# capture-state, capture-gradients, recompute-mask-inf, softmax-overflow, words-return-type) are now in the catalogue,
# MISTAKES in checks.py, with their advice.
FRESH_MUTANTS = (
    # cosine_similarity_matrix
    Edit("cosine_between_columns", COSINE, (("return unit @ unit.T", "return unit.T @ unit"),),
         "unit.T @ unit: (d, d), the features compared, not the rows", "cosine-values"),
    Edit("divided_by_squared_norm", COSINE, ((UNIT, "unit = X / (X * X).sum(dim=-1, keepdim=True)"),),
         "each row divided by its squared norm (no square root)", "cosine-values"),
    Edit("rows_normalised_in_place", COSINE, (("    " + UNIT + "\n    return unit @ unit.T\n",
                                               "    X /= X.norm(dim=-1, keepdim=True)\n    return X @ X.T\n"),),
         "X /= its norms: the caller's tensor is changed", "cosine-input-modified"),
    # input_embeddings
    Edit("token_types_always_zero", EMBEDDINGS, (("    if token_type_ids is None:\n        token_type_ids = torch.zeros_like(input_ids)\n",
                                                  "    token_type_ids = torch.zeros_like(input_ids)\n"),),
         "token_type_ids replaced by zeros even when given", "embeddings-no-token-types"),
    Edit("positions_over_the_batch", EMBEDDINGS, ((POSITIONS, "positions = torch.arange(input_ids.shape[0], device=input_ids.device)"),),
         "positions arange(B), the batch size, not arange(T)", "embeddings-positions"),
    Edit("words_normalised_before_the_sum", EMBEDDINGS, (("summed = (parts.word_embeddings(input_ids) +",
                                                          "summed = (parts.LayerNorm(parts.word_embeddings(input_ids)) +"),
                                                         ("return parts.LayerNorm(summed)", "return summed")),
         "LayerNorm on the word embeddings only, before positions and types are added", "embeddings-values"),
    Edit("embeddings_dropout_applied", EMBEDDINGS, (("return parts.LayerNorm(summed)", "return parts.dropout(parts.LayerNorm(summed))"),),
         "the embeddings' dropout applied after the LayerNorm", "embeddings-dropout"),
    # get_attention_maps
    Edit("maps_heads_averaged", MAPS, ((STACK, "attn = torch.stack(outputs.attentions)[:, 0].mean(dim=1).cpu()"),),
         "the heads averaged: (L, T, T)", "maps-values"),
    Edit("tokens_from_decoded_text", MAPS, ((TOKENS, "return attn, tokenizer.decode(encoded[\"input_ids\"][0]).split()"),),
         "the decoded text split on spaces: pieces merged, punctuation glued", "tokens-split"),
    Edit("model_put_back_in_training", MAPS, ((TOKENS, "model.train()\n    " + TOKENS),),
         "model.train() at the end: the model is left in training mode", "model-left-in-training"),
    # attention_entropy
    Edit("entropy_without_minus", ENTROPY, ((XLOGY, "return torch.special.xlogy(attn, attn).sum(dim=-1)"),),
         "sum p ln p without the minus sign", "entropy-formula"),
    Edit("entropy_mean_over_keys", ENTROPY, ((XLOGY, "return -torch.special.xlogy(attn, attn).mean(dim=-1)"),),
         "the mean of -p ln p over the keys, not the sum", "entropy-formula"),
    # head_pattern_scores
    Edit("diagonal_of_the_leading_dims", PATTERNS, (("torch.diagonal(attn, offset=offset, dim1=-2, dim2=-1)",
                                                     "torch.diagonal(attn, offset=offset)"),),
         "torch.diagonal's default dims 0 and 1: wrong for (L, H, T, T)", "pattern-values"),
    Edit("future_as_earlier_tokens", PATTERNS, (("torch.triu(attn, diagonal=1)", "torch.tril(attn, diagonal=-1)"),),
         "future read below the diagonal: the earlier tokens", "pattern-values"),
    Edit("future_mean_over_all_entries", PATTERNS, (("torch.triu(attn, diagonal=1).sum(dim=-1).mean(dim=-1)",
                                                     "torch.triu(attn, diagonal=1).mean(dim=(-2, -1))"),),
         "future averaged over all T*T entries instead of summed per query", "pattern-values"),
    # top_heads
    Edit("head_and_layer_swapped", TOP, ((UNRAVEL, "return [(int(i) % num_heads, int(i) // num_heads) for i in best]"),),
         "(head, layer) pairs instead of (layer, head)", "top-heads-values"),
    Edit("layer_by_true_division", TOP, ((UNRAVEL, "return [(int(i) / num_heads, int(i) % num_heads) for i in best]"),),
         "layer = i / H with /, a float, not i // H", "top-heads-types"),
    Edit("best_overwritten_in_scores", TOP, (("    best = torch.topk(scores.flatten(), k).indices\n",
                                              "    flat = scores.reshape(-1)\n    best = []\n    for _ in range(k):\n"
                                              "        best.append(int(flat.argmax()))\n        flat[best[-1]] = -math.inf\n"),),
         "argmax k times, each best set to -inf in the caller's scores", "top-heads-input-modified"),
    Edit("best_sorted_by_index", TOP, (("best = torch.topk(scores.flatten(), k).indices",
                                        "best = torch.topk(scores.flatten(), k).indices.sort().values"),),
         "the k best sorted by layer and head, not by score", "top-heads-values"),
    # capture_qkv
    Edit("captured_dict_as_default", CAPTURE, (("def capture_qkv(model: nn.Module, encoded, layer: int)",
                                                "def capture_qkv(model: nn.Module, encoded, layer: int, captured: dict = {})"),
                                               ("    captured = {}\n", "")),
         "a mutable default dict: every call returns the same dict", "capture-state"),
    Edit("hook_keeps_the_inputs", CAPTURE, (("(output[0] if isinstance(output, tuple) else output).detach()",
                                             "inputs[0].detach()"),),
         "the hooks keep the modules' inputs (the hidden states), not their outputs", "capture-values"),
    Edit("value_hooked_on_query", CAPTURE, (('[getattr(attention, name).register_forward_hook(keep(name)) for name in ("query", "key", "value")]',
                                             '[attention.query.register_forward_hook(keep("query")), '
                                             'attention.key.register_forward_hook(keep("key")),\n'
                                             '               attention.query.register_forward_hook(keep("value"))]'),),
         "copy-paste: the value captured from the query projection", "capture-values"),
    Edit("element_0_of_every_output", CAPTURE, (("(output[0] if isinstance(output, tuple) else output).detach()",
                                                 "output[0].detach()"),),
         "output[0] for every module: the first sequence of query, key and value", "capture-values"),
    Edit("capture_with_the_graph", CAPTURE, (("        with torch.no_grad():\n            model(**encoded)\n",
                                              "        model(**encoded)\n"),
                                             (").detach()", ")")),
         "no torch.no_grad() and no detach: the tensors carry gradients", "capture-gradients"),
    # recompute_attention
    Edit("scale_forgotten", RECOMPUTE, ((" " + SCALE, ""),), "scores not scaled at all", "recompute-scale"),
    Edit("mask_after_softmax", RECOMPUTE, (("        scores = scores.masked_fill(padding, torch.finfo(scores.dtype).min)\n"
                                            "    weights = torch.softmax(scores, dim=-1)\n",
                                            "    weights = torch.softmax(scores, dim=-1)\n    if attention_mask is not None:\n"
                                            "        weights = weights.masked_fill(padding, 0.0)\n"),),
         "padding weights zeroed after the softmax: rows no longer sum to 1", "recompute-mask-missing"),
    Edit("context_from_keys", RECOMPUTE, (("weights @ heads(value)", "weights @ heads(key)"),),
         "the weights applied to the keys, not the values", "recompute-values"),
    Edit("mask_filled_with_minus_inf", RECOMPUTE, (("torch.finfo(scores.dtype).min", 'float("-inf")'),),
         "padding filled with -inf: NaN for a sequence of padding only", "recompute-mask-inf"),
    Edit("softmax_by_plain_exp", RECOMPUTE, (("weights = torch.softmax(scores, dim=-1)",
                                              "weights = scores.exp() / scores.exp().sum(dim=-1, keepdim=True)"),),
         "softmax as exp / sum without subtracting the max: overflows", "softmax-overflow"),
    # attention_rollout
    Edit("columns_renormalised", ROLLOUT, ((RENORMALISE, "        layers = layers / layers.sum(dim=-2, keepdim=True)\n"),),
         "0.5 A + 0.5 I divided by its column sums, not its row sums", "rollout-not-renormalised"),
    Edit("layers_averaged_not_heads", ROLLOUT, (("layers = attn.mean(dim=1)", "layers = attn.mean(dim=0)"),),
         "the mean over layers (dim 0): the product runs over heads", "rollout-values"),
    Edit("residual_off_by_default", ROLLOUT, (("residual: bool = True", "residual: bool = False"),),
         "the default of residual changed to False", "rollout-no-identity"),
    Edit("first_layer_counted_twice", ROLLOUT, (("for layer in layers[1:]:", "for layer in layers:"),),
         "the loop starts at layer 0 again: A_0 multiplied twice", "rollout-values"),
    # word_level_attention
    Edit("last_word_dropped", WORDS, (("words = int(ids.max()) + 1", "words = int(ids.max())"),),
         "W = the largest word id, not one more: the last word is lost", "words-values"),
    Edit("specials_in_the_first_word", WORDS, (("-1 if w is None else w", "0 if w is None else w"),),
         "[CLS] and [SEP] counted as pieces of word 0", "words-values"),
    Edit("words_as_nested_lists", WORDS, ((WORDS_RETURN, "return (" + WORDS_RETURN[len("return "):] + ").tolist()"),),
         "the (W, W) result returned as a Python list", "words-return-type"),
)

FRESH_ALTERNATIVES = (
    Edit("cosine_by_outer_norms", COSINE, (("    " + UNIT + "\n    return unit @ unit.T\n",
                                            "    norms = X.norm(dim=-1)\n    return (X @ X.T) / (norms[:, None] * norms[None, :])\n"),),
         "the Gram matrix divided by the outer product of the norms"),
    Edit("embeddings_by_indexing_tables", EMBEDDINGS, ((SUMMED, "    summed = (parts.word_embeddings.weight[input_ids]\n"
                                                               "              + parts.position_embeddings.weight[: input_ids.shape[1]]\n"
                                                               "              + parts.token_type_embeddings.weight[token_type_ids])\n"),),
         "the embedding tables indexed directly, positions as a slice"),
    Edit("maps_by_concatenation", MAPS, ((STACK, "attn = torch.cat(outputs.attentions, dim=0).cpu()"),),
         "torch.cat of the (1, H, T, T) layers along dim 0"),
    Edit("entropy_with_where", ENTROPY, ((XLOGY, "return -torch.where(attn > 0, attn * attn.log(), torch.zeros_like(attn)).sum(dim=-1)"),),
         "p ln p where p > 0, else 0, by torch.where"),
    Edit("future_summed_then_divided", PATTERNS, (("torch.triu(attn, diagonal=1).sum(dim=-1).mean(dim=-1)",
                                                   "torch.triu(attn, diagonal=1).sum(dim=(-2, -1)) / attn.shape[-1]"),),
         "the upper triangle summed at once, divided by T"),
    Edit("top_heads_by_unravel_index", TOP, ((UNRAVEL, "layers, heads = torch.unravel_index(best, scores.shape)\n"
                                                       "    return [(int(l), int(h)) for l, h in zip(layers, heads)]"),),
         "torch.unravel_index"),
    Edit("capture_from_a_module_dict", CAPTURE, (('    handles = [getattr(attention, name).register_forward_hook(keep(name)) for name in ("query", "key", "value")]\n'
                                                  '    handles.append(attention.register_forward_hook(keep("context")))\n',
                                                  '    modules = {"query": attention.query, "key": attention.key, "value": attention.value, "context": attention}\n'
                                                  '    handles = [module.register_forward_hook(keep(name)) for name, module in modules.items()]\n'),),
         "the four modules named in a dict, one hook each"),
    Edit("capture_restores_the_mode", CAPTURE, (("    try:\n        model.eval()\n", "    was_training = model.training\n    try:\n        model.eval()\n"),
                                                ("            handle.remove()\n", "            handle.remove()\n        model.train(was_training)\n")),
         "eval mode for the run, the caller's mode restored afterwards"),
    Edit("recompute_with_unflatten", RECOMPUTE, ((HEADS, "return x.unflatten(-1, (num_heads, head_dim)).permute(0, 2, 1, 3)"),
                                                 (MERGE, "context = (weights @ heads(value)).permute(0, 2, 1, 3).flatten(2)")),
         "heads split with unflatten and merged with flatten"),
    Edit("recompute_with_stable_exp", RECOMPUTE, (("weights = torch.softmax(scores, dim=-1)",
                                                   "shifted = (scores - scores.amax(dim=-1, keepdim=True)).exp()\n"
                                                   "    weights = shifted / shifted.sum(dim=-1, keepdim=True)"),),
         "softmax written out, the row max subtracted first"),
    Edit("rollout_identity_added_whole", ROLLOUT, ((MIX, "layers = layers + torch.eye(layers.shape[-1], dtype=layers.dtype, device=layers.device)\n"),),
         "A + I then rows renormalised: the same as 0.5 A + 0.5 I renormalised"),
    Edit("words_with_one_hot", WORDS, (("pieces = (ids[None, :] == torch.arange(words, device=attn.device)[:, None]).to(attn.dtype)",
                                        "pieces = F.one_hot(ids + 1, words + 1)[:, 1:].T.to(attn.dtype)"),),
         "the piece matrix from F.one_hot, specials in a dropped column"),
)

# Written after the grader's rules were frozen (git commit 1dca0df), without reading them: a second set of
# held-out mutants and alternatives. The rules were re-tuned on FRESH_MUTANTS, so this set measures them again on
# mistakes they have never seen; it is kept apart from every tuple above so that its figures stay visible.
#
# New mistake names used below (not yet in MISTAKES), with their advice:
# embeddings-sqrt-scale: Add the three embeddings as they are: BERT does not multiply the word embeddings by
#     sqrt(hidden) as assignment 1's transformer did.
# embeddings-wrong-layer-norm: Normalise with the embeddings' own LayerNorm, model.embeddings.LayerNorm: the
#     encoder layers' LayerNorms have other learned scales and shifts.
# embeddings-state: Keep nothing between calls (no cache of position vectors by length): another model, or the same
#     one after its weights change, has other embeddings.
# entropy-input-modified: Do not change attn in place (attn[attn == 0] = 1): the caller's maps must be left as they
#     were; use torch.special.xlogy(attn, attn), which needs no such trick.
# argument-ignored: Use every argument you are given (num_heads, k, residual): a value typed in from MiniLM or the
#     notebook's demos (12 heads, the top 3, the residual always on) is wrong for the grader's inputs.
# hooks-late-binding: A lambda defined in a loop sees the loop variable's LAST value when it runs: bind the name when
#     the hook is made (a factory such as keep(name), or a default argument name=name), so each hook stores under
#     its own key.
# words-input-modified: Do not change the caller's word_ids list (None replaced in place): build a new list or
#     tensor from it.
HELD_OUT_MUTANTS = (
    # cosine_similarity_matrix
    Edit("cosine_of_centred_rows", COSINE, ((UNIT, "centred = X - X.mean(dim=-1, keepdim=True)\n"
                                                   "    unit = centred / centred.norm(dim=-1, keepdim=True)"),),
         "each row's mean subtracted first: Pearson correlation, not cosine similarity", "cosine-values"),
    # input_embeddings
    Edit("word_embeddings_scaled_by_sqrt_hidden", EMBEDDINGS,
         (("summed = (parts.word_embeddings(input_ids) +",
           "summed = (parts.word_embeddings(input_ids) * math.sqrt(parts.word_embeddings.embedding_dim) +"),),
         "word embeddings multiplied by sqrt(hidden), as in assignment 1", "embeddings-sqrt-scale"),
    Edit("encoder_layer_norm_used", EMBEDDINGS, (("return parts.LayerNorm(summed)",
                                                  "return model.encoder.layer[0].attention.output.LayerNorm(summed)"),),
         "the first encoder layer's LayerNorm instead of the embeddings' own", "embeddings-wrong-layer-norm"),
    Edit("positions_cached_by_length", EMBEDDINGS,
         (("def input_embeddings(", "_POSITIONS = {}  # position vectors by sequence length, computed once\n\n\n"
                                    "def input_embeddings("),
          (POSITIONS + "\n", POSITIONS + "\n    if input_ids.shape[1] not in _POSITIONS:\n"
                             "        _POSITIONS[input_ids.shape[1]] = parts.position_embeddings(positions)\n"),
          ("parts.position_embeddings(positions)\n              +", "_POSITIONS[input_ids.shape[1]]\n              +")),
         "position vectors cached by length in a global: a later model gets the first one's", "embeddings-state"),
    # get_attention_maps
    Edit("maps_layers_and_heads_swapped", MAPS, ((STACK, "attn = torch.stack(outputs.attentions, dim=2)[0].cpu()"),),
         "layers stacked on dim 2: (H, L, T, T)", "maps-values"),
    Edit("eval_after_the_forward", MAPS, (("    model.eval()\n    encoded", "    encoded"),
                                          ("    " + STACK, "    model.eval()\n    " + STACK)),
         "model.eval() called after the forward pass: the maps of a training model carry dropout", "maps-no-eval"),
    Edit("special_tokens_not_added", MAPS, (('tokenizer(text, return_tensors="pt")',
                                             'tokenizer(text, return_tensors="pt", add_special_tokens=False)'),),
         "tokenised with add_special_tokens=False: no [CLS] or [SEP] in the model's input", "tokens-no-specials"),
    # attention_entropy
    Edit("zeros_replaced_by_one_in_place", ENTROPY, ((XLOGY, "attn[attn == 0] = 1.0  # ln 1 = 0: the zeros then add nothing\n"
                                                             "    return -(attn * attn.log()).sum(dim=-1)"),),
         "the zeros of the caller's maps set to 1 in place to avoid log(0)", "entropy-input-modified"),
    Edit("nan_entropy_set_to_zero", ENTROPY, ((XLOGY, "return torch.nan_to_num(-(attn * attn.log()).sum(dim=-1))"),),
         "p ln p NaN at p = 0 hidden by nan_to_num: any row with a zero gets entropy 0", "entropy-nan-at-zero"),
    # head_pattern_scores
    Edit("cls_total_over_queries", PATTERNS, (('"cls": attn[..., :, 0].mean(dim=-1)', '"cls": attn[..., :, 0].sum(dim=-1)'),),
         "the [CLS] column summed over the queries, not averaged", "pattern-values"),
    Edit("future_over_t_minus_1_queries", PATTERNS, (("torch.triu(attn, diagonal=1).sum(dim=-1).mean(dim=-1)",
                                                      "torch.triu(attn, diagonal=1).sum(dim=(-2, -1)) / (attn.shape[-1] - 1)"),),
         "future divided by T - 1 (the queries that have a later token), not by T", "pattern-values"),
    # top_heads
    Edit("top_k_hard_coded", TOP, (("best = torch.topk(scores.flatten(), k).indices",
                                    "best = torch.topk(scores.flatten(), 3).indices"),),
         "k ignored: always the top 3, as in the notebook's demo", "argument-ignored"),
    # capture_qkv
    Edit("hooks_bound_late", CAPTURE, (('    handles = [getattr(attention, name).register_forward_hook(keep(name)) for name in ("query", "key", "value")]\n',
                                        '    handles = [getattr(attention, name).register_forward_hook(\n'
                                        '        lambda module, inputs, output: captured.__setitem__(name, output.detach()))\n'
                                        '        for name in ("query", "key", "value")]\n'),),
         "lambdas made in a comprehension: every hook stores under the last name, \"value\"", "hooks-late-binding"),
    # recompute_attention
    Edit("num_heads_hard_coded", RECOMPUTE, (("    head_dim = D // num_heads\n",
                                              "    num_heads = 12  # MiniLM's heads\n    head_dim = D // num_heads\n"),),
         "num_heads overwritten with MiniLM's 12", "argument-ignored"),
    Edit("mask_multiplied_into_scores", RECOMPUTE, (("        scores = scores.masked_fill(padding, torch.finfo(scores.dtype).min)\n",
                                                     "        scores = scores * torch.as_tensor(attention_mask, device=scores.device)[:, None, None, :]\n"),),
         "scores multiplied by the mask: padding keys get score 0, not the minimum", "recompute-mask-missing"),
    Edit("scaled_after_softmax", RECOMPUTE, ((" " + SCALE + "\n", "\n"),
                                             ("weights = torch.softmax(scores, dim=-1)",
                                              "weights = torch.softmax(scores, dim=-1) / math.sqrt(head_dim)")),
         "the weights divided by sqrt(d) after the softmax instead of the scores before it", "recompute-scale"),
    # attention_rollout
    Edit("renormalised_before_mixing", ROLLOUT, ((MIX + RENORMALISE,
                                                  "layers = layers / layers.sum(dim=-1, keepdim=True)\n        " + MIX),),
         "rows of A renormalised before 0.5 A + 0.5 I instead of after", "rollout-not-renormalised"),
    Edit("residual_argument_ignored", ROLLOUT, (("    if residual:\n        " + MIX + RENORMALISE,
                                                 "    " + MIX + RENORMALISE[4:]),),
         "the identity mixed in whatever residual says", "argument-ignored"),
    # word_level_attention
    Edit("none_counted_as_a_word", WORDS, (("words = int(ids.max()) + 1", "words = len(set(word_ids))"),),
         "W = the number of distinct word_ids, None included: one word too many", "words-values"),
    Edit("word_ids_changed_in_place", WORDS, (("    ids = torch.tensor([-1 if w is None else w for w in word_ids], device=attn.device)\n",
                                               "    for t, w in enumerate(word_ids):\n        if w is None:\n"
                                               "            word_ids[t] = -1\n"
                                               "    ids = torch.tensor(word_ids, device=attn.device)\n"),),
         "None replaced by -1 in the caller's word_ids list", "words-input-modified"),
)

HELD_OUT_ALTERNATIVES = (
    Edit("cosine_by_vector_norm_and_einsum", COSINE, (("    " + UNIT + "\n    return unit @ unit.T\n",
                                                       "    unit = X / torch.linalg.vector_norm(X, dim=-1, keepdim=True)\n"
                                                       "    return torch.einsum(\"id,jd->ij\", unit, unit)\n"),),
         "rows divided by torch.linalg.vector_norm, products by einsum"),
    Edit("embeddings_by_functional_lookup", EMBEDDINGS,
         (("token_type_ids = torch.zeros_like(input_ids)", "token_type_ids = input_ids.new_zeros(input_ids.shape)"),
          (POSITIONS, "positions = torch.arange(input_ids.shape[1], device=input_ids.device).expand_as(input_ids)"),
          (SUMMED, "    summed = (F.embedding(input_ids, parts.word_embeddings.weight)\n"
                   "              + F.embedding(positions, parts.position_embeddings.weight)\n"
                   "              + F.embedding(token_type_ids, parts.token_type_embeddings.weight))\n")),
         "F.embedding on the three tables, positions expanded to (B, T)"),
    Edit("maps_with_no_grad_decorator", MAPS, (("def get_attention_maps(", "@torch.no_grad()\ndef get_attention_maps("),
                                               ("    model.eval()\n", "    model.train(False)\n"),
                                               ("    with torch.no_grad():\n        outputs = model(**encoded, output_attentions=True)\n",
                                                "    outputs = model(**encoded, output_attentions=True)\n")),
         "torch.no_grad() as a decorator, eval mode by model.train(False)"),
    Edit("entropy_with_finite_log", ENTROPY, ((XLOGY, "return -(attn * attn.log().nan_to_num()).sum(dim=-1)"),),
         "log(0) = -inf made the dtype's lowest finite value, so 0 * it is 0"),
    Edit("patterns_by_slicing", PATTERNS, ((PREVIOUS_NEXT, '{"previous": torch.diagonal(attn[..., 1:, :-1], dim1=-2, dim2=-1).mean(dim=-1),\n'
                                                           '            "self": diagonal(0),\n'
                                                           '            "next": torch.diagonal(attn[..., :-1, 1:], dim1=-2, dim2=-1).mean(dim=-1),'),),
         "previous and next as the main diagonals of the shifted maps"),
    Edit("capture_with_exit_stack", CAPTURE, (("    try:\n        model.eval()\n        with torch.no_grad():\n"
                                               "            model(**encoded)\n    finally:\n" + REMOVE,
                                               "    with contextlib.ExitStack() as stack:\n"
                                               "        for handle in handles:\n"
                                               "            stack.enter_context(handle)  # a RemovableHandle removes itself on exit\n"
                                               "        model.eval()\n        with torch.no_grad():\n"
                                               "            model(**encoded)\n"),
                                              ("    attention = model", "    import contextlib\n\n    attention = model")),
         "the handles entered in a contextlib.ExitStack, which removes them on the way out, error or not"),
    Edit("recompute_with_where", RECOMPUTE, (("== 0  # (B, 1, 1, T): keys", ".bool()  # (B, 1, 1, T): keys"),
                                             ("padding = torch.as_tensor", "real = torch.as_tensor"),
                                             ("        scores = scores.masked_fill(padding, torch.finfo(scores.dtype).min)\n",
                                              "        scores = torch.where(real, scores, torch.finfo(scores.dtype).min)\n")),
         "real keys as a bool mask, the others filled by torch.where"),
    Edit("rollout_identity_on_the_diagonal", ROLLOUT, ((MIX, "layers = 0.5 * layers\n"
                                                             "        layers.diagonal(dim1=-2, dim2=-1).add_(0.5)\n"),),
         "0.5 added in place to the diagonal of the halved (new) head means"),
    Edit("words_by_index_add", WORDS, (("    pieces = (ids[None, :] == torch.arange(words, device=attn.device)[:, None]).to(attn.dtype)  # (W, T)\n"
                                        "    " + WORDS_RETURN + "\n",
                                        "    keep = ids >= 0\n"
                                        "    to_words = torch.zeros(attn.shape[0], words, dtype=attn.dtype, device=attn.device)\n"
                                        "    to_words.index_add_(1, ids[keep], attn[:, keep])  # (T, W): summed over key pieces\n"
                                        "    summed = torch.zeros(words, words, dtype=attn.dtype, device=attn.device)\n"
                                        "    summed.index_add_(0, ids[keep], to_words[keep])  # (W, W): summed over query pieces\n"
                                        "    return summed / torch.bincount(ids[keep], minlength=words).to(attn.dtype)[:, None]\n"),),
         "index_add_ over the kept tokens' word ids, then divided by each word's piece count"),
)
