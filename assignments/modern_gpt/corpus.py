"""The grader's corpus for A Small GPT, Trained Well: the partial sample's bugs, mutants (each with the mistake it
must be diagnosed as, from MISTAKES in checks.py) and correct alternatives (course.measuring.grader_accuracy).

Edits change the instructor solution's answer cells; each (old, new) pair must match the solution exactly.
"""

from course.samples import Edit

BPE, CODEC, ROPE, ATTENTION = "answer-train-bpe", "answer-encode-decode", "answer-apply-rope", "answer-attention"
INIT, GENERATE, OPTIMIZER, LR, STEP = ("answer-init-weights", "answer-generate", "answer-configure-optimizer",
                                       "answer-lr-at", "answer-train-step")

PICK = "pair = min(counts, key=lambda p: (-counts[p], p))"
JUMP = "            i += 2\n"
RANGE = "for new_id in range(256, vocab_size):"
START = "ids, merges = list(text.encode(\"utf-8\")), []"
EMPTY = "        if not counts:\n            break\n"
ENCODE_LOOP = ("    for i, pair in enumerate(merges):\n"
               "        ids = merge_pair(ids, tuple(pair), 256 + i)\n")
JOIN = "return b\"\".join(vocab[int(i)] for i in ids).decode(\"utf-8\", errors=\"replace\")"
THETA = "theta = base ** (-torch.arange(0, d, 2, dtype=torch.float32, device=x.device) / d)  # (d/2,)"
ANGLES = "angles = positions.to(torch.float32)[:, None] * theta[None, :]  # (T, d/2)"
ROTATE = "return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)"
PAIRS = "even, odd = x[..., 0::2], x[..., 1::2]"
SPLIT = ("q, k, v = (t.view(B, T, self.n_heads, d_head).transpose(1, 2) for t in self.qkv(x).split(d_model, "
         "dim=-1))")
ROTATE_QK = "q, k = apply_rope(q, positions), apply_rope(k, positions)"
APPEND = "k, v = torch.cat([cache[0], k], dim=2), torch.cat([cache[1], v], dim=2)"
SCORES = "scores = q @ k.transpose(-2, -1) / math.sqrt(d_head)  # (B, n_heads, T, T_past + T)"
MASK = "allowed = torch.ones(T, past + T, dtype=torch.bool, device=x.device).tril(diagonal=past)"
RETURN_CACHE = "return self.proj(y), (k, v)"
NORMAL = "        nn.init.normal_(module.weight, mean=0.0, std=0.02)\n"
KINDS = "if isinstance(module, (nn.Linear, nn.Embedding)):"
ZERO_BIAS = "        nn.init.zeros_(module.bias)\n"
NORM_INIT = ("    if isinstance(module, nn.LayerNorm):\n"
             "        nn.init.ones_(module.weight)\n"
             "        nn.init.zeros_(module.bias)\n")
NO_GRAD = "    with torch.no_grad():\n"
CACHED_CALL = "logits, caches = model(new, caches)"
LAST = "last = logits[:, -1, :]"
EMBEDDINGS = "embeddings = {id(m.weight) for m in model.modules() if isinstance(m, nn.Embedding)}"
DECAY = ("decay = {id(m.weight): m.weight for m in model.modules()\n"
         "             if isinstance(m, nn.Linear) and id(m.weight) not in embeddings}")
BETAS = "lr=lr, betas=(0.9, 0.95))"
WARMUP = "return max_lr * (step + 1) / warmup"
PROGRESS = "progress = (step - warmup) / (total - warmup)"
COSINE = "return min_lr + 0.5 * (1.0 + math.cos(math.pi * progress)) * (max_lr - min_lr)"
SET_LR = "    for group in optimizer.param_groups:\n        group[\"lr\"] = lr\n"
ZERO = "    optimizer.zero_grad()\n"
CLIP = "    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)\n"
STEP_CALL = "    optimizer.step()\n"

SAMPLE_BUGS = (
    (Edit("tie_to_first_seen", BPE, ((PICK, "pair = counts.most_common(1)[0][0]"),),
          "ties between equally frequent pairs go to the pair seen first (Counter.most_common)", "bpe-tie-rule"),
     "bpe_merges"),
    (Edit("rope_halves", ROPE, ((PAIRS, "even, odd = x[..., : d // 2], x[..., d // 2:]"),
                                (ROTATE, "return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)")),
          "RoPE pairs coordinate i with i + d/2 (halves), not 2i with 2i+1", "rope-halves"), "rope_values"),
    (Edit("warmup_from_zero", LR, ((WARMUP, "return max_lr * step / warmup"),),
          "warm-up from 0: the first step does not learn", "warmup-off-by-one"), "lr_schedule"),
)

MUTANTS = tuple(edit for edit, _ in SAMPLE_BUGS) + (
    # train_bpe
    Edit("tie_to_largest", BPE, ((PICK, "pair = max(counts, key=lambda p: (counts[p], p))"),),
         "ties go to the larger pair", "bpe-tie-rule"),
    Edit("overlapping_merge", BPE, ((JUMP, "            i += 1\n"),),
         "after a merge the walk moves one id on, so a a a merges into two tokens", "bpe-overlapping-merge"),
    Edit("one_merge_more", BPE, ((RANGE, "for new_id in range(256, vocab_size + 1):"),),
         "vocab_size - 255 merges", "bpe-merge-count"),
    Edit("no_early_stop", BPE, ((EMPTY, ""),),
         "no check for a text with no pair left: min() of nothing raises", "bpe-no-pairs-left"),
    Edit("characters_not_bytes", BPE, ((START, "ids, merges = [ord(ch) for ch in text], []"),),
         "merges over characters (code points), not UTF-8 bytes", "bpe-not-bytes"),
    # encode
    Edit("merges_reversed", CODEC, ((ENCODE_LOOP, "    for i, pair in reversed(list(enumerate(merges))):\n"
                                                  "        ids = merge_pair(ids, tuple(pair), 256 + i)\n"),),
         "merges applied last first", "encode-merge-order"),
    Edit("greedy_longest_match", CODEC, (("    ids = list(text.encode(\"utf-8\"))\n" + ENCODE_LOOP + "    return ids\n",
                                          "    vocab = {i: bytes([i]) for i in range(256)}\n"
                                          "    for i, (a, b) in enumerate(merges):\n"
                                          "        vocab[256 + i] = vocab[a] + vocab[b]\n"
                                          "    ids_of = {token: i for i, token in sorted(vocab.items(), reverse=True)}\n"
                                          "    data, ids, start = text.encode(\"utf-8\"), [], 0\n"
                                          "    while start < len(data):\n"
                                          "        end = max(e for e in range(start + 1, min(len(data), start + 64) + 1)"
                                          " if data[start:e] in ids_of)\n"
                                          "        ids.append(ids_of[data[start:end]])\n"
                                          "        start = end\n"
                                          "    return ids\n"),),
         "the longest known token at each position, not the merges in order", "encode-merge-order"),
    # decode
    Edit("decode_per_token", CODEC, ((JOIN, "return \"\".join(vocab[int(i)].decode(\"utf-8\", errors=\"replace\") "
                                            "for i in ids)"),),
         "each token decoded on its own", "decode-per-token"),
    Edit("decode_strict", CODEC, ((JOIN, "return b\"\".join(vocab[int(i)] for i in ids).decode(\"utf-8\")"),),
         "decoded strictly: invalid bytes raise", "decode-errors"),
    Edit("decode_latin_1", CODEC, ((JOIN, "return b\"\".join(vocab[int(i)] for i in ids).decode(\"latin-1\")"),),
         "bytes decoded as Latin-1", "decode-not-utf8"),
    # apply_rope
    Edit("angle_exponent_i_over_d", ROPE, ((THETA, "theta = base ** (-torch.arange(d // 2, dtype=torch.float32) / d)"),),
         "pair i turns by base ** (-i/d)", "rope-angle-exponent"),
    Edit("rotation_reversed", ROPE, ((ROTATE, "return torch.stack([even * cos + odd * sin, -even * sin + odd * cos], "
                                              "dim=-1).flatten(-2)"),),
         "each pair turned clockwise", "rope-direction"),
    Edit("integer_angles", ROPE, ((ANGLES, "angles = (positions[:, None] * theta[None, :]).long().float()"),),
         "angles truncated to whole radians", "rope-integer-angles"),
    Edit("rope_in_place", ROPE, ((ROTATE, "rotated = torch.stack([even * cos - odd * sin, even * sin + odd * cos], "
                                          "dim=-1).flatten(-2)\n"
                                          "    x.copy_(rotated)\n"
                                          "    return x"),),
         "the rotation written into x", "modifies-argument"),
    Edit("rope_float32_always", ROPE, (("cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)",
                                        "cos, sin = angles.cos(), angles.sin()"),
                                       (ROTATE, ROTATE + ".float()")),
         "float32 whatever the input's dtype", "rope-dtype"),
    # CausalSelfAttention
    Edit("mask_without_offset", ATTENTION, ((MASK, "allowed = torch.ones(T, past + T, dtype=torch.bool, "
                                                   "device=x.device).tril()"),),
         "the causal mask ignores the cache's length", "cache-mask-offset"),
    Edit("cache_prepended", ATTENTION, ((APPEND, "k, v = torch.cat([k, cache[0]], dim=2), torch.cat([v, cache[1]], "
                                                 "dim=2)"),),
         "new keys and values put before the cached ones", "cache-order"),
    Edit("old_cache_returned", ATTENTION, ((RETURN_CACHE, "return self.proj(y), (k, v) if cache is None else cache"),),
         "the cache returned as it came, without the new token", "cache-not-appended"),
    Edit("scores_unscaled", ATTENTION, ((SCORES, "scores = q @ k.transpose(-2, -1)"),),
         "scores not divided by sqrt(d_head)", "attention-scale"),
    Edit("scaled_by_d_model", ATTENTION, ((SCORES, "scores = q @ k.transpose(-2, -1) / math.sqrt(d_model)"),),
         "scores divided by sqrt(d_model)", "attention-scale"),
    Edit("values_rotated", ATTENTION, ((ROTATE_QK, "q, k, v = (apply_rope(t, positions) for t in (q, k, v))"),),
         "RoPE applied to the values too", "rope-on-values"),
    Edit("heads_split_by_view", ATTENTION, ((SPLIT, "q, k, v = (t.reshape(B, self.n_heads, T, d_head) "
                                                    "for t in self.qkv(x).split(d_model, dim=-1))"),),
         "heads split by a view straight to (B, n_heads, T, d_head)", "attention-head-split"),
    # init_weights
    Edit("embedding_left_default", INIT, ((KINDS, "if isinstance(module, nn.Linear):"),),
         "embeddings left at PyTorch's N(0, 1)", "init-embedding"),
    Edit("bias_left_default", INIT, (("    if isinstance(module, nn.Linear) and module.bias is not None:\n" + ZERO_BIAS,
                                       ""),), "Linear biases left as PyTorch drew them", "init-bias"),
    Edit("layernorm_drawn", INIT, ((NORM_INIT, "    if isinstance(module, nn.LayerNorm):\n"
                                               "        nn.init.normal_(module.weight, mean=0.0, std=0.02)\n"
                                               "        nn.init.zeros_(module.bias)\n"),),
         "LayerNorm weights drawn from N(0, 0.02^2)", "init-layernorm"),
    # generate
    Edit("cache_never_used", GENERATE, ((CACHED_CALL, "logits, caches = model(idx)"),),
         "use_cache runs the model on all the ids anyway", "generate-cache-unused"),
    Edit("no_no_grad", GENERATE, ((NO_GRAD, "    if True:\n"),), "generation with gradients on", "generate-grad"),
    Edit("probabilities_returned", GENERATE, (("chosen_from.append(last)", "chosen_from.append(last.softmax(dim=-1))"),),
         "softmax probabilities returned as the logits", "generate-logits"),
    # configure_optimizer
    Edit("decay_every_matrix", OPTIMIZER, ((DECAY, "decay = {id(p): p for p in model.parameters() if p.dim() >= 2}"),),
         "decay on every matrix, the embeddings included", "decay-on-embeddings"),
    Edit("decay_everything", OPTIMIZER, ((DECAY, "decay = {id(p): p for p in model.parameters()}"),),
         "decay on every parameter", "decay-on-norms-biases"),
    Edit("tied_weight_twice", OPTIMIZER, (("rest = [p for p in model.parameters() if id(p) not in decay]",
                                           "rest = [m.weight for m in model.modules() if isinstance(m, (nn.LayerNorm, "
                                           "nn.Embedding))] + [m.bias for m in model.modules() if getattr(m, 'bias', "
                                           "None) is not None]"),
                                          (EMBEDDINGS, "embeddings = set()")),
         "the tied head's weight in both groups", "optimizer-duplicate"),
    # lr_at
    Edit("progress_over_total", LR, ((PROGRESS, "progress = (step - warmup) / total"),),
         "the cosine's progress measured over the whole run", "cosine-progress"),
    Edit("decay_to_zero", LR, ((COSINE, "return 0.5 * (1.0 + math.cos(math.pi * progress)) * max_lr"),
                               ("        return min_lr\n", "        return 0.0\n")),
         "cosine down to 0, not to min_lr", "cosine-min-lr"),
    Edit("linear_decay", LR, ((COSINE, "return max_lr - progress * (max_lr - min_lr)"),),
         "a straight line from max_lr to min_lr", "lr-shape"),
    # train_step
    Edit("clip_after_step", STEP, ((CLIP + STEP_CALL, STEP_CALL + CLIP),), "gradients clipped after the step",
         "clip-after-step"),
    Edit("no_zero_grad", STEP, ((ZERO, ""),), "gradients never zeroed", "no-zero-grad"),
    Edit("lr_never_set", STEP, ((SET_LR, ""),), "the lr argument ignored", "lr-not-set"),
    Edit("no_train_mode", STEP, (("    model.train()\n", ""),), "the model left in the mode it was in",
         "no-train-mode"),
    Edit("tensor_returned", STEP, (("    return loss.item()\n", "    return loss\n"),), "the loss tensor returned",
         "loss-not-float"),
)

ALTERNATIVES = (
    Edit("bpe_sorted_counts", BPE, ((PICK, "pair = sorted(counts.items(), key=lambda item: (-item[1], item[0]))[0][0]"),),
         "the most frequent pair by sorting the counts"),
    Edit("merge_pair_with_bytes_replace", BPE, (("    merged, i = [], 0\n    while i < len(ids):\n"
                                                 "        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:\n"
                                                 "            merged.append(new_id)\n" + JUMP +
                                                 "        else:\n            merged.append(ids[i])\n"
                                                 "            i += 1\n    return merged\n",
                                                 "    text = \"\".join(map(chr, ids))  # str.replace: left to right, "
                                                 "no overlap\n"
                                                 "    return [ord(ch) for ch in text.replace(chr(pair[0]) + "
                                                 "chr(pair[1]), chr(new_id))]\n"),),
         "merge_pair with str.replace over ids as characters"),
    Edit("encode_lowest_rank_first", CODEC, ((ENCODE_LOOP,
                                              "    ranks = {tuple(pair): i for i, pair in enumerate(merges)}\n"
                                              "    while len(ids) >= 2:\n"
                                              "        pair = min(zip(ids, ids[1:]), key=lambda p: ranks.get(p, "
                                              "float('inf')))\n"
                                              "        if pair not in ranks:\n"
                                              "            break\n"
                                              "        ids = merge_pair(ids, pair, 256 + ranks[pair])\n"),),
         "encode by merging the lowest-ranked pair present, minbpe's way"),
    Edit("decode_recursive", CODEC, ((JOIN, "def expand(i):\n"
                                            "        return bytes([i]) if i < 256 else b\"\".join(map(expand, "
                                            "merges[i - 256]))\n"
                                            "    return b\"\".join(expand(int(i)) for i in ids).decode(\"utf-8\", "
                                            "errors=\"replace\")"),),
         "each id's bytes expanded recursively"),
    Edit("rope_complex", ROPE, ((PAIRS + "\n    " + ROTATE,
                                 "pairs = torch.view_as_complex(x.to(torch.float32).reshape(*x.shape[:-1], d // 2, 2)"
                                 ".contiguous())\n"
                                 "    rotated = pairs * torch.polar(torch.ones_like(angles), angles)\n"
                                 "    return torch.view_as_real(rotated).flatten(-2).to(x.dtype)"),),
         "RoPE as multiplication by complex numbers"),
    Edit("attention_with_sdpa", ATTENTION, ((SCORES + "\n        " + MASK + "\n"
                                             "        weights = torch.softmax(scores.masked_fill(~allowed, "
                                             "float(\"-inf\")), dim=-1)\n"
                                             "        y = (weights @ v).transpose(1, 2).reshape(B, T, d_model)",
                                             "allowed = torch.ones(T, past + T, dtype=torch.bool, device=x.device)"
                                             ".tril(diagonal=past)\n"
                                             "        y = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)\n"
                                             "        y = y.transpose(1, 2).reshape(B, T, d_model)"),),
         "PyTorch's scaled_dot_product_attention with a bool mask"),
    Edit("init_by_parameter_names", INIT, ((KINDS + "\n" + NORMAL +
                                            "    if isinstance(module, nn.Linear) and module.bias is not None:\n"
                                            + ZERO_BIAS + NORM_INIT,
                                            "if isinstance(module, nn.LayerNorm):\n"
                                            "        module.reset_parameters()  # weight 1, bias 0\n"
                                            "    elif isinstance(module, (nn.Linear, nn.Embedding)):\n"
                                            "        with torch.no_grad():\n"
                                            "            module.weight.normal_(0.0, 0.02)\n"
                                            "            if getattr(module, \"bias\", None) is not None:\n"
                                            "                module.bias.zero_()\n"),),
         "in-place normal_ and zero_ under no_grad, LayerNorm reset"),
    Edit("generate_two_loops", GENERATE, (("            if use_cache:\n"
                                           "                " + CACHED_CALL + "\n"
                                           "            else:\n"
                                           "                logits, _ = model(idx)\n",
                                           "            logits, caches = model(new, caches) if use_cache else "
                                           "(model(idx)[0], None)\n"),),
         "the model's call in one conditional expression"),
    Edit("optimizer_by_names", OPTIMIZER, ((EMBEDDINGS + "\n    " + DECAY,
                                            "linear = {name + \".weight\" for name, m in model.named_modules() "
                                            "if isinstance(m, nn.Linear)}\n"
                                            "    embedded = {id(m.weight) for m in model.modules() "
                                            "if isinstance(m, nn.Embedding)}\n"
                                            "    decay = {id(p): p for name, p in model.named_parameters() "
                                            "if name in linear and id(p) not in embedded}"),),
         "decayed parameters found by their names"),
    Edit("lr_piecewise", LR, ((PROGRESS + "\n    " + COSINE,
                               "cosine = math.cos(math.pi * (step - warmup) / (total - warmup))\n"
                               "    return (max_lr + min_lr) / 2 + (max_lr - min_lr) / 2 * cosine"),),
         "the cosine as a mean plus a half-range"),
    Edit("zero_grad_to_none_false", STEP, ((ZERO, "    model.zero_grad(set_to_none=False)\n"),),
         "gradients zeroed through the model, to zeros"),
)
