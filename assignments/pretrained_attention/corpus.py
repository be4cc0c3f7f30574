"""The grader's corpus for Pretrained Attention: the partial sample's bugs, mutants (each with the mistake it must be
diagnosed as, from MISTAKES in checks.py) and correct alternatives (course.grader_accuracy).

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
