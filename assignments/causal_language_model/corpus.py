"""The grader's corpus for A Causal Language Model: the partial sample's bugs, mutants (each with the mistake it must
be diagnosed as, from MISTAKES in checks.py) and correct alternatives (course.measuring.grader_accuracy).

Edits change the instructor solution's answer cells; each (old, new) pair must match the solution exactly.
"""

from course.samples import Edit

SOFTMAX, ENTROPY, SATURATION, DEPENDENCY = ("answer-masked-softmax", "answer-attention-entropy",
                                            "answer-saturation-stats", "answer-dependency-matrix")
MASK, EXAMPLES, BLOCK, GPT, LOSS = ("answer-causal-mask", "answer-make-examples", "answer-decoder-block",
                                    "answer-tiny-gpt", "answer-lm-loss")
TRAIN, PROBS, GENERATE = "answer-train-lm", "answer-next-token-probs", "answer-generate"

FILL = "torch.finfo(scores.dtype).min"
WEIGHTS = "return torch.softmax(filled, dim=-1) * allowed"
ALLOWED = "allowed = torch.as_tensor(mask, device=scores.device) != 0"
SOFTMAX_BODY = ("    " + ALLOWED + "\n"
                "    filled = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)  # finite: no 0/0 anywhere\n"
                "    " + WEIGHTS + "  # zeroes the rows with no allowed key too\n")
XLOGY = "return -torch.special.xlogy(weights, weights).sum(dim=-1)"
JACOBIAN = "jacobian = torch.autograd.functional.jacobian(fn, x.detach().clone())  # (T, d_out, T, d_in)"
DEPENDENCY_BODY = "    " + JACOBIAN + "\n    return jacobian.pow(2).sum(dim=(1, 3)).sqrt()\n"
TRIU = "return torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)"
ATTEND = "attended, _ = self.attn(h, h, h, attn_mask=attn_mask, need_weights=False)"
FF_RESIDUAL = "return x + self.drop(self.ff(self.ln2(x)))"
BLOCK_FORWARD = ("        h = self.ln1(x)\n        " + ATTEND + "\n        x = x + self.drop(attended)\n        "
                 + FF_RESIDUAL + "\n")
TIE = "        self.head.weight = self.tok_emb.weight  # tied: one (vocab_size, d_model) matrix\n"
EMBED = "x = self.tok_emb(idx) + self.pos_emb(torch.arange(T, device=idx.device))"
LENGTH_CHECK = ("        if T > self.block_size:\n"
                "            raise ValueError(f\"sequence of length {T} is longer than block_size {self.block_size}\")\n")
CROSS_ENTROPY = "return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))"
GENERATOR = "generator = torch.Generator().manual_seed(seed)"
TOP_K = ("        kth = torch.topk(logits, min(top_k, logits.shape[-1]), dim=-1).values[..., -1:]\n"
         "        logits = logits.masked_fill(logits < kth, float(\"-inf\"))\n")
SAMPLE = "next_ids = torch.multinomial(next_token_probs(logits, temperature, top_k), 1, generator=generator)"
LAST_LOGITS = "logits = model(idx[:, -model.block_size:])[:, -1, :]"

SAMPLE_BUGS = (
    (Edit("mask_of_assignment_1", MASK, ((TRIU, "return torch.tril(torch.ones(T, T, dtype=torch.bool, device=device))"),),
          "assignment 1's causal mask (True = may attend) given to nn.MultiheadAttention", "mask-convention-may-attend"),
     "causal_mask"),
    (Edit("entropy_in_bits", ENTROPY, ((XLOGY, "return -(torch.special.xlogy(weights, weights) / math.log(2)).sum(dim=-1)"),),
          "entropy in bits (log base 2)", "entropy-log-base"), "attention_entropy"),
    (Edit("no_zero_grad", TRAIN, (("        optimizer.zero_grad()\n", ""),),
          "gradients never zeroed: each step adds to all earlier ones", "no-zero-grad"), "train_lm"),
)

MUTANTS = tuple(edit for edit, _ in SAMPLE_BUGS) + (
    # masked_softmax
    Edit("fill_minus_1e9", SOFTMAX, ((FILL, "-1e9"), (WEIGHTS, "return torch.softmax(filled, dim=-1)")),
         "fill -1e9, nothing zeroed: a fully masked row is uniform, and float16 overflows", "fill-value"),
    Edit("fill_minus_inf", SOFTMAX, ((FILL, 'float("-inf")'), (WEIGHTS, "return torch.softmax(filled, dim=-1)")),
         "fill -inf without repair: NaN rows", "fill-nan-row"),
    Edit("nan_repaired", SOFTMAX, ((FILL, 'float("-inf")'),
                                   (WEIGHTS, "return torch.nan_to_num(torch.softmax(filled, dim=-1))")),
         "fill -inf, NaN repaired after the softmax: hides a NaN from upstream", "nan-repair-hides"),
    Edit("mask_reversed", SOFTMAX, ((ALLOWED, ALLOWED.replace("!= 0", "== 0")),), "mask polarity reversed",
         "mask-polarity"),
    Edit("mask_added", SOFTMAX, ((SOFTMAX_BODY, "    return torch.softmax(scores + torch.as_tensor(mask, "
                                                "dtype=scores.dtype), dim=-1)\n"),),
         "the 0/1 mask added to the scores", "mask-added"),
    Edit("softmax_over_queries", SOFTMAX, (("dim=-1", "dim=-2"),), "softmax over the queries", "softmax-axis"),
    Edit("weights_to_float32", SOFTMAX, ((WEIGHTS, "return (torch.softmax(filled, dim=-1) * allowed).float()"),),
         "weights always float32", "masked-softmax-dtype"),
    # attention_entropy
    Edit("entropy_nan_at_zero", ENTROPY, ((XLOGY, "return -(weights * torch.log(weights)).sum(dim=-1)"),),
         "p log p with log(0) = -inf: NaN", "entropy-nan-at-zero"),
    # saturation_stats
    Edit("global_max", SATURATION, (("p.max(dim=-1).values.mean().item()", "weights.max().item()"),),
         "the largest weight of the whole tensor", "max-global"),
    Edit("spectral_norm", SATURATION, (("torch.linalg.matrix_norm(jacobians)",
                                        "torch.linalg.matrix_norm(jacobians, ord=2)"),),
         "spectral norm of the Jacobian", "jacobian-norm"),
    # dependency_matrix
    Edit("dependency_transposed", DEPENDENCY, ((".sqrt()", ".sqrt().T"),), "D transposed", "dependency-transposed"),
    Edit("gradient_of_sum", DEPENDENCY, ((DEPENDENCY_BODY, "    x = x.detach().clone().requires_grad_()\n"
                                                           "    fn(x).sum().backward()\n"
                                                           "    return x.grad.norm(dim=1).expand(len(x), len(x))\n"),),
         "the gradient of fn(x).sum(): one norm per input", "dependency-sum-gradient"),
    Edit("input_requires_grad", DEPENDENCY, (("fn, x.detach().clone())", "fn, x.requires_grad_())"),),
         "x itself set to require gradients", "modifies-input"),
    # causal_mask
    Edit("diagonal_blocked", MASK, (("diagonal=1", "diagonal=0"),), "each query blocked from itself",
         "mask-diagonal-blocked"),
    Edit("float_zero_one_mask", MASK, ((TRIU, "return torch.tril(torch.ones(T, T, device=device))"),),
         "assignment 1's 0/1 float mask: added to the scores, it blocks nothing", "mask-float-zero-one"),
    # make_examples
    Edit("targets_not_shifted", EXAMPLES, (("data[indices + 1]", "data[indices]"),), "y = x", "targets-not-shifted"),
    Edit("targets_shifted_by_2", EXAMPLES, (("data[indices + 1]", "data[indices + 2]"),), "y two ids after x",
         "targets-shifted-by-2"),
    Edit("float_ids", EXAMPLES, (("return data[indices], data[indices + 1]",
                                  "return data[indices].float(), data[indices + 1].float()"),), "ids as floats",
         "examples-dtype"),
    # DecoderBlock
    Edit("post_norm", BLOCK, ((BLOCK_FORWARD, "        attended, _ = self.attn(x, x, x, attn_mask=attn_mask, "
                                              "need_weights=False)\n"
                                              "        x = self.ln1(x + self.drop(attended))\n"
                                              "        return self.ln2(x + self.drop(self.ff(x)))\n"),),
         "post-norm", "block-post-norm"),
    Edit("block_mask_dropped", BLOCK, (("attn_mask=attn_mask, ", ""),), "attn_mask not passed on",
         "block-mask-not-passed"),
    Edit("batch_first_missing", BLOCK, ((", batch_first=True", ""),), "nn.MultiheadAttention without batch_first",
         "block-batch-first"),
    Edit("dropout_on_the_stream", BLOCK, ((FF_RESIDUAL, "return self.drop(x + self.ff(self.ln2(x)))"),),
         "dropout on the residual stream itself", "block-dropout"),
    Edit("dropout_always_on", BLOCK, (("x = x + self.drop(attended)", "x = x + F.dropout(attended, 0.1, training=True)"),),
         "functional dropout that stays on in eval mode", "block-dropout"),
    # TinyGPT
    Edit("blocks_without_mask", GPT, (("x = block(x, mask)", "x = block(x, None)"),), "no mask given to the blocks",
         "gpt-mask"),
    Edit("head_not_tied", GPT, ((TIE, ""),), "a head of its own", "gpt-head-not-tied"),
    Edit("tied_head_with_bias", GPT, (("vocab_size, bias=False)", "vocab_size)"),), "a tied head that keeps a bias",
         "gpt-head-bias"),
    Edit("embeddings_scaled", GPT, (("self.tok_emb(idx) +", "self.tok_emb(idx) * math.sqrt(self.tok_emb.embedding_dim) +"),),
         "token embeddings times sqrt(d_model)", "gpt-embedding-scale"),
    Edit("no_final_norm", GPT, (("self.head(self.ln_f(x))", "self.head(x)"),), "no final LayerNorm",
         "gpt-no-final-norm"),
    Edit("blocks_in_a_list", GPT, (("nn.ModuleList([", "list(["),), "blocks in a Python list: unregistered",
         "gpt-blocks"),
    Edit("no_length_check", GPT, ((LENGTH_CHECK, ""),), "no ValueError beyond block_size", "gpt-too-long"),
    # lm_loss
    Edit("loss_summed", LOSS, (("targets.reshape(-1))", 'targets.reshape(-1), reduction="sum")'),),
         "sum instead of mean", "loss-sum"),
    Edit("softmax_before_loss", LOSS, (("F.cross_entropy(logits.reshape", "F.cross_entropy(torch.softmax(logits, dim=-1).reshape"),),
         "softmax before cross-entropy", "loss-softmax-first"),
    Edit("loss_as_float", LOSS, ((CROSS_ENTROPY, CROSS_ENTROPY + ".item()"),), "the loss as a Python float",
         "loss-no-gradient"),
    # train_lm
    Edit("adam", TRAIN, (("torch.optim.AdamW(", "torch.optim.Adam("),), "Adam instead of AdamW", "adam-not-adamw"),
    Edit("no_train_mode", TRAIN, (("        model.train()\n", ""),), "never back to training mode", "no-train-mode"),
    Edit("validated_on_train", TRAIN, (("estimate_loss(model, val_data)", "estimate_loss(model, train_data)"),),
         "validation loss measured on the training text", "validates-on-train"),
    Edit("seed_ignored", TRAIN, ((GENERATOR, "generator = torch.Generator().manual_seed(0)"),), "seed ignored",
         "seed-ignored"),
    Edit("history_outside", TRAIN, (("def train_lm(", 'HISTORY = {"step": [], "train_loss": [], "val_loss": []}\n\n\ndef train_lm('),
                                    ('    history = {"step": [], "train_loss": [], "val_loss": []}\n', "    history = HISTORY\n")),
         "one history dict made once, every run appends to it", "state-between-calls"),
    # next_token_probs
    Edit("temperature_multiplied", PROBS, (("logits / temperature", "logits * temperature"),),
         "logits times the temperature", "temperature-multiplied"),
    Edit("top_k_after_softmax", PROBS, (("    logits = logits / temperature\n" + "    if top_k is not None:\n" + TOP_K
                                         + "    return torch.softmax(logits, dim=-1)\n",
                                         "    probs = torch.softmax(logits / temperature, dim=-1)\n"
                                         "    if top_k is not None:\n"
                                         "        kth = torch.topk(probs, min(top_k, probs.shape[-1]), dim=-1).values[..., -1:]\n"
                                         "        probs = probs.masked_fill(probs < kth, 0.0)\n"
                                         "    return probs\n"),),
         "top-k applied after the softmax, not renormalised", "top-k-not-renormalised"),
    Edit("top_k_beyond_vocabulary", PROBS, (("min(top_k, logits.shape[-1])", "top_k"),), "torch.topk with k > V",
         "top-k-too-large"),
    # generate
    Edit("no_cropping", GENERATE, ((LAST_LOGITS, "logits = model(idx)[:, -1, :]"),), "the context never cropped",
         "generate-no-crop"),
    Edit("first_position", GENERATE, (("[:, -1, :]", "[:, 0, :]"),), "the logits of position 0",
         "generate-position-0"),
    Edit("argmax_when_sampling", GENERATE, ((SAMPLE, "next_ids = next_token_probs(logits, temperature, top_k).argmax(dim=-1, keepdim=True)"),),
         "argmax even when sampling", "sampling-argmax"),
    Edit("new_tokens_only", GENERATE, (("    return idx\n", "    return idx[:, -max_new_tokens:]\n"),),
         "only the new ids returned", "generate-new-only"),
    Edit("gradients_on", GENERATE, (("with torch.no_grad():", "if True:"),), "generation with gradients on",
         "generate-grad"),
    # held out: written after the catalogue and the mutants above were settled, as tests of the diagnoses
    Edit("boolean_indexing", SOFTMAX, (("    filled = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)",
                                        "    filled = scores.clone()\n    filled[~allowed] = torch.finfo(scores.dtype).min"),),
         "blocked scores set by boolean indexing: the mask must have the scores' shape", "mask-broadcast"),
    Edit("entropy_over_queries", ENTROPY, (("sum(dim=-1)", "sum(dim=-2)"),), "entropy summed over the queries",
         "entropy-formula"),
    Edit("jacobian_norm_squared", SATURATION, (("torch.linalg.matrix_norm(jacobians).mean()",
                                                "torch.linalg.matrix_norm(jacobians).pow(2).mean()"),),
         "the squared Frobenius norm", "jacobian-norm"),
    Edit("dependency_without_sqrt", DEPENDENCY, ((".sum(dim=(1, 3)).sqrt()", ".sum(dim=(1, 3))"),),
         "squared norms", "dependency-values"),
    Edit("mask_on_default_device", MASK, ((", device=device)", ")"),), "the device argument ignored", "mask-device"),
    Edit("relu_feed_forward", BLOCK, (("nn.GELU()", "nn.ReLU()"),), "ReLU instead of GELU", "block-formula"),
    Edit("attention_with_own_dropout", BLOCK, (("num_heads, batch_first=True)", "num_heads, dropout=dropout, batch_first=True)"),),
         "dropout inside nn.MultiheadAttention too", "block-dropout"),
    Edit("one_block_repeated", GPT, (("nn.ModuleList([DecoderBlock(d_model, num_heads, d_ff, dropout) for _ in range(num_layers)])",
                                      "nn.ModuleList([DecoderBlock(d_model, num_heads, d_ff, dropout)] * num_layers)"),),
         "the same block num_layers times", "gpt-blocks"),
    Edit("no_positions", GPT, ((EMBED, "x = self.tok_emb(idx)"),), "no position embeddings", "gpt-embeddings"),
    Edit("loss_without_flattening", LOSS, ((CROSS_ENTROPY, "return F.cross_entropy(logits, targets)"),),
         "(B, T, V) logits given as they are", "loss-values"),
    Edit("not_evaluated_after_the_last_step", TRAIN, ((" or step == steps", ""),), "no evaluation after the last step",
         "history-steps"),
    Edit("top_k_plus_one", PROBS, (("min(top_k, logits.shape[-1])", "min(top_k + 1, logits.shape[-1])"),),
         "one logit too many kept", "top-k-values"),
    Edit("sampling_without_generator", GENERATE, ((", generator=generator)", ")"),), "the global random generator",
         "sampling-generator"),
    Edit("temperature_ignored", GENERATE, (("next_token_probs(logits, temperature, top_k)", "next_token_probs(logits, 1.0, top_k)"),),
         "sampling at temperature 1 whatever is asked", "sampling-distribution"),
)

ALTERNATIVES = (
    Edit("masked_softmax_with_where", SOFTMAX, ((WEIGHTS, "return torch.where(allowed, torch.softmax(filled, dim=-1), 0.0)"),),
         "torch.where instead of multiplying by the mask"),
    Edit("masked_softmax_safe_inf", SOFTMAX, ((SOFTMAX_BODY, "    allowed = torch.as_tensor(mask).bool().to(scores.device)\n"
                                                              "    any_allowed = allowed.any(dim=-1, keepdim=True)\n"
                                                              "    filled = scores.masked_fill(~allowed, float('-inf')).masked_fill(~any_allowed, 0.0)\n"
                                                              "    return torch.softmax(filled, dim=-1) * allowed\n"),),
         "-inf fill, rows with nothing allowed set to 0 before the softmax"),
    Edit("entropy_with_clamp", ENTROPY, ((XLOGY, "return -(weights * torch.log(weights.clamp_min(1e-30))).sum(dim=-1)"),),
         "log of the weights clamped away from 0"),
    Edit("saturation_closed_form", SATURATION, (("torch.linalg.matrix_norm(jacobians).mean().item()",
                                                 "(p.pow(2).sum(-1) - 2 * p.pow(3).sum(-1) + p.pow(2).sum(-1) ** 2)"
                                                 ".sqrt().mean().item()"),),
         "the Frobenius norm's closed form"),
    Edit("dependency_with_jacrev", DEPENDENCY, ((DEPENDENCY_BODY, "    jacobian = torch.func.jacrev(fn)(x.detach())\n"
                                                                  "    return torch.linalg.vector_norm(jacobian, dim=(1, 3))\n"),),
         "torch.func.jacrev and a vector norm over the feature dimensions"),
    Edit("float_causal_mask", MASK, ((TRIU, "return nn.Transformer.generate_square_subsequent_mask(T, device=device)"),),
         "PyTorch's float mask, 0 and -inf"),
    Edit("mask_by_comparison", MASK, ((TRIU, "positions = torch.arange(T, device=device)\n"
                                             "    return positions[None, :] > positions[:, None]"),),
         "key position greater than query position"),
    Edit("examples_by_stacking", EXAMPLES, (("    indices = torch.as_tensor(starts)[:, None] + torch.arange(block_size)  # (B, T)\n"
                                             "    return data[indices], data[indices + 1]\n",
                                             "    x = torch.stack([data[s : s + block_size] for s in starts])\n"
                                             "    y = torch.stack([data[s + 1 : s + block_size + 1] for s in starts])\n"
                                             "    return x, y\n"),),
         "one window at a time"),
    Edit("block_keeps_weights", BLOCK, ((ATTEND, "attended = self.attn(h, h, h, attn_mask=attn_mask)[0]"),),
         "need_weights left at its default"),
    Edit("block_layers_in_another_order", BLOCK, (("        self.ln1 = nn.LayerNorm(d_model)\n", ""),
                                                  ("        self.drop = nn.Dropout(dropout)\n",
                                                   "        self.drop = nn.Dropout(dropout)\n        self.ln1 = nn.LayerNorm(d_model)\n")),
         "ln1 created last"),
    Edit("tied_the_other_way", GPT, ((TIE, "        self.tok_emb.weight = self.head.weight\n"),),
         "the embedding tied to the head"),
    Edit("positions_as_buffer", GPT, ((EMBED, "x = self.tok_emb(idx) + self.pos_emb.weight[:T]"),),
         "the first T rows of the position table"),
    Edit("loss_with_classes_in_dim_1", LOSS, ((CROSS_ENTROPY, "return F.cross_entropy(logits.transpose(1, 2), targets)"),),
         "(B, V, T) logits"),
    Edit("zero_grad_first", TRAIN, (("        loss = lm_loss(model(x.to(device)), y.to(device))\n        optimizer.zero_grad()\n",
                                     "        optimizer.zero_grad()\n        loss = lm_loss(model(x.to(device)), y.to(device))\n"),),
         "gradients zeroed before the forward pass"),
    Edit("probs_by_sorting", PROBS, ((TOP_K, "        k = min(top_k, logits.shape[-1])\n"
                                             "        kth = logits.sort(dim=-1, descending=True).values[..., k - 1 : k]\n"
                                             "        logits = torch.where(logits < kth, float(\"-inf\"), logits)\n"),),
         "the k-th largest by sorting"),
    Edit("generate_in_inference_mode", GENERATE, (("with torch.no_grad():", "with torch.inference_mode():"),),
         "torch.inference_mode"),
    Edit("generate_collects_ids", GENERATE, (("            idx = torch.cat([idx, next_ids], dim=1)\n    return idx\n",
                                              "            idx = torch.cat([idx, next_ids.view(-1, 1)], dim=1)\n    return idx.clone()\n"),),
         "ids reshaped and the result copied"),
)

# ---------------------------------------------------------------------------------------------------------------------
# Fresh held-out edits, written after the rules were frozen (commit 3da4907), without reading the grader's rules.
# They are kept apart from MUTANTS and ALTERNATIVES so that their figures stay visible on their own.
#
# The mistake names these edits introduced are now in the catalogue (MISTAKES in checks.py, with their advice):
# mask-after-softmax, softmax-overflow, modifies-argument, entropy-zero-rows, attention-maps-accumulate,
# gpt-position-table, loss-ignore-index, loss-nll-on-logits, same-batch-every-step, optimizer-recreated,
# learning-rate-ignored, sampling-default-generator.
FRESH_MUTANTS = (
    # masked_softmax
    Edit("softmax_then_renormalised", SOFTMAX,
         ((SOFTMAX_BODY, "    " + ALLOWED + "\n"
                         "    weights = torch.softmax(scores, dim=-1) * allowed\n"
                         "    return weights / weights.sum(dim=-1, keepdim=True)\n"),),
         "plain softmax, blocked keys zeroed afterwards and the row renormalised", "mask-after-softmax"),
    Edit("softmax_without_max_shift", SOFTMAX,
         (("return torch.softmax(scores, dim=-1)", "return scores.exp() / scores.exp().sum(dim=-1, keepdim=True)"),
          (WEIGHTS, "return filled.exp() / filled.exp().sum(dim=-1, keepdim=True) * allowed")),
         "softmax written as exp(x) / exp(x).sum(-1), without subtracting the row's maximum", "softmax-overflow"),
    Edit("scores_filled_in_place", SOFTMAX, (("filled = scores.masked_fill(", "filled = scores.masked_fill_("),),
         "the caller's scores filled in place (masked_fill_)", "modifies-argument"),
    Edit("weights_times_raw_mask", SOFTMAX, ((WEIGHTS, "return torch.softmax(filled, dim=-1) * mask"),),
         "weights multiplied by the mask as given: a float mask of another dtype changes the weights' dtype",
         "masked-softmax-dtype"),
    # attention_entropy
    Edit("entropy_normalised_by_log_keys", ENTROPY,
         ((XLOGY, "return -torch.special.xlogy(weights, weights).sum(dim=-1) / math.log(weights.shape[-1])"),),
         "entropy divided by ln T_k (normalised to [0, 1])", "entropy-formula"),
    Edit("entropy_from_categorical", ENTROPY, ((XLOGY, "return torch.distributions.Categorical(probs=weights).entropy()"),),
         "torch.distributions.Categorical(probs=weights).entropy(): rejects all-zero rows", "entropy-zero-rows"),
    # saturation_stats
    Edit("stats_as_tensors", SATURATION, ((".mean().item()", ".mean()"),),
         "each statistic returned as a 0-d tensor instead of a Python float", "saturation-keys"),
    Edit("max_weight_over_rows", SATURATION, (("p.max(dim=-1).values", "p.max(dim=0).values"),),
         "the largest weight of each key over the rows (max over dim 0), averaged", "saturation-values"),
    Edit("jacobian_with_torch_diag", SATURATION, (("torch.diag_embed(p)", "torch.diag(p)"),),
         "torch.diag on the (rows, T_k) matrix: its diagonal, not one diagonal matrix per row", "saturation-values"),
    # dependency_matrix
    Edit("dependency_row_gradients_summed", DEPENDENCY,
         ((DEPENDENCY_BODY, "    x0 = x.detach().clone().requires_grad_()\n"
                            "    out = fn(x0)\n"
                            "    rows = [torch.autograd.grad(out[i].sum(), x0, retain_graph=True)[0].norm(dim=-1)\n"
                            "            for i in range(len(out))]\n"
                            "    return torch.stack(rows)\n"),),
         "one gradient per output row, of the row's sum over its features: not the Frobenius norm of the block",
         "dependency-values"),
    # causal_mask
    Edit("float_mask_zero_times_inf", MASK,
         ((TRIU, 'return torch.triu(torch.ones(T, T, device=device), diagonal=1) * float("-inf")'),),
         "0/1 upper triangle times -inf: 0 * -inf is NaN on and below the diagonal", "causal-mask-values"),
    # make_examples
    Edit("targets_rolled", EXAMPLES, (("return data[indices], data[indices + 1]",
                                       "x = data[indices]\n    return x, torch.roll(x, -1, dims=1)"),),
         "targets made by rolling x: the last target wraps round to the window's first id", "examples-windows"),
    Edit("windows_transposed", EXAMPLES, (("torch.as_tensor(starts)[:, None] + torch.arange(block_size)",
                                           "torch.as_tensor(starts) + torch.arange(block_size)[:, None]"),),
         "the new axis on the positions instead of the starts: (T, B) windows", "examples-windows"),
    # DecoderBlock
    Edit("feed_forward_normalised_by_ln1", BLOCK, ((FF_RESIDUAL, "return x + self.drop(self.ff(self.ln1(x)))"),),
         "the feed-forward sublayer normalised with ln1 (ln2 unused)", "block-formula"),
    Edit("feed_forward_reads_block_input", BLOCK,
         (("        x = x + self.drop(attended)\n        " + FF_RESIDUAL,
           "        h = x + self.drop(attended)\n        return h + self.drop(self.ff(self.ln2(x)))"),),
         "the feed-forward reads the block's input x instead of the stream after attention", "block-formula"),
    Edit("dropout_on_attention_input", BLOCK, (("h = self.ln1(x)", "h = self.drop(self.ln1(x))"),
                                               ("x = x + self.drop(attended)", "x = x + attended")),
         "dropout on the attention's input instead of its output", "block-dropout"),
    Edit("attention_maps_kept", BLOCK,
         (("        self.drop = nn.Dropout(dropout)\n", "        self.drop = nn.Dropout(dropout)\n        self.maps = []\n"),
          (ATTEND, "attended, weights = self.attn(h, h, h, attn_mask=attn_mask)\n        self.maps.append(weights)")),
         "every forward appends its attention weights (with their graph) to a list on the module",
         "attention-maps-accumulate"),
    # TinyGPT
    Edit("position_table_sized_by_vocabulary", GPT, (("self.pos_emb = nn.Embedding(block_size, d_model)",
                                                      "self.pos_emb = nn.Embedding(vocab_size, d_model)"),),
         "a position table of vocab_size rows instead of block_size", "gpt-position-table"),
    Edit("positions_on_the_cpu", GPT, (("torch.arange(T, device=idx.device)", "torch.arange(T)"),),
         "positions created on the CPU whatever the device of idx", "gpt-embeddings"),
    Edit("positions_from_one", GPT, (("torch.arange(T, device=idx.device)", "torch.arange(1, T + 1, device=idx.device)"),),
         "positions 1..T instead of 0..T-1", "gpt-embeddings"),
    Edit("length_check_off_by_one", GPT, (("if T > self.block_size:", "if T >= self.block_size:"),),
         "ValueError already at T == block_size", "gpt-too-long"),
    Edit("blocks_not_chained", GPT, (("            x = block(x, mask)\n        return self.head(self.ln_f(x))",
                                      "            out = block(x, mask)\n        return self.head(self.ln_f(out))"),),
         "every block reads the embeddings; only the last block's output is kept", "gpt-blocks"),
    # lm_loss
    Edit("loss_ignores_id_0", LOSS, (("targets.reshape(-1))", "targets.reshape(-1), ignore_index=0)"),),
         "F.cross_entropy(..., ignore_index=0): targets with id 0 left out of the mean", "loss-ignore-index"),
    Edit("nll_loss_on_logits", LOSS, (("F.cross_entropy(", "F.nll_loss("),),
         "F.nll_loss given the raw logits (no log_softmax)", "loss-nll-on-logits"),
    # train_lm
    Edit("generator_reseeded_every_step", TRAIN, (("    " + GENERATOR + "\n", ""),
                                                  ("        model.train()\n", "        model.train()\n        " + GENERATOR + "\n")),
         "the seeded generator created inside the loop: the same batch at every step", "same-batch-every-step"),
    Edit("steps_counted_from_zero", TRAIN, (("range(1, steps + 1)", "range(steps)"),),
         "steps 0 .. steps-1: evaluated at step 0 and never after the last step", "history-steps"),
    Edit("optimizer_created_every_step", TRAIN,
         (("    optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)\n", ""),
          ("        model.train()\n", "        model.train()\n"
                                    "        optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01)\n")),
         "a new AdamW at every step: its moments are reset", "optimizer-recreated"),
    Edit("learning_rate_hard_coded", TRAIN, (("lr=learning_rate", "lr=3e-3"),),
         "the learning_rate argument ignored, lr=3e-3 hard-coded", "learning-rate-ignored"),
    # next_token_probs
    Edit("temperature_divided_in_place", PROBS, (("logits = logits / temperature", "logits /= temperature"),),
         "the caller's logits divided by the temperature in place", "modifies-argument"),
    Edit("top_k_drops_the_kth", PROBS, (("logits < kth", "logits <= kth"),),
         "logits at or below the k-th largest removed: k-1 kept (none for top_k=1)", "top-k-values"),
    # generate
    Edit("context_cropped_to_first_ids", GENERATE, (("idx[:, -model.block_size:]", "idx[:, :model.block_size]"),),
         "the context cropped to its FIRST block_size ids", "generate-no-crop"),
    Edit("fresh_generator_by_default", GENERATE,
         (("    with torch.no_grad():\n", "    if generator is None:\n        generator = torch.Generator()\n"
                                           "    with torch.no_grad():\n"),),
         "a new unseeded torch.Generator() when none is given: every call samples the same ids",
         "sampling-default-generator"),
)

FRESH_ALTERNATIVES = (
    Edit("masked_softmax_where_before", SOFTMAX,
         (("filled = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)",
           "filled = torch.where(allowed, scores, torch.finfo(scores.dtype).min)"),),
         "torch.where to fill the blocked scores before the softmax"),
    Edit("entropy_with_entr", ENTROPY, ((XLOGY, "return torch.special.entr(weights).sum(dim=-1)"),),
         "torch.special.entr, -p ln p with 0 at 0"),
    Edit("saturation_with_vector_norm", SATURATION,
         (("p.max(dim=-1).values", "p.amax(dim=-1)"),
          ("torch.linalg.matrix_norm(jacobians)", "torch.linalg.vector_norm(jacobians, dim=(-2, -1))")),
         "amax, and the Frobenius norm as a vector norm over both matrix dimensions"),
    Edit("dependency_permuted_matrix_norm", DEPENDENCY,
         (("return jacobian.pow(2).sum(dim=(1, 3)).sqrt()",
           "return torch.linalg.matrix_norm(jacobian.permute(0, 2, 1, 3))"),),
         "Jacobian permuted to (T, T, d_out, d_in), then matrix_norm"),
    Edit("causal_mask_negated_tril", MASK, ((TRIU, "return ~torch.tril(torch.ones(T, T, dtype=torch.bool, device=device))"),),
         "the negation of assignment 1's may-attend mask"),
    Edit("examples_by_unfold", EXAMPLES,
         (("    indices = torch.as_tensor(starts)[:, None] + torch.arange(block_size)  # (B, T)\n"
           "    return data[indices], data[indices + 1]\n",
           "    windows = data.unfold(0, block_size + 1, 1)[torch.as_tensor(starts)]  # (B, T + 1)\n"
           "    return windows[:, :-1], windows[:, 1:]\n"),),
         "windows of block_size + 1 ids by unfold, split into x and y"),
    Edit("block_functional_dropout", BLOCK,
         (("self.drop(attended)", "F.dropout(attended, self.drop.p, self.training)"),
          ("self.drop(self.ff(self.ln2(x)))", "F.dropout(self.ff(self.ln2(x)), self.drop.p, self.training)")),
         "F.dropout(x, self.drop.p, self.training) in place of self.drop(x)"),
    Edit("block_functional_layer_norm", BLOCK,
         (("h = self.ln1(x)", "h = F.layer_norm(x, (x.shape[-1],), self.ln1.weight, self.ln1.bias, self.ln1.eps)"),),
         "F.layer_norm with ln1's parameters"),
    Edit("gpt_mask_as_buffer", GPT,
         ((TIE, TIE + "        self.register_buffer(\"mask\", causal_mask(block_size), persistent=False)\n"),
          ("mask = causal_mask(T, idx.device)", "mask = self.mask[:T, :T]")),
         "the causal mask built once as a non-persistent buffer and sliced to T"),
    Edit("loss_nll_of_log_softmax", LOSS,
         ((CROSS_ENTROPY, "return F.nll_loss(F.log_softmax(logits, dim=-1).reshape(-1, logits.shape[-1]), "
                          "targets.reshape(-1))"),),
         "F.nll_loss of F.log_softmax"),
    Edit("adamw_default_weight_decay", TRAIN, (("lr=learning_rate, weight_decay=0.01)", "lr=learning_rate)"),),
         "AdamW's default weight decay, which is 0.01"),
    Edit("top_k_before_temperature", PROBS, (("    logits = logits / temperature\n", ""),
                                             ("return torch.softmax(logits, dim=-1)",
                                              "return torch.softmax(logits / temperature, dim=-1)")),
         "top-k chosen on the raw logits, divided by the temperature afterwards"),
)

# ---------------------------------------------------------------------------------------------------------------------
# Held-out edits, second set: written after the rules were frozen (commit 1dca0df), without reading the grader's
# rules. The rules were re-tuned on FRESH_MUTANTS; this set measures them again on mistakes they have never seen, and
# is kept apart from every tuple above so that its figures stay visible on their own.
#
# New mistake names (not yet in MISTAKES of checks.py):
# loss-shifted-again: make_examples already shifted the targets: compare logits[:, t] with targets[:, t]; shifting again inside lm_loss (logits[:, :-1] against targets[:, 1:]) trains the model to predict two characters ahead.
# zero-grad-misplaced: Call optimizer.zero_grad() before loss.backward() (or after optimizer.step()), never between backward and step: the step then finds no gradient and the model never learns.
# train-loss-of-batch: history["train_loss"] is estimate_loss(model, train_data), on the same fixed evaluation windows as the validation loss, in eval mode: not the loss of the last training batch (one noisy batch, measured before the step, with dropout on).
# generate-count: Append exactly max_new_tokens ids: loop range(max_new_tokens) (max_new_tokens times), not range(1, max_new_tokens) (one fewer).
# default-changed: Keep the defaults of the given signatures (TinyGPT's dropout=0.1): code that builds the model without passing an argument relies on them.
HELD_OUT_MUTANTS = (
    # masked_softmax
    Edit("fill_float32_min", SOFTMAX, ((FILL, "torch.finfo(torch.float32).min"),),
         "fill with float32's most negative value whatever the scores' dtype: float16 cannot hold it", "fill-value"),
    Edit("scores_multiplied_by_mask", SOFTMAX,
         (("filled = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)", "filled = scores * allowed"),),
         "blocked scores multiplied by the mask (set to 0, not very negative) before the softmax",
         "masked-softmax-values"),
    Edit("allowed_cached_by_shape", SOFTMAX,
         (("def masked_softmax(", "_ALLOWED_BY_SHAPE = {}\n\n\ndef masked_softmax("),
          (ALLOWED, "key = tuple(torch.as_tensor(mask).shape)\n"
                    "    if key not in _ALLOWED_BY_SHAPE:  # build each mask once\n"
                    "        _ALLOWED_BY_SHAPE[key] = torch.as_tensor(mask, device=scores.device) != 0\n"
                    "    allowed = _ALLOWED_BY_SHAPE[key]")),
         "the bool mask cached by shape in a module-level dict: a later mask of the same shape gets the first one's",
         "state-between-calls"),
    # attention_entropy
    Edit("entropy_sign_flipped", ENTROPY, ((XLOGY, "return torch.special.xlogy(weights, weights).sum(dim=-1)"),),
         "sum of p ln p without the minus sign: negative entropies", "entropy-formula"),
    Edit("entropy_keepdim", ENTROPY, (("sum(dim=-1)", "sum(dim=-1, keepdim=True)"),),
         "keepdim=True: entropies of shape (..., T_q, 1) instead of (..., T_q)", "entropy-formula"),
    # saturation_stats
    Edit("saturation_rows_of_query_length", SATURATION,
         (("p = weights.reshape(-1, weights.shape[-1])", "p = weights.reshape(-1, weights.shape[-2])"),),
         "rows reshaped to length T_q instead of T_k: right only for square weights", "saturation-values"),
    Edit("jacobian_outer_broadcast", SATURATION,
         (("p.unsqueeze(-1) * p.unsqueeze(-2)", "p.unsqueeze(-1) * p.unsqueeze(-1)"),),
         "p.unsqueeze(-1) twice: p_i^2 broadcast along each row instead of the outer product p p^T",
         "saturation-values"),
    # dependency_matrix
    Edit("dependency_sums_input_dims", DEPENDENCY, (("sum(dim=(1, 3))", "sum(dim=(2, 3))"),),
         "Jacobian read as (T, T, d_out, d_in): squares summed over the input position and features",
         "dependency-values"),
    # causal_mask
    Edit("float_mask_minus_1e9", MASK,
         ((TRIU, "return torch.triu(torch.full((T, T), -1e9, device=device), diagonal=1)"),),
         "a float mask with -1e9 above the diagonal instead of -inf", "causal-mask-values"),
    # make_examples
    Edit("windows_from_one", EXAMPLES, (("torch.arange(block_size)", "torch.arange(1, block_size + 1)"),),
         "window positions 1..T: x starts one id after s, y two", "examples-windows"),
    Edit("windows_at_batch_index", EXAMPLES,
         (("    indices = torch.as_tensor(starts)[:, None] + torch.arange(block_size)  # (B, T)\n"
           "    return data[indices], data[indices + 1]\n",
           "    x = torch.stack([data[b : b + block_size] for b in range(len(starts))])\n"
           "    y = torch.stack([data[b + 1 : b + block_size + 1] for b in range(len(starts))])\n"
           "    return x, y\n"),),
         "windows started at the batch index b instead of starts[b]", "examples-windows"),
    # DecoderBlock
    Edit("attention_residual_missing", BLOCK, (("x = x + self.drop(attended)", "x = self.drop(attended)"),),
         "no residual around the attention: the stream is replaced by the attention's output", "block-formula"),
    Edit("keys_values_unnormalised", BLOCK,
         ((ATTEND, "attended, _ = self.attn(h, x, x, attn_mask=attn_mask, need_weights=False)"),),
         "queries from ln1(x) but keys and values from the raw stream x", "block-formula"),
    # TinyGPT
    Edit("final_norm_after_every_block", GPT,
         (("x = block(x, mask)", "x = self.ln_f(block(x, mask))"),
          ("return self.head(self.ln_f(x))", "return self.head(x)")),
         "ln_f applied after every block instead of once before the head", "gpt-forward"),
    Edit("positions_from_token_ids", GPT, ((EMBED, "x = self.tok_emb(idx) + self.pos_emb(idx)"),),
         "the position table indexed by the token ids instead of the positions", "gpt-embeddings"),
    Edit("gpt_dropout_default_zero", GPT, (("dropout: float = 0.1):", "dropout: float = 0.0):"),),
         "TinyGPT's dropout default changed from 0.1 to 0.0", "default-changed"),
    # lm_loss
    Edit("loss_shifted_again", LOSS,
         ((CROSS_ENTROPY, "return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), "
                          "targets[:, 1:].reshape(-1))"),),
         "logits[:, :-1] against targets[:, 1:]: the already shifted targets shifted once more", "loss-shifted-again"),
    # train_lm
    Edit("zero_grad_between_backward_and_step", TRAIN,
         (("        optimizer.zero_grad()\n        loss.backward()\n",
           "        loss.backward()\n        optimizer.zero_grad()\n"),),
         "optimizer.zero_grad() between loss.backward() and optimizer.step(): every step sees no gradient",
         "zero-grad-misplaced"),
    Edit("train_loss_of_last_batch", TRAIN,
         (('history["train_loss"].append(estimate_loss(model, train_data))', 'history["train_loss"].append(loss.item())'),),
         "the last training batch's loss recorded as the training loss", "train-loss-of-batch"),
    # next_token_probs
    Edit("top_k_keeps_only_the_largest", PROBS, ((".values[..., -1:]", ".values[..., :1]"),),
         "the first of torch.topk's values (the largest) taken as the threshold: only the top logit kept",
         "top-k-values"),
    # generate
    Edit("one_new_token_short", GENERATE, (("for _ in range(max_new_tokens):", "for _ in range(1, max_new_tokens):"),),
         "range(1, max_new_tokens): one new id fewer than asked", "generate-count"),
    Edit("context_one_short", GENERATE, (("idx[:, -model.block_size:]", "idx[:, -(model.block_size - 1):]"),),
         "the context cropped to block_size - 1 ids (all of it when block_size is 1)", "generate-no-crop"),
)

HELD_OUT_ALTERNATIVES = (
    Edit("masked_softmax_none_as_all_allowed", SOFTMAX,
         (("        return torch.softmax(scores, dim=-1)\n",
           "        mask = torch.ones_like(scores, dtype=torch.bool)  # every key allowed: the same path as a mask\n"),),
         "no mask turned into an all-True mask, then the masked path"),
    Edit("saturation_einsum_outer", SATURATION,
         (("p.unsqueeze(-1) * p.unsqueeze(-2)", 'torch.einsum("ri,rj->rij", p, p)'),),
         "the outer product p p^T of each row by einsum"),
    Edit("dependency_row_by_row", DEPENDENCY,
         ((DEPENDENCY_BODY,
           "    x0 = x.detach().clone().requires_grad_()\n"
           "    with torch.enable_grad():  # also when called under torch.no_grad()\n"
           "        out = fn(x0)  # (T, d_out)\n"
           "        squares = torch.zeros(out.shape[0], x0.shape[0], dtype=x0.dtype, device=x0.device)\n"
           "        if out.requires_grad:  # else fn does not depend on x at all\n"
           "            for i in range(out.shape[0]):\n"
           "                for k in range(out.shape[1]):\n"
           "                    (g,) = torch.autograd.grad(out[i, k], x0, retain_graph=True, allow_unused=True)\n"
           "                    if g is not None:\n"
           "                        squares[i] += g.pow(2).sum(dim=-1)\n"
           "    return squares.sqrt()\n"),),
         "one gradient per output entry, squares summed per input row"),
    Edit("causal_mask_triu_of_minus_inf", MASK,
         ((TRIU, 'return torch.triu(torch.full((T, T), float("-inf"), device=device), diagonal=1)'),),
         "a float mask: -inf above the diagonal, 0 on and below it"),
    Edit("block_ff_by_its_layers", BLOCK,
         (("self.drop(self.ff(self.ln2(x)))", "self.drop(self.ff[2](F.gelu(self.ff[0](self.ln2(x)))))"),),
         "the feed-forward applied layer by layer with F.gelu"),
    Edit("positions_expanded", GPT,
         ((EMBED, "positions = torch.arange(T, device=idx.device).unsqueeze(0).expand(idx.shape[0], T)  # (B, T)\n"
                  "        x = self.tok_emb(idx) + self.pos_emb(positions)"),),
         "one row of positions per sequence, expanded to (B, T)"),
    Edit("loss_flattened", LOSS, ((CROSS_ENTROPY, "return F.cross_entropy(logits.flatten(0, 1), targets.flatten())"),),
         "flatten instead of reshape"),
    Edit("train_model_zero_grad", TRAIN, (("        optimizer.zero_grad()\n", "        model.zero_grad()\n"),),
         "model.zero_grad(): the optimizer holds every parameter of the model"),
    Edit("generate_crop_with_max", GENERATE,
         (("idx[:, -model.block_size:]", "idx[:, max(0, idx.shape[1] - model.block_size):]"),),
         "the crop's start computed explicitly"),
)
