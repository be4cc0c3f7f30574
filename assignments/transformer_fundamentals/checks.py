"""Checks of the Transformer Architecture Fundamentals assignment, and its catalogue of mistakes.

One `Check` per hidden test cell of the notebook (same id). Each expectation
names a probe output (see probes.py beside this file) and the mistake that
most often breaks it; clues are outputs worth nothing that tell mistakes
apart; a diagnosis names the mistake behind a pattern of wrong and right
outputs. A failing check reports the most specific diagnosis that holds
(course.checks.diagnose).
"""

from course.checks import Check, Clue, Diagnosis, Expect

MISTAKES = {
    # SimpleTokenizer
    "clean-case": "Lower-case the text first (text.lower()).",
    "clean-punctuation": "Drop punctuation: keep only runs of letters and digits (joined by inner apostrophes) and "
                         "join them with single spaces.",
    "clean-underscores": "Treat underscores as separators: \\w matches '_', so use [^\\W_] for 'a letter or digit'.",
    "clean-rule": "Lower-case; keep runs of letters/digits joined by inner apostrophes; drop everything else "
                  "(underscores, hyphens, edge apostrophes); join words with single spaces.",
    "specials-first": "Ids 0, 1, 2 are <PAD>, <UNK>, <CLS>, in that order; the words come after them.",
    "vocab-size": "The vocabulary holds vocab_size entries in all, the 3 special tokens included "
                  "(most_common(vocab_size - 3)).",
    "vocab-order": "Words by falling frequency, ties in order of first appearance (Counter.most_common keeps that "
                   "order). Count the words of self.clean_text(text).split().",
    "inverse-vocab": "Fill self.inverse_vocab so that it maps every id back to its word.",
    "pad-to-max-length": "Pad with the <PAD> id (0) up to exactly max_length.",
    "truncate-after-cls": "Put <CLS> first, then truncate: the result is at most max_length ids, <CLS> included.",
    "unknown-id": "Words not in self.vocab become the <UNK> id (1), not <PAD>.",
    "tokenize-without-clean": "Clean the text with self.clean_text before splitting it into words.",
    "tokenize-rule": "<CLS> first, then one id per word, then <PAD> (0) up to exactly max_length.",
    "decode-specials": "Drop <PAD> and <CLS>, map the other ids to words (keep <UNK> as '<UNK>'), join with single "
                       "spaces.",
    "decode-tensor-ids": "Accept a 1-D tensor too: convert each id with int(i) before looking it up.",
    # embeddings
    "embedding-layers": "Create one nn.Embedding(vocab_size, d_model) named self.embedding.",
    "embedding-scale": "Look up the ids and multiply by sqrt(d_model), once: not by d_model, not unscaled.",
    "pe-buffer": "The table is fixed: register it with self.register_buffer('pe', ...), not as an nn.Parameter.",
    "pe-sin-cos-swapped": "Sine at even indices (0::2), cosine at odd ones (1::2).",
    "pe-not-interleaved": "Interleave: columns 2i and 2i+1 hold sin and cos of the same frequency; don't put all the "
                          "sines first and the cosines after.",
    "pe-frequency": "Both dimensions of a pair (2i, 2i+1) share the frequency 1 / 10000^(2i / d_model): the exponent "
                    "is 2i / d_model for pair i, not i / d_model for column i.",
    "pe-forward": "forward adds pe[:seq_len] along the sequence axis (axis 1 of (batch, seq, d_model)) and returns "
                  "the sum.",
    "pe-dtype": "Build the table in float32 (torch.zeros' default): a float64 table turns float32 activations into "
                "float64, which the rest of the model cannot mix with its float32 weights.",
    "embeddings-order": "Apply self.token_embedding, then self.pos_encoding, then self.dropout.",
    "embeddings-dropout": "Apply self.dropout once, to the sum of token and positional embeddings.",
    # attention
    "softmax-axis": "Each query's weights must sum to 1 over the keys: softmax over the last axis (dim=-1), not over "
                    "the queries.",
    "attention-scale": "Scale the scores by 1 / sqrt(d_k) with d_k = Q.size(-1), the per-head size: not by 1 / d_k, "
                       "not by V's size, not unscaled.",
    "transpose-last-axes": "Support any leading dimensions (batch, heads): transpose the last two axes of K only, "
                           "K.transpose(-2, -1).",
    "attention-values": "Compute softmax(Q K^T / sqrt(d_k)) V: the output is the weights times V.",
    "mask-minus-inf": "A query whose keys are all blocked must give finite values: fill blocked scores with a large "
                      "negative number such as -1e9, not -inf (softmax of a row of -inf is NaN).",
    "mask-after-softmax": "Apply the mask to the scores before the softmax, so each row of weights still sums to 1.",
    "mask-polarity": "Mind the polarity: 1 (or True) = may attend, 0 = blocked; fill where mask == 0.",
    "mask-ignored": "Use the mask: scores.masked_fill(mask == 0, -1e9) before the softmax.",
    "mask-bool": "Accept a boolean mask too (True = may attend): test `mask == 0`, which works for both.",
    "mask-broadcast": "A (T_q, T_k) mask must broadcast over the batch; with a causal mask, query i sees keys 0..i only.",
    "dropout-on-weights": "Apply dropout once, to the weights after the softmax (not to the scores, not to the output); "
                          "a dropout module in eval mode changes nothing.",
    # multi-head attention
    "mha-layers": "Create exactly W_q, W_k, W_v, W_o, each nn.Linear(d_model, d_model) with its bias.",
    "mha-weights-shape": "Return the weights of every head, shape (B, num_heads, T, T).",
    "heads-split": "Project Q with W_q, K with W_k, V with W_v, then split heads with view(B, T, num_heads, d_k) "
                   "followed by transpose(1, 2): a view straight to (B, num_heads, T, d_k) mixes positions and heads.",
    "heads-merge": "Merge the heads with transpose(1, 2) and then view/reshape(B, T, d_model): a view of "
                   "(B, num_heads, T, d_k) straight to (B, T, d_model) mixes positions and heads.",
    "output-projection": "Apply W_o once, to the merged heads.",
    "mask-not-passed": "Pass the mask on, unchanged, to the attention.",
    "mha-dropout": "In training mode, pass self.dropout to scaled_dot_product_attention, so it acts once on the "
                   "attention weights; apply no other dropout in this module.",
    # layer norm, feed-forward, block
    "norm-parameters": "Create self.gamma (ones) and self.beta (zeros) as nn.Parameter of size features.",
    "norm-axis": "Normalise each vector over its last axis (dim=-1, keepdim=True): one row's output must not depend on "
                 "the other rows.",
    "variance-unbiased": "Use the biased variance, x.var(-1, unbiased=False), as nn.LayerNorm does.",
    "eps-outside-sqrt": "eps goes inside the square root: (x - mean) / sqrt(var + eps).",
    "gamma-beta": "Scale by gamma and shift by beta after normalising: gamma * x_hat + beta.",
    "in-place-op": "The backward pass must work: compute new tensors (x - mean) instead of changing x in place "
                   "(x.sub_(...), x -= ...), which autograd cannot differentiate.",
    "ffn-layers": "Create linear1 = nn.Linear(d_model, d_ff) and linear2 = nn.Linear(d_ff, d_model).",
    "ffn-activation": "linear1, then ReLU, then linear2: no other activation, and not none.",
    "ffn-dropout": "Apply dropout once, after the ReLU and before linear2.",
    "pre-norm": "The attention sees the block's input x itself: this is a post-norm block, "
                "x = norm1(x + dropout(attn_out)), not x + attn(norm1(x)).",
    "residual-missing": "Add each sublayer's input back: norm1(x + attn_out), then norm2(x + ffn_out).",
    "norms-swapped": "Use norm1 after the attention and norm2 after the feed-forward.",
    "block-order": "Post-norm with residuals: x = norm1(x + dropout(attn_out)), then x = norm2(x + dropout("
                   "feed_forward(x))).",
    "block-dropout": "In training mode, apply self.dropout to each sublayer's output before adding the residual: "
                     "norm1(x + dropout(attn_out)), norm2(x + dropout(ffn_out)); no dropout after the norms.",
    # classifier
    "blocks-not-registered": "Keep the blocks in an nn.ModuleList: a Python list is not registered, so its blocks "
                             "are not trained, moved to the GPU or switched to eval mode.",
    "blocks-shared": "Create num_layers separate TransformerBlock objects: [block] * num_layers repeats one block, so "
                     "the layers share their weights.",
    "attention-maps": "Return a list with one attention map per block.",
    "mask-shape": "Pass the padding mask to the blocks as (B, 1, 1, T), so it blocks padded keys for every query "
                  "and head.",
    "pooling-includes-padding": "Pool over real tokens only: (mask * x).sum(1) / mask.sum(1), not x.mean(1).",
    "final-norm": "Apply ln_f to every token, before pooling.",
    "pooling": "Embed, run every block with the mask, apply ln_f to every token, then take the mean over real "
               "tokens (sum of mask * x over the sequence / number of real tokens), then the classifier.",
    # training
    "global-device": "Move each batch to the device of the model you were given (next(model.parameters()).device), "
                     "not to the notebook's global `device`.",
    "loss-on-probabilities": "nn.CrossEntropyLoss takes raw logits: apply no softmax before it.",
    "train-mode": "Call model.train() at the start of every epoch: evaluate() leaves the model in eval mode.",
    "optimizer": "Use torch.optim.AdamW(model.parameters(), lr=learning_rate, weight_decay=0.01), stepping once per "
                 "batch.",
    "zero-grad": "Call optimizer.zero_grad() before each backward pass: gradients add up otherwise.",
    "loss-average": "train_loss is the mean of the epoch's batch losses.",
    "accuracy-percent": "Accuracies are fractions from 0 to 1, not percentages.",
    "accuracy-per-example": "train_acc counts correct examples over all batches, then divides by the number of "
                            "examples: a mean of per-batch accuracies is wrong when the last batch is smaller.",
    "validation-data": "Validate with evaluate(model, val_loader, criterion) after each epoch, on the validation "
                       "loader.",
    # costs
    "feed-forward-cost": "Two linear layers: n * d_model * d_ff multiply-adds each.",
    "attention-cost": "Four (n, d) x (d, d) projections, 4 * n * d_model**2, plus the scores and the weighted sum, "
                      "n**2 * d_model each.",
    "crossover-boundary": "Set 4*n*d**2 + 2*n**2*d >= 2*n*d*d_ff and divide by 2*n*d: n >= d_ff - 2*d_model. The "
                          "smallest such n, where attention costs at least as much, not strictly more.",
    "crossover-at-least-1": "A sequence has at least one token: return max(1, d_ff - 2*d_model).",
    "crossover-int": "Return an int (a sequence length), not a float.",
}

CHECKS = (
    Check("tokenizer_clean_text", "SimpleTokenizer.clean_text", (
        Expect("case", "clean-case"),
        Expect("punctuation", "clean-punctuation"),
        Expect("underscores", "clean-underscores"),
        Expect("cleaned", "clean-rule"),
    )),
    Check("tokenizer_build_vocab", "SimpleTokenizer.build_vocab", (
        Expect("special_ids", "specials-first"),
        Expect("size_9", "vocab-size"),
        Expect("size_100", "vocab-size"),
        Expect("words_by_id_100", "vocab-order"),
        Expect("words_by_id_9", "vocab-order"),
        Expect("inverse_matches_100", "inverse-vocab"),
        Expect("inverse_matches_9", "inverse-vocab"),
        Expect("words_by_id_other", "vocab-order"),
    ), diagnoses=(
        Diagnosis("state-between-calls", wrong=("words_by_id_other",), right=("words_by_id_100", "words_by_id_9")),
    )),
    Check("tokenizer_tokenize", "SimpleTokenizer.tokenize", (
        Expect("padded", "pad-to-max-length"),
        Expect("truncated", "truncate-after-cls"),
        Expect("unknown_words", "unknown-id"),
        Expect("cleaned_first", "tokenize-without-clean"),
        Expect("short", "tokenize-rule"),
        Expect("exact", "tokenize-rule"),
    )),
    Check("tokenizer_decode", "SimpleTokenizer.decode", (
        Expect("plain", "decode-specials"),
        Expect("with_unknown", "decode-specials"),
        Expect("no_cls", "decode-specials"),
        Expect("tensor_input", "decode-tensor-ids"),
    )),
    Check("token_embedding", "TokenEmbedding", (
        Expect("parameters", "embedding-layers"),
        Expect("output", "embedding-scale"),
    )),
    Check("positional_encoding", "PositionalEncoding", (
        Expect("n_parameters", "pe-buffer"),
        Expect("pe_6", "pe-frequency"),
        Expect("pe_10", "pe-frequency"),
        Expect("forward_6", "pe-forward"),
        Expect("forward_10", "pe-forward"),
        Expect("forward_dtype_6", "pe-dtype"),
    ), clues=(Clue("column_0"), Clue("column_1")), diagnoses=(
        Diagnosis("pe-sin-cos-swapped", wrong=("column_0", "column_1")),
        Diagnosis("pe-not-interleaved", wrong=("column_1",), right=("column_0",)),
    )),
    Check("transformer_embeddings", "TransformerEmbeddings", (
        Expect("eval_output", "embeddings-order"),
        Expect("train_output", "embeddings-dropout"),
    )),
    Check("attention_values", "scaled_dot_product_attention", (
        Expect("weight_sums_over_keys", "softmax-axis"),
        Expect("error_with_heads", "transpose-last-axes"),
        Expect("scale", "attention-scale", atol=1e-3),
        Expect("batched_weights", "attention-scale"),
        Expect("batched_output", "attention-values"),
        Expect("heads_weights", "transpose-last-axes"),
        Expect("heads_output", "transpose-last-axes"),
        Expect("d_k_1_output", "attention-values"),
        Expect("d_k_16_output", "attention-scale"),
    )),
    Check("attention_mask", "scaled_dot_product_attention", (
        Expect("plain_row_sums", "softmax-axis"),
        Expect("blocked_row_finite", "mask-minus-inf"),
        Expect("padding_row_sums", "mask-after-softmax"),
        Expect("padding_blocked_weight", "mask-polarity"),
        Expect("padding_output_first", "mask-polarity", same_as="unmasked_on_allowed_keys"),
        Expect("padding_output_bool", "mask-bool", same_as="padding_output"),
        Expect("causal_output", "mask-broadcast", same_as="causal_by_rows"),
        Expect("blocked_row_other_outputs", "mask-polarity", same_as="unmasked_other_outputs"),
    ), clues=(Clue("plain_scale", atol=1e-3),), diagnoses=(
        Diagnosis("attention-scale", wrong=("plain_scale", "padding_output_first"), right=("plain_row_sums",)),
        Diagnosis("mask-ignored", wrong=("padding_blocked_weight",),
                  right=("plain_row_sums", "padding_row_sums", "blocked_row_other_outputs")),
    )),
    Check("attention_dropout", "scaled_dot_product_attention", (
        Expect("eval_output", "dropout-on-weights", same_as="plain_output"),
        Expect("train_output", "dropout-on-weights", same_as="dropout_on_weights"),
    )),
    Check("multi_head_attention", "MultiHeadAttention", (
        Expect("parameters", "mha-layers"),
        Expect("no_mask_weights_shape", "mha-weights-shape"),
        Expect("no_mask_weights", "heads-split"),
        Expect("identity_projection_output", "heads-merge"),
        Expect("no_mask_output", "output-projection"),
        Expect("padding_output", "mask-not-passed"),
        Expect("train_output", "mha-dropout"),
    )),
    Check("layer_norm", "LayerNorm", (
        Expect("parameters", "norm-parameters"),
        Expect("backward_error", "in-place-op"),
        Expect("rows_alone", "norm-axis", same_as="large_eps_output"),
        Expect("default_eps_output", "variance-unbiased"),
        Expect("zero_eps_output", "variance-unbiased"),
        Expect("large_eps_output", "eps-outside-sqrt"),
        Expect("input_gradient", "in-place-op"),
    ), clues=(Clue("unit_parameters_output"),), diagnoses=(
        Diagnosis("eps-outside-sqrt", wrong=("default_eps_output",), right=("zero_eps_output", "rows_alone")),
        Diagnosis("gamma-beta", wrong=("default_eps_output",), right=("unit_parameters_output",)),
    )),
    Check("feed_forward", "FeedForward", (
        Expect("parameters", "ffn-layers"),
        Expect("eval_output", "ffn-activation"),
        Expect("train_output", "ffn-dropout"),
    )),
    Check("transformer_block", "TransformerBlock", (
        Expect("no_mask_weights", "pre-norm"),
        Expect("padding_weights", "mask-not-passed"),
        Expect("padding_output", "mask-not-passed"),
        Expect("no_mask_output", "block-order"),
        Expect("train_output", "block-dropout"),
    ), clues=(Clue("same_norms_output"), Clue("zero_sublayers_output")), diagnoses=(
        Diagnosis("norms-swapped", wrong=("no_mask_output",), right=("same_norms_output", "no_mask_weights")),
        Diagnosis("residual-missing", wrong=("zero_sublayers_output",), right=("no_mask_weights",)),
    )),
    Check("mini_transformer", "MiniTransformer", (
        Expect("blocks_in_module_list", "blocks-not-registered"),
        Expect("blocks_distinct", "blocks-shared"),
        Expect("n_attention_maps", "attention-maps"),
        Expect("logits_more_padding", "pooling-includes-padding", same_as="logits"),
        Expect("logits_other_padding_ids", "pooling-includes-padding", same_as="logits"),
        Expect("logits", "pooling"),
    ), clues=(Clue("mask_given_to_blocks"), Clue("block_mask_shape"), Clue("logits_without_final_norm"),
              Clue("logits_blocks_ignoring_mask")), diagnoses=(
        Diagnosis("mask-not-passed", wrong=("logits", "mask_given_to_blocks"), right=("logits_blocks_ignoring_mask",)),
        Diagnosis("mask-shape", wrong=("logits", "block_mask_shape"),
                  right=("mask_given_to_blocks", "logits_blocks_ignoring_mask")),
        Diagnosis("final-norm", wrong=("logits",), right=("logits_without_final_norm",)),
    )),
    Check("train_transformer", "train_transformer", (
        Expect("uses_model_device", "global-device"),
        Expect("train_loss", "loss-average"),
        Expect("train_acc", "accuracy-per-example"),
        Expect("val_loss", "validation-data"),
        Expect("val_acc", "validation-data"),
        Expect("final_parameters", "optimizer"),
    ), clues=(Clue("train_acc_is_fraction"), Clue("frozen_epoch_1_loss"), Clue("frozen_epoch_2_loss"),
              Clue("one_step_parameters"), Clue("one_step_loss")), diagnoses=(
        Diagnosis("accuracy-percent", wrong=("train_acc", "train_acc_is_fraction")),
        Diagnosis("loss-on-probabilities", wrong=("train_loss", "one_step_loss")),
        Diagnosis("train-mode", wrong=("train_loss", "frozen_epoch_2_loss"), right=("frozen_epoch_1_loss",)),
        Diagnosis("optimizer", wrong=("final_parameters", "one_step_parameters"),
                  right=("frozen_epoch_1_loss", "frozen_epoch_2_loss")),
        Diagnosis("zero-grad", wrong=("final_parameters",),
                  right=("one_step_parameters", "frozen_epoch_1_loss", "frozen_epoch_2_loss")),
    )),
    Check("layer_costs", "attention_cost, feed_forward_cost", (
        Expect("feed_forward", "feed-forward-cost"),
        Expect("attention", "attention-cost"),
    )),
    Check("crossover_length", "crossover_length", (
        Expect("returns_int", "crossover-int"),
        Expect("lengths", "crossover-boundary"),
        Expect("wide_model_length", "crossover-at-least-1"),
    ), clues=(Clue("attention_costs"), Clue("feed_forward_costs"), Clue("follows_own_costs")), diagnoses=(
        Diagnosis("attention-cost", wrong=("lengths", "attention_costs"), right=("follows_own_costs",)),
        Diagnosis("feed-forward-cost", wrong=("lengths", "feed_forward_costs"), right=("follows_own_costs",)),
    )),
)
