"""Checks of the Transformer Architecture Fundamentals assignment, and its catalogue of mistakes.

One `Check` per hidden test cell of the notebook (same id). Each expectation
names a probe output (see probes.py beside this file) and the mistake that
most often breaks it; clues are outputs worth nothing that tell mistakes
apart; a diagnosis names the mistake behind a pattern of wrong and right
outputs. A failing check reports the most specific diagnosis that holds
(course.verdicts.diagnose).
"""

from course.verdicts import Check, Clue, Diagnosis, Expect

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
    "truncate-off-by-one": "Cut ([<CLS>] + words) to max_length ids, <CLS> counted: [:max_length], not "
                           "[:max_length - 1].",
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
    "pe-position-offset": "Positions start at 0: position = torch.arange(max_length), so row 0 is sin(0) = 0, "
                          "cos(0) = 1.",
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
    "token-embedding-added-twice": "PositionalEncoding.forward already returns x + pe: don't add the token embeddings "
                                   "again.",
    # attention
    "softmax-axis": "Each query's weights must sum to 1 over the keys: softmax over the last axis (dim=-1), not over "
                    "the queries.",
    "attention-scale": "Scale the scores by 1 / sqrt(d_k), before the softmax, with d_k = Q.size(-1), the per-head "
                       "size: not by 1 / d_k, not by V's size or d_model, not unscaled, not the weights after the "
                       "softmax.",
    "softmax-overflow": "Use F.softmax (or subtract each row's max before exp): exp of large scores overflows, and a "
                        "row whose keys are all blocked gives 0 / 0 = NaN.",
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
    "heads-split": "Give each of Q, K, V its own layer (Q from W_q(x), K from W_k(x), V from W_v(x)), then split the "
                   "heads with view(B, T, num_heads, d_k) followed by transpose(1, 2): a view straight to "
                   "(B, num_heads, T, d_k) mixes positions and heads.",
    "heads-merge": "Merge the heads with transpose(1, 2) and then view/reshape(B, T, d_model): a view of "
                   "(B, num_heads, T, d_k) straight to (B, T, d_model) mixes positions and heads.",
    "output-projection": "Apply W_o once, to the merged heads.",
    "mask-not-passed": "Pass the mask on, unchanged, to the attention (and, when training, the batch's "
                       "attention_mask to the model).",
    "mha-dropout": "In training mode, pass self.dropout to scaled_dot_product_attention, so it acts once on the "
                   "attention weights; apply no other dropout in this module.",
    # layer norm, feed-forward, block
    "norm-parameters": "Create self.gamma (ones) and self.beta (zeros) as nn.Parameter of size features.",
    "norm-axis": "Normalise each vector over its last axis (dim=-1, keepdim=True): one row's output must not depend on "
                 "the other rows.",
    "variance-unbiased": "Use the biased variance, x.var(-1, unbiased=False), as nn.LayerNorm does.",
    "eps-outside-sqrt": "eps goes inside the square root: (x - mean) / sqrt(var + eps).",
    "gamma-beta": "Scale by gamma and shift by beta after normalising: gamma * x_hat + beta.",
    "in-place-op": "Leave the inputs you are given as they are: compute new tensors (x - mean, x + pe, Q / scale) "
                   "instead of changing one in place (x.sub_(...), x += ..., Q /= ...), which changes the caller's "
                   "tensor and can break the backward pass.",
    "eps-hard-coded": "Use self.eps, the eps the layer was built with, not a constant.",
    "ffn-layers": "Create linear1 = nn.Linear(d_model, d_ff) and linear2 = nn.Linear(d_ff, d_model).",
    "ffn-activation": "linear1, then ReLU, then linear2: no other activation, and not none.",
    "ffn-dropout": "Apply dropout once, after the ReLU and before linear2.",
    "ffn-residual": "FeedForward returns linear2(dropout(relu(linear1(x)))) only: the block adds the residual.",
    "dropout-in-eval-mode": "Use the nn.Dropout module (or F.dropout(..., training=self.training)): F.dropout "
                            "defaults to training=True and drops in eval mode too.",
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
    "attention-maps": "Return a new list with one attention map per block, made in forward: a list kept on the "
                      "module (created in __init__) grows at every call.",
    "dropout-not-passed": "Pass the dropout rate you are given on to every submodule that takes one.",
    "device-mismatch": "Create new tensors on the input's device (torch.ones_like(input_ids), "
                       "device=input_ids.device), not on the CPU.",
    "mask-from-ids": "Build the key mask from the attention_mask you are given (all ones when it is None), not from "
                     "input_ids != 0.",
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
    "zero-grad": "Call optimizer.zero_grad() once per batch, before loss.backward(): without it gradients add up; "
                 "between backward() and step() it throws the gradients away.",
    "optimizer-recreated": "Create the optimizer once, before the epochs: a new AdamW each epoch forgets its moment "
                           "estimates and step counts.",
    "history-not-floats": "Store Python floats in history (loss.item()), not tensors that keep their graphs alive.",
    "epoch-count": "Run exactly num_epochs epochs: for epoch in range(num_epochs).",
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
    # mistakes first seen in the second held-out set
    "vocab-not-reset": "Build self.vocab and self.inverse_vocab afresh at every build_vocab call: updating the old "
                       "dict keeps the words (and ids) of the texts of earlier calls.",
    "embeddings-submodules": "Build self.token_embedding from your TokenEmbedding (scaled by sqrt(d_model), small "
                             "initial table) and self.pos_encoding from your PositionalEncoding, not from a bare "
                             "nn.Embedding.",
    "max-length-not-passed": "Pass max_length on to PositionalEncoding(d_model, max_length): its default table has "
                             "512 rows, whatever max_length the model was given.",
    "dropout-rate-ignored": "Drop with the rate you were given: self.dropout(x), or F.dropout(x, self.dropout.p, "
                            "self.training); F.dropout's default rate is 0.5.",
    "stale-cache": "Compute Q, K and V from this call's x at every call: keys and values cached on the module serve "
                   "the first input's values to every later call.",
    "parameter-dtype": "Create gamma and beta in the default float32 (torch.ones(features)): dtype=float means "
                       "float64, and float64 parameters turn every activation after them into float64.",
    "norm-shared": "Create two LayerNorm objects, norm1 and norm2: one object used twice makes both sublayers share "
                   "one gamma and one beta.",
    "prediction-axis": "Predict one class per example with logits.argmax(-1) (or dim=1): argmax() without a dim "
                       "returns one index into the flattened batch.",
    # cross-attention and the encoder-decoder
    "cross-queries": "The decoder's side asks: Q = W_q(x); the memory answers: K = W_k(memory), V = W_v(memory). The "
                     "weights are (B, H, T, S), one row per decoder position.",
    "cross-keys-from-x": "Keys and values come from the memory (the encoder's output), not from x: attention of x on "
                         "itself never reads the source.",
    "cross-split": "Split each sequence with its own length: W_q(x) into (B, T, num_heads, d_k) and W_k(memory), "
                   "W_v(memory) into (B, S, num_heads, d_k), each followed by transpose(1, 2).",
    "cross-mask": "Pass the mask on to scaled_dot_product_attention, so that no query reads a padded source "
                  "position.",
    "decoder-norm-shared": "Create three LayerNorm objects, norm1, norm2 and norm3: one object used twice makes two "
                           "sub-layers share one gamma and one beta.",
    "decoder-order": "Three sub-layers in this order: causal self-attention, cross-attention, feed-forward, each as "
                     "x = norm(x + dropout(sublayer)) with norm1, norm2, norm3.",
    "decoder-cross-queries": "The cross-attention's queries are x after the first sub-layer (norm1's output), not the "
                             "block's input: each position first gathers what was written, then asks the source.",
    "decoder-residual": "Add each sub-layer's input back before its norm: norm1(x + attn_out), norm2(x + cross_out), "
                        "norm3(x + ffn_out).",
    "decoder-pre-norm": "This is a post-norm block: x = norm1(x + dropout(attn_out)), not x + attn(norm1(x)).",
    "decoder-self-mask": "Pass self_mask to the self-attention: self.self_attention(x, self_mask).",
    "decoder-memory-mask": "Pass memory_mask to the cross-attention: self.cross_attention(x, memory, memory_mask).",
    "decoder-memory": "Give the cross-attention the memory you are given as its keys' and values' side: "
                      "self.cross_attention(x, memory, memory_mask).",
    "decoder-dropout": "In training mode, apply self.dropout to each sub-layer's output before adding the residual, "
                       "and nowhere else.",
    "causal-mask-missing": "Give every decoder block a causal self_mask, torch.tril(torch.ones(T, T)): without it, "
                           "teacher forcing lets position t read the very token it must predict, and a model that "
                           "learned to copy it cannot write on its own.",
    "causal-mask-shape": "The causal mask is lower-triangular with its diagonal: position t sees positions 0 to t "
                         "of the decoder's input, torch.tril(torch.ones(T, T)) (not triu, not diagonal=-1).",
    "source-mask": "Reshape the source's padding mask to (B, 1, 1, S) and pass it to every encoder block and, as "
                   "memory_mask, to every decoder block; all ones when src_mask is None.",
    "memory-not-encoder-output": "Give every decoder block the encoder's final output (after the last encoder "
                                 "block) as memory, not the source's embeddings or an earlier block's output.",
    "seq2seq-embeddings": "Embed the source with self.src_embeddings and the decoder's input with "
                          "self.tgt_embeddings.",
    "seq2seq-maps": "Return a new dict with three lists, \"encoder\", \"decoder\" and \"cross\", one map per "
                    "block, made in forward.",
}

CHECKS = (
    Check("tokenizer_clean_text", "SimpleTokenizer.clean_text", (
        Expect("case", "clean-case", observed="on words of ASCII letters in mixed case, the cleaned text is not the "
                                              "words in lower case"),
        Expect("punctuation", "clean-punctuation", observed="on lower-case words with punctuation between them, the "
                                                            "cleaned text is not the words joined by single spaces"),
        Expect("underscores", "clean-underscores", observed="on words joined by underscores, the cleaned text is not "
                                                            "the words split at the underscores"),
        Expect("cleaned", "clean-rule", observed="on mixed text (accents, digits, apostrophes, hyphens, underscores, "
                                                 "runs of punctuation), the cleaned text differs from the rule"),
    ), clues=(Clue("case_folded"),), diagnoses=(
        Diagnosis("clean-case", wrong=("case",), right=("case_folded",)),
        Diagnosis("clean-punctuation", wrong=("punctuation",), right=("case",)),
        Diagnosis("clean-underscores", wrong=("underscores",), right=("case", "punctuation")),
        Diagnosis("clean-rule", wrong=("cleaned",), right=("case", "punctuation", "underscores")),
    )),
    Check("tokenizer_build_vocab", "SimpleTokenizer.build_vocab", (
        Expect("special_ids", "specials-first"),
        Expect("size_9", "vocab-size", observed="with vocab_size=9, the vocabulary does not hold 9 entries"),
        Expect("size_100", "vocab-size", observed="with vocab_size=100 and fewer distinct words, the vocabulary does "
                                                  "not hold every word plus the 3 special tokens"),
        Expect("words_by_id_100", "vocab-order", observed="the words, in id order, are not the text's words by "
                                                          "falling frequency"),
        Expect("words_by_id_9", "vocab-order", observed="with vocab_size=9, the words are not the 6 most frequent "
                                                        "ones in order"),
        Expect("inverse_matches_100", "inverse-vocab"),
        Expect("inverse_matches_9", "inverse-vocab"),
        Expect("words_by_id_other", "vocab-order", observed="a second tokenizer, built on other texts, does not get "
                                                            "their words by falling frequency"),
        Expect("words_by_id_rebuilt", "vocab-not-reset", observed="built again on other texts, the vocabulary is not "
                                                                  "those texts' words by falling frequency"),
    ), clues=(Clue("ranking_prefix"),), diagnoses=(
        Diagnosis("vocab-not-reset", wrong=("words_by_id_rebuilt",),
                  right=("words_by_id_100", "words_by_id_9", "words_by_id_other")),
        Diagnosis("state-between-calls", wrong=("words_by_id_other",), right=("words_by_id_100", "words_by_id_9")),
        Diagnosis("vocab-size", wrong=("size_9",), right=("ranking_prefix", "special_ids")),
        Diagnosis("vocab-size", wrong=("size_100",), right=("ranking_prefix", "special_ids")),
        Diagnosis("vocab-order", wrong=("words_by_id_100", "ranking_prefix"), right=("special_ids",)),
    )),
    Check("tokenizer_tokenize", "SimpleTokenizer.tokenize", (
        Expect("padded", "pad-to-max-length", observed="a one-word text is not <CLS>, its id, then <PAD> ids up to "
                                                       "max_length"),
        Expect("truncated", "truncate-after-cls", observed="a text longer than max_length does not give <CLS> and the "
                                                           "first max_length - 1 word ids"),
        Expect("unknown_words", "unknown-id", observed="a text with words outside the vocabulary gives other ids than "
                                                       "expected"),
        Expect("cleaned_first", "tokenize-without-clean", observed="a text with capitals and punctuation gives other "
                                                                   "ids than its cleaned words"),
        Expect("short", "tokenize-rule", observed="a short text is not <CLS>, one id per word, then <PAD> ids"),
        Expect("exact", "tokenize-rule", observed="a text of exactly max_length - 1 words is not <CLS> and its word "
                                                  "ids"),
        Expect("joined_by_punctuation", "tokenize-without-clean",
               observed="a text with words joined by a comma, or a dash between spaces, gives other ids than its "
                        "cleaned words"),
    ), clues=(Clue("like_cls_after_truncation"), Clue("like_one_short"), Clue("like_uncleaned"),
              Clue("like_unknown_as_pad"), Clue("like_cleaned_per_word")), diagnoses=(
        Diagnosis("tokenize-without-clean", wrong=("joined_by_punctuation", "like_cleaned_per_word")),
        Diagnosis("pad-to-max-length", wrong=("padded",), right=("truncated", "exact")),
        Diagnosis("truncate-after-cls", wrong=("truncated", "like_cls_after_truncation")),
        Diagnosis("truncate-off-by-one", wrong=("truncated", "like_one_short")),
        Diagnosis("unknown-id", wrong=("unknown_words", "like_unknown_as_pad")),
        Diagnosis("unknown-id", wrong=("unknown_words",), right=("short", "exact", "truncated", "padded")),
        Diagnosis("tokenize-without-clean", wrong=("cleaned_first", "like_uncleaned")),
    )),
    Check("tokenizer_decode", "SimpleTokenizer.decode", (
        Expect("plain", "decode-specials", observed="ids with <CLS> and <PAD> do not decode to the words alone"),
        Expect("with_unknown", "decode-specials", observed="ids with <CLS>, <UNK> and <PAD> do not decode to the "
                                                           "words with '<UNK>' kept"),
        Expect("no_cls", "decode-specials", observed="ids without special tokens do not decode to their words joined "
                                                     "by single spaces"),
        Expect("tensor_input", "decode-tensor-ids", observed="a 1-D tensor of ids does not decode like the same list "
                                                             "of ints"),
        Expect("pad_inside", "decode-specials", observed="ids with a <PAD> before other words do not decode to all the "
                                                         "words"),
    ), diagnoses=(
        Diagnosis("decode-specials", wrong=("plain",), right=("no_cls",)),
        Diagnosis("decode-specials", wrong=("with_unknown",), right=("no_cls",)),
        Diagnosis("decode-tensor-ids", wrong=("tensor_input",), right=("plain",)),
        Diagnosis("decode-specials", wrong=("pad_inside",), right=("plain", "with_unknown", "no_cls", "tensor_input")),
    )),
    Check("token_embedding", "TokenEmbedding", (
        Expect("parameters", "embedding-layers"),
        Expect("output", "embedding-scale", observed="the output is not the embedding rows of the ids times "
                                                     "sqrt(d_model)"),
    ), clues=(Clue("scaled_lookup"),), diagnoses=(
        Diagnosis("embedding-scale", wrong=("output",), right=("parameters", "scaled_lookup")),
    )),
    Check("positional_encoding", "PositionalEncoding", (
        Expect("n_parameters", "pe-buffer"),
        Expect("pe_6", "pe-frequency", observed="the table `pe` (d_model 6) differs from sin / cos of position / "
                                                "10000^(2i / d_model)"),
        Expect("pe_10", "pe-frequency", observed="the table `pe` (d_model 10) differs from sin / cos of position / "
                                                 "10000^(2i / d_model)"),
        Expect("forward_6", "pe-forward", observed="forward's output is not its input plus the table's first seq_len "
                                                   "rows"),
        Expect("forward_10", "pe-forward", observed="forward's output is not its input plus the table's first "
                                                    "seq_len rows"),
        Expect("forward_dtype_6", "pe-dtype"),
        Expect("input_unchanged", "in-place-op"),
    ), clues=(Clue("column_0"), Clue("column_1"), Clue("like_swapped"), Clue("like_concatenated"),
              Clue("like_positions_from_1")), diagnoses=(
        Diagnosis("pe-sin-cos-swapped", wrong=("pe_6", "like_swapped")),
        Diagnosis("pe-not-interleaved", wrong=("pe_6", "like_concatenated")),
        Diagnosis("pe-position-offset", wrong=("pe_6", "like_positions_from_1")),
        Diagnosis("pe-frequency", wrong=("pe_6",), right=("column_0", "column_1")),
        Diagnosis("pe-forward", wrong=("forward_6",), right=("pe_6", "pe_10", "input_unchanged")),
    )),
    Check("transformer_embeddings", "TransformerEmbeddings", (
        Expect("token_embedding_used", "embeddings-submodules"),
        Expect("max_length_passed", "max-length-not-passed"),
        Expect("eval_output", "embeddings-order", observed="in eval mode, the output is not the positional encoding "
                                                           "applied to the token embeddings"),
        Expect("train_output", "embeddings-dropout", observed="in training mode, the output is not dropout applied "
                                                              "once to the sum of token and positional embeddings"),
    ), clues=(Clue("like_no_positions"), Clue("like_tokens_twice"), Clue("like_other_dropout_rate")), diagnoses=(
        Diagnosis("dropout-rate-ignored", wrong=("train_output", "like_other_dropout_rate")),
        Diagnosis("embeddings-order", wrong=("eval_output", "like_no_positions")),
        Diagnosis("token-embedding-added-twice", wrong=("eval_output", "like_tokens_twice")),
        Diagnosis("embeddings-dropout", wrong=("train_output",), right=("eval_output", "like_other_dropout_rate")),
    )),
    Check("attention_values", "scaled_dot_product_attention", (
        Expect("inputs_unchanged", "in-place-op"),
        Expect("weight_sums_over_keys", "softmax-axis", observed="each query's weights do not sum to 1 over the keys"),
        Expect("error_with_heads", "transpose-last-axes", observed="with inputs of 4 axes (batch, heads, T, d_k), it "
                                                                  "raises an error"),
        Expect("scale", "attention-scale", atol=1e-3, observed="the weights are not softmax(Q K^T / sqrt(d_k)) over "
                                                               "the keys"),
        Expect("batched_weights", "attention-scale", observed="the weights differ from softmax(Q K^T / sqrt(d_k))"),
        Expect("batched_output", "attention-values", observed="the output differs from the weights times V"),
        Expect("heads_weights", "transpose-last-axes", observed="with inputs of 4 axes (batch, heads, T, d_k), the "
                                                                "weights differ"),
        Expect("heads_output", "transpose-last-axes", observed="with inputs of 4 axes (batch, heads, T, d_k), the "
                                                               "output differs"),
        Expect("d_k_1_output", "attention-values", observed="with d_k = 1, the output differs"),
        Expect("d_k_16_output", "attention-scale", observed="with d_k = 16, the output differs"),
        Expect("large_scores_finite", "softmax-overflow"),
    ), clues=(Clue("like_softmax_of_scores"), Clue("like_softmax_over_queries"), Clue("like_scaled_after_softmax"),
              Clue("heads_like_softmax_over_queries")),
        diagnoses=(
        Diagnosis("softmax-axis", wrong=("weight_sums_over_keys", "like_softmax_over_queries")),
        Diagnosis("softmax-axis", wrong=("heads_weights", "heads_like_softmax_over_queries")),
        Diagnosis("attention-scale", wrong=("batched_weights", "like_scaled_after_softmax")),
        Diagnosis("attention-scale", wrong=("scale",), right=("like_softmax_of_scores", "weight_sums_over_keys")),
        Diagnosis("attention-scale", wrong=("d_k_16_output",), right=("batched_output", "weight_sums_over_keys")),
        Diagnosis("attention-values", wrong=("batched_output",), right=("batched_weights",)),
        Diagnosis("transpose-last-axes", wrong=("error_with_heads",), right=("batched_output",)),
    )),
    Check("attention_mask", "scaled_dot_product_attention", (
        Expect("plain_row_sums", "softmax-axis", observed="without a mask, each query's weights do not sum to 1 over "
                                                          "the keys"),
        Expect("blocked_row_finite", "mask-minus-inf", observed="when a query's keys are all blocked, the output or "
                                                                "the weights contain NaN or infinite values"),
        Expect("padding_row_sums", "mask-after-softmax", observed="with a padding mask, each query's weights do not "
                                                                  "sum to 1 over the keys"),
        Expect("padding_blocked_weight", "mask-polarity", observed="with a padding mask, blocked keys get weight"),
        Expect("padding_output_first", "mask-polarity", same_as="unmasked_on_allowed_keys",
               observed="with a padding mask, the output differs from attention over the allowed keys alone"),
        Expect("padding_output_bool", "mask-bool", same_as="padding_output"),
        Expect("causal_output", "mask-broadcast", same_as="causal_by_rows",
               observed="with a (T_q, T_k) causal mask, query i's output differs from attention over keys 0..i alone"),
        Expect("blocked_row_other_outputs", "mask-polarity", same_as="unmasked_other_outputs",
               observed="with one query's keys all blocked, the other queries' outputs change"),
    ), clues=(Clue("like_mask_after_softmax"), Clue("like_reversed"), Clue("large_scores_finite")), diagnoses=(
        Diagnosis("softmax-overflow", wrong=("blocked_row_finite", "large_scores_finite")),
        Diagnosis("mask-minus-inf", wrong=("blocked_row_finite",), right=("large_scores_finite",
                                                                          "blocked_row_other_outputs")),
        Diagnosis("mask-after-softmax", wrong=("padding_row_sums", "like_mask_after_softmax")),
        Diagnosis("mask-polarity", wrong=("padding_blocked_weight", "like_reversed")),
        Diagnosis("mask-ignored", wrong=("padding_blocked_weight",),
                  right=("plain_row_sums", "padding_row_sums", "blocked_row_other_outputs")),
        Diagnosis("mask-broadcast", wrong=("causal_output",), right=("padding_output_first", "padding_blocked_weight")),
    )),
    Check("attention_dropout", "scaled_dot_product_attention", (
        Expect("eval_output", "dropout-on-weights", same_as="plain_output",
               observed="with a dropout module in eval mode, the output differs from the output without dropout"),
        Expect("train_output", "dropout-on-weights", same_as="dropout_on_weights",
               observed="with a dropout module in training mode, the output is not the dropped weights times V"),
    ), clues=(Clue("eval_like_train"),), diagnoses=(
        Diagnosis("dropout-in-eval-mode", wrong=("eval_output", "eval_like_train")),
        Diagnosis("dropout-on-weights", wrong=("train_output",), right=("eval_output",)),
    )),
    Check("multi_head_attention", "MultiHeadAttention", (
        Expect("parameters", "mha-layers"),
        Expect("no_mask_weights_shape", "mha-weights-shape"),
        Expect("no_mask_weights", "heads-split", observed="the attention weights differ from those of the heads of "
                                                          "W_q(x) and W_k(x)"),
        Expect("identity_projection_output", "heads-merge", observed="with W_o the identity, the output is not the "
                                                                     "heads' outputs side by side"),
        Expect("no_mask_output", "output-projection", observed="without a mask, the output differs"),
        Expect("padding_output", "mask-not-passed", observed="with a padding mask, the output differs"),
        Expect("train_output", "mha-dropout", observed="in training mode, the output differs from dropout acting once "
                                                       "on the attention weights"),
        Expect("second_input_output", "stale-cache", observed="called again on another input, the output differs "
                                                              "from the output on that input alone"),
    ), clues=(Clue("like_wrong_projection"), Clue("like_view_split"), Clue("like_other_scale"),
              Clue("like_merge_without_transpose"), Clue("padding_like_no_mask")), diagnoses=(
        Diagnosis("heads-split", wrong=("no_mask_weights", "like_wrong_projection")),
        Diagnosis("heads-split", wrong=("no_mask_weights", "like_view_split")),
        Diagnosis("attention-scale", wrong=("no_mask_weights", "like_other_scale")),
        Diagnosis("heads-merge", wrong=("identity_projection_output", "like_merge_without_transpose")),
        Diagnosis("output-projection", wrong=("no_mask_output",), right=("identity_projection_output",)),
        Diagnosis("mask-not-passed", wrong=("padding_output", "padding_like_no_mask")),
        Diagnosis("mha-dropout", wrong=("train_output",), right=("no_mask_output", "padding_output")),
        Diagnosis("stale-cache", wrong=("second_input_output",),
                  right=("no_mask_output", "padding_output", "identity_projection_output")),
    )),
    Check("layer_norm", "LayerNorm", (
        Expect("parameters", "norm-parameters"),
        Expect("input_unchanged", "in-place-op"),
        Expect("backward_error", "in-place-op"),
        Expect("parameters_float32", "parameter-dtype"),
        Expect("rows_alone", "norm-axis", same_as="large_eps_output"),
        Expect("default_eps_output", "variance-unbiased", observed="with the default eps, the output differs from "
                                                                   "gamma * (x - mean) / sqrt(var + eps) + beta"),
        Expect("zero_eps_output", "variance-unbiased", observed="with eps=0, the output differs from "
                                                                "gamma * (x - mean) / sqrt(var) + beta"),
        Expect("large_eps_output", "eps-outside-sqrt", observed="with eps=0.5, the output differs from "
                                                                "gamma * (x - mean) / sqrt(var + eps) + beta"),
        Expect("input_gradient", "in-place-op", observed="the gradient with respect to the input differs"),
    ), clues=(Clue("eps_ignored"), Clue("like_unbiased"), Clue("like_eps_outside"), Clue("like_gamma_beta_misuse")),
        diagnoses=(
        Diagnosis("variance-unbiased", wrong=("default_eps_output", "like_unbiased")),
        Diagnosis("eps-outside-sqrt", wrong=("large_eps_output", "like_eps_outside")),
        Diagnosis("eps-hard-coded", wrong=("large_eps_output", "eps_ignored")),
        Diagnosis("gamma-beta", wrong=("default_eps_output", "like_gamma_beta_misuse"), right=("parameters",)),
    )),
    Check("feed_forward", "FeedForward", (
        Expect("parameters", "ffn-layers"),
        Expect("eval_output", "ffn-activation", observed="in eval mode, the output differs from "
                                                         "linear2(relu(linear1(x)))"),
        Expect("train_output", "ffn-dropout", observed="in training mode, the output differs from dropout acting once "
                                                       "between the ReLU and linear2"),
    ), clues=(Clue("eval_like_train"), Clue("like_other_activation"), Clue("like_residual")), diagnoses=(
        Diagnosis("ffn-activation", wrong=("eval_output", "like_other_activation"), right=("parameters",)),
        Diagnosis("ffn-residual", wrong=("eval_output", "like_residual")),
        Diagnosis("dropout-in-eval-mode", wrong=("eval_output", "eval_like_train")),
        Diagnosis("ffn-dropout", wrong=("train_output",), right=("eval_output",)),
    )),
    Check("transformer_block", "TransformerBlock", (
        Expect("norms_distinct", "norm-shared"),
        Expect("no_mask_weights", "pre-norm", observed="the attention is not applied to the block's input x itself"),
        Expect("padding_weights", "mask-not-passed", observed="with a padding mask, the attention weights differ"),
        Expect("padding_output", "mask-not-passed", observed="with a padding mask, the output differs"),
        Expect("no_mask_output", "block-order", observed="without a mask, the output differs from "
                                                         "norm2(h + ffn(h)) with h = norm1(x + attn(x))"),
        Expect("train_output", "block-dropout", observed="in training mode, the output differs from dropout acting "
                                                         "on each sublayer's output before its residual sum"),
    ), clues=(Clue("like_weights_on_norm1"), Clue("like_pre_norm"), Clue("like_residual_missing"),
              Clue("like_norms_swapped"), Clue("like_residual_misplaced"), Clue("padding_like_no_mask")), diagnoses=(
        Diagnosis("pre-norm", wrong=("no_mask_weights", "like_weights_on_norm1")),
        Diagnosis("pre-norm", wrong=("no_mask_output", "like_pre_norm")),
        Diagnosis("residual-missing", wrong=("no_mask_output", "like_residual_missing")),
        Diagnosis("norms-swapped", wrong=("no_mask_output", "like_norms_swapped")),
        Diagnosis("block-order", wrong=("no_mask_output", "like_residual_misplaced")),
        Diagnosis("mask-not-passed", wrong=("padding_weights", "padding_like_no_mask")),
        Diagnosis("block-dropout", wrong=("train_output",), right=("no_mask_output", "padding_output")),
    )),
    Check("mini_transformer", "MiniTransformer", (
        Expect("blocks_in_module_list", "blocks-not-registered"),
        Expect("blocks_distinct", "blocks-shared"),
        Expect("dropout_passed", "dropout-not-passed"),
        Expect("n_attention_maps", "attention-maps"),
        Expect("n_attention_maps_again", "attention-maps"),
        Expect("maps_in_list", "attention-maps"),
        Expect("default_mask_on_input_device", "device-mismatch"),
        Expect("logits_more_padding", "pooling-includes-padding", same_as="logits",
               observed="with more padding added at the end, the logits change"),
        Expect("logits_other_padding_ids", "pooling-includes-padding", same_as="logits",
               observed="with other ids at the padded positions (the same attention_mask), the logits change"),
        Expect("logits", "pooling", observed="the logits differ"),
    ), clues=(Clue("mask_given_to_blocks"), Clue("block_mask_shape"), Clue("block_mask_from_ids"),
              Clue("like_blocks_without_mask"), Clue("like_pooling_over_padding"), Clue("like_other_pooling"),
              Clue("like_final_norm_misplaced"), Clue("logits_blocks_ignoring_mask")), diagnoses=(
        Diagnosis("mask-not-passed", wrong=("logits", "mask_given_to_blocks", "like_blocks_without_mask")),
        Diagnosis("mask-shape", wrong=("logits", "block_mask_shape"),
                  right=("mask_given_to_blocks", "logits_blocks_ignoring_mask")),
        Diagnosis("mask-from-ids", wrong=("logits_other_padding_ids", "block_mask_from_ids")),
        Diagnosis("pooling-includes-padding", wrong=("logits", "like_pooling_over_padding")),
        Diagnosis("pooling", wrong=("logits", "like_other_pooling")),
        Diagnosis("final-norm", wrong=("logits", "like_final_norm_misplaced")),
    )),
    Check("train_transformer", "train_transformer", (
        Expect("uses_model_device", "global-device"),
        Expect("history_floats", "history-not-floats"),
        Expect("epochs_recorded", "epoch-count", observed="the history does not hold one value per epoch"),
        Expect("train_loss", "loss-average", observed="train_loss differs"),
        Expect("train_acc", "accuracy-per-example", observed="train_acc differs"),
        Expect("val_loss", "validation-data", observed="val_loss differs"),
        Expect("val_acc", "validation-data", observed="val_acc differs"),
        Expect("final_parameters", "optimizer", observed="after training, the model's parameters differ"),
    ), clues=(Clue("like_wrong_optimizer"), Clue("like_zero_grad_missing"), Clue("like_optimizer_recreated"),
              Clue("like_no_train_mode"), Clue("like_loss_on_probabilities"), Clue("like_percent"),
              Clue("like_accuracy_per_batch"), Clue("like_argmax_flattened"), Clue("like_mask_not_passed"),
              Clue("params_match_epochs_recorded"), Clue("frozen_parameters_unchanged")), diagnoses=(
        Diagnosis("optimizer", wrong=("final_parameters", "like_wrong_optimizer")),
        Diagnosis("optimizer", wrong=("final_parameters", "frozen_parameters_unchanged")),
        Diagnosis("zero-grad", wrong=("final_parameters", "like_zero_grad_missing")),
        Diagnosis("optimizer-recreated", wrong=("final_parameters", "like_optimizer_recreated")),
        Diagnosis("train-mode", wrong=("final_parameters", "like_no_train_mode")),
        Diagnosis("loss-on-probabilities", wrong=("final_parameters", "like_loss_on_probabilities")),
        Diagnosis("mask-not-passed", wrong=("final_parameters", "like_mask_not_passed")),
        Diagnosis("epoch-count", wrong=("epochs_recorded",), right=("params_match_epochs_recorded",)),
        Diagnosis("accuracy-percent", wrong=("train_acc", "like_percent"), right=("train_loss", "final_parameters")),
        Diagnosis("accuracy-per-example", wrong=("train_acc", "like_accuracy_per_batch")),
        Diagnosis("prediction-axis", wrong=("train_acc", "like_argmax_flattened")),
        Diagnosis("loss-average", wrong=("train_loss",), right=("train_acc", "final_parameters")),
        Diagnosis("validation-data", wrong=("val_loss",), right=("train_loss", "final_parameters")),
        Diagnosis("validation-data", wrong=("val_acc",), right=("train_acc", "final_parameters")),
    )),
    Check("layer_costs", "attention_cost, feed_forward_cost", (
        Expect("feed_forward", "feed-forward-cost"),
        Expect("attention", "attention-cost"),
    )),
    Check("crossover_length", "crossover_length", (
        Expect("returns_int", "crossover-int"),
        Expect("lengths", "crossover-boundary", observed="the crossover lengths differ"),
        Expect("wide_model_length", "crossover-at-least-1", observed="for a model whose attention costs more from the "
                                                                     "first token on, the length is not 1"),
    ), clues=(Clue("attention_costs"), Clue("feed_forward_costs"), Clue("follows_own_costs"),
              Clue("lengths_at_least_1")), diagnoses=(
        Diagnosis("attention-cost", wrong=("lengths", "attention_costs"), right=("follows_own_costs",)),
        Diagnosis("feed-forward-cost", wrong=("lengths", "feed_forward_costs"), right=("follows_own_costs",)),
        Diagnosis("crossover-at-least-1", wrong=("wide_model_length", "lengths_at_least_1")),
        Diagnosis("crossover-at-least-1", wrong=("wide_model_length",),
                  right=("lengths", "attention_costs", "feed_forward_costs")),
        Diagnosis("crossover-boundary", wrong=("lengths",),
                  right=("lengths_at_least_1", "attention_costs", "feed_forward_costs")),
    )),
    Check("cross_attention", "CrossAttention", (
        Expect("weights_shape", "cross-queries", observed="the attention weights are not (B, H, T, S)"),
        Expect("no_mask_weights", "cross-queries", observed="the attention weights differ from those of the queries "
                                                            "W_q(x) against the keys W_k(memory)"),
        Expect("no_mask_output", "output-projection", observed="without a mask, the output differs"),
        Expect("padding_output", "cross-mask", observed="with the source's padding mask, the output differs"),
        Expect("other_padding_output", "cross-mask", same_as="padding_output",
               observed="other values at padded source positions change the output"),
        Expect("train_output", "mha-dropout", observed="in training mode, the output differs from dropout acting once "
                                                       "on the attention weights"),
        Expect("second_input_output", "stale-cache", observed="called again on other inputs, the output differs "
                                                              "from the output on those inputs alone"),
    ), clues=(Clue("like_queries_from_memory"), Clue("like_self_attention"), Clue("like_view_split"),
              Clue("padding_like_no_mask")), diagnoses=(
        Diagnosis("cross-queries", wrong=("no_mask_weights", "like_queries_from_memory")),
        Diagnosis("cross-queries", wrong=("weights_shape", "like_queries_from_memory")),
        Diagnosis("cross-keys-from-x", wrong=("no_mask_weights", "like_self_attention")),
        Diagnosis("cross-split", wrong=("no_mask_weights", "like_view_split")),
        Diagnosis("cross-mask", wrong=("padding_output", "padding_like_no_mask")),
        Diagnosis("output-projection", wrong=("no_mask_output",), right=("no_mask_weights",)),
        Diagnosis("mha-dropout", wrong=("train_output",), right=("no_mask_output", "padding_output")),
        Diagnosis("stale-cache", wrong=("second_input_output",), right=("no_mask_output", "padding_output")),
    )),
    Check("decoder_block", "DecoderBlock", (
        Expect("norms_distinct", "decoder-norm-shared"),
        Expect("self_weights", "decoder-self-mask", observed="the self-attention's weights differ from those of x "
                                                             "under the causal self_mask"),
        Expect("cross_weights", "decoder-memory-mask", observed="the cross-attention's weights differ"),
        Expect("output", "decoder-order", observed="the output differs from norm3(c + ffn(c)) with "
                                                   "c = norm2(h + cross(h, memory)), h = norm1(x + attn(x))"),
        Expect("no_mask_output", "decoder-order", observed="without masks, the output differs"),
        Expect("other_memory_output", "decoder-memory", observed="with another memory, the output differs"),
        Expect("train_output", "decoder-dropout", observed="in training mode, the output differs from dropout acting "
                                                           "on each sub-layer's output before its residual sum"),
    ), clues=(Clue("like_cross_first"), Clue("like_cross_on_input"), Clue("like_residual_missing"),
              Clue("like_pre_norm"), Clue("like_self_mask_lost"), Clue("like_memory_mask_lost"),
              Clue("like_memory_ignored")), diagnoses=(
        Diagnosis("decoder-order", wrong=("output", "like_cross_first")),
        Diagnosis("decoder-cross-queries", wrong=("output", "like_cross_on_input")),
        Diagnosis("decoder-residual", wrong=("output", "like_residual_missing")),
        Diagnosis("decoder-pre-norm", wrong=("output", "like_pre_norm")),
        Diagnosis("decoder-self-mask", wrong=("self_weights", "like_self_mask_lost")),
        Diagnosis("decoder-memory-mask", wrong=("cross_weights", "like_memory_mask_lost")),
        Diagnosis("decoder-memory", wrong=("other_memory_output", "like_memory_ignored")),
        Diagnosis("decoder-dropout", wrong=("train_output",), right=("output", "no_mask_output")),
    )),
    Check("encoder_decoder", "EncoderDecoder", (
        Expect("blocks_in_module_list", "blocks-not-registered"),
        Expect("blocks_distinct", "blocks-shared"),
        Expect("dropout_passed", "dropout-not-passed"),
        Expect("map_counts", "seq2seq-maps"),
        Expect("map_counts_again", "seq2seq-maps"),
        Expect("default_mask_on_input_device", "device-mismatch"),
        Expect("self_mask", "causal-mask-shape", observed="the decoder blocks' self_mask is not the causal mask"),
        Expect("encoder_mask", "source-mask"),
        Expect("memory_mask", "source-mask"),
        Expect("memory_is_encoder_output", "memory-not-encoder-output"),
        Expect("logits_first_three_later_input_changed", "causal-mask-missing", same_as="logits_first_three",
               observed="the logits at the first positions change with the decoder's later input"),
        Expect("logits_more_padding", "source-mask", same_as="logits",
               observed="with more padding at the end of the source, the logits change"),
        Expect("logits_no_mask", "source-mask", same_as="logits_all_real",
               observed="without src_mask, the logits differ from those with a mask of ones"),
        Expect("logits", "seq2seq-embeddings", observed="the logits differ"),
    ), clues=(Clue("self_mask_given"), Clue("like_memory_from_embeddings"), Clue("like_embeddings_mixed")), diagnoses=(
        Diagnosis("causal-mask-missing", wrong=("self_mask", "self_mask_given")),
        Diagnosis("causal-mask-shape", wrong=("self_mask",), right=("self_mask_given",)),
        Diagnosis("memory-not-encoder-output", wrong=("memory_is_encoder_output", "like_memory_from_embeddings")),
        Diagnosis("seq2seq-embeddings", wrong=("logits", "like_embeddings_mixed")),
    )),
    Check("encoder_decoder_trained", "EncoderDecoder", (
        Expect("reverses_held_out", "causal-mask-missing",
               observed="trained to reverse short sequences (with the grader's own blocks inside it), it reverses "
                        "fewer than 90% of held-out sequences exactly"),
    ), clues=(Clue("self_mask_given"), Clue("self_mask_causal")), diagnoses=(
        Diagnosis("causal-mask-missing", wrong=("reverses_held_out", "self_mask_given")),
        Diagnosis("causal-mask-shape", wrong=("reverses_held_out", "self_mask_causal"), right=("self_mask_given",)),
    )),
)
