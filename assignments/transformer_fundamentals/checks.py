"""Checks of the Transformer Architecture Fundamentals assignment.

One `Check` per hidden test cell of the notebook (same id). Each expectation
names a probe output (see probes.py beside this file)
and the mistake that most often breaks it; the first failing one is reported.
"""

from course.checks import Check, Expect

PARAMS_HINT = "Create exactly the layers the instructions list, with the given attribute names and sizes."

CHECKS = (
    Check("tokenizer_clean_text", "SimpleTokenizer.clean_text", (
        Expect("cleaned", "Lower-case; keep runs of letters/digits joined by inner apostrophes; drop everything "
               "else (underscores, hyphens, edge apostrophes); join words with single spaces."),
    )),
    Check("tokenizer_build_vocab", "SimpleTokenizer.build_vocab", (
        Expect("words_by_id_100", "Ids 0, 1, 2 are <PAD>, <UNK>, <CLS>; then words by falling frequency, ties in "
               "order of first appearance (Counter.most_common keeps that order). Count the words of "
               "self.clean_text(text).split()."),
        Expect("words_by_id_9", "The vocabulary holds vocab_size entries in all, the 3 special tokens included "
               "(most_common(vocab_size - 3))."),
        Expect("inverse_matches_100", "self.inverse_vocab must map every id back to its word."),
        Expect("inverse_matches_9", "self.inverse_vocab must map every id back to its word."),
        Expect("words_by_id_other", "Each call counts only its own texts: start from a new Counter inside build_vocab "
               "(a Counter as a default argument or a class attribute keeps the counts of earlier calls)."),
    )),
    Check("tokenizer_tokenize", "SimpleTokenizer.tokenize", (
        Expect("short", "Expected <CLS> first, then one id per word, then <PAD> (0) up to exactly max_length."),
        Expect("unknown_words", "Words not in self.vocab become the <UNK> id (1)."),
        Expect("truncated", "Cut to max_length ids with <CLS> counted (add <CLS> first, then truncate)."),
        Expect("exact", "A sentence that fits exactly needs no padding."),
        Expect("cleaned_first", "Clean the text with self.clean_text before splitting it into words."),
    )),
    Check("tokenizer_decode", "SimpleTokenizer.decode", (
        Expect("plain", "Drop <PAD> and <CLS>, map the other ids to words, join with single spaces."),
        Expect("with_unknown", "Keep <UNK> as the token '<UNK>'."),
        Expect("no_cls", "A list without <CLS> decodes the same way."),
        Expect("tensor_input", "Accept a 1-D tensor too: convert each id with int(i) before looking it up."),
    )),
    Check("token_embedding", "TokenEmbedding", (
        Expect("parameters", "Create one nn.Embedding(vocab_size, d_model) named self.embedding."),
        Expect("output", "Look up the ids and multiply by sqrt(d_model), once."),
    )),
    Check("positional_encoding", "PositionalEncoding", (
        Expect("n_parameters", "The table is fixed: register it as a buffer, not an nn.Parameter."),
        Expect("pe_6", "Sine at even indices, cosine at odd ones (interleaved); both dimensions of a pair "
               "(2i, 2i+1) share the frequency 1 / 10000^(2i / d_model)."),
        Expect("pe_10", "Check the exponent: it is 2i / d_model for pair i, the same for columns 2i and 2i+1."),
        Expect("forward_6", "forward adds pe[:seq_len] along the sequence axis (axis 1) and returns the sum."),
        Expect("forward_10", "forward adds pe[:seq_len] along the sequence axis (axis 1) and returns the sum."),
        Expect("forward_dtype_6", "Build the table in float32 (torch.zeros' default): a float64 table turns float32 "
               "activations into float64, which the rest of the model cannot mix with its float32 weights."),
    )),
    Check("transformer_embeddings", "TransformerEmbeddings", (
        Expect("eval_output", "Apply self.token_embedding, then self.pos_encoding, then self.dropout."),
        Expect("train_output", "Apply dropout once, to the sum of token and positional embeddings."),
    )),
    Check("attention_values", "scaled_dot_product_attention", (
        Expect("weight_sums_over_keys", "Each query's weights must sum to 1 over the keys: softmax over the "
               "last axis (dim=-1), not over the queries."),
        Expect("d_k_1_output", "Compute softmax(Q K^T) V with K transposed on its last two axes "
               "(K.transpose(-2, -1)); the output is weights @ V."),
        Expect("batched_weights", "Scale the scores by 1 / sqrt(d_k), with d_k = Q.size(-1) (the per-head "
               "size, not d_model)."),
        Expect("batched_output", "The output is the weights times V."),
        Expect("heads_weights", "Support any leading dimensions (batch, heads): transpose the last two axes of K "
               "only, e.g. K.transpose(-2, -1)."),
        Expect("heads_output", "Support any leading dimensions (batch, heads)."),
        Expect("d_k_16_output", "The scale must follow d_k = Q.size(-1)."),
    )),
    Check("attention_mask", "scaled_dot_product_attention", (
        Expect("blocked_row_finite", "A query whose keys are all blocked must give finite values: fill blocked "
               "scores with a large negative number such as -1e9, not -inf."),
        Expect("padding_blocked_weight", "Blocked keys (mask == 0) must get weight 0. Mind the polarity: "
               "1 = may attend, 0 = blocked."),
        Expect("padding_row_sums", "Apply the mask to the scores before the softmax, so each row of weights "
               "still sums to 1."),
        Expect("padding_output_first", "With keys 3 and 4 blocked, the result must equal attention over keys "
               "0 to 2 alone.", same_as="unmasked_on_allowed_keys"),
        Expect("padding_output_bool", "Accept a boolean mask too (True = may attend): test `mask == 0`.",
               same_as="padding_output"),
        Expect("causal_output", "A (T_q, T_k) mask must broadcast over the batch; with a causal mask, query i "
               "sees keys 0..i only.", same_as="causal_by_rows"),
        Expect("blocked_row_other_outputs", "A fully blocked row must not change the other rows.",
               same_as="unmasked_other_outputs"),
    )),
    Check("attention_dropout", "scaled_dot_product_attention", (
        Expect("eval_output", "A dropout module in eval mode must change nothing.", same_as="plain_output"),
        Expect("train_output", "Apply dropout once, to the weights after the softmax (not to the scores, not to "
               "the output).", same_as="dropout_on_weights"),
    )),
    Check("multi_head_attention", "MultiHeadAttention", (
        Expect("parameters", PARAMS_HINT + " Here: W_q, W_k, W_v, W_o, each nn.Linear(d_model, d_model)."),
        Expect("no_mask_weights_shape", "Return the weights of every head, shape (B, num_heads, T, T)."),
        Expect("no_mask_output", "Split heads with view(B, T, num_heads, d_k) then transpose(1, 2); merge with "
               "transpose(1, 2) then view/reshape(B, T, d_model); apply W_o once, after merging."),
        Expect("padding_output", "Pass the mask on to scaled_dot_product_attention."),
        Expect("train_output", "In training mode, pass self.dropout to scaled_dot_product_attention, so it acts once on "
               "the attention weights; apply no other dropout in this module."),
    )),
    Check("layer_norm", "LayerNorm", (
        Expect("parameters", "Create self.gamma (ones) and self.beta (zeros) as nn.Parameter of size features."),
        Expect("default_eps_output", "Normalize over the last axis with the biased variance "
               "(x.var(-1, unbiased=False)), as nn.LayerNorm does, then apply gamma and beta."),
        Expect("large_eps_output", "eps goes inside the square root: (x - mean) / sqrt(var + eps)."),
        Expect("input_gradient", "The backward pass must work: compute new tensors (x - mean) instead of changing x "
               "in place (x.sub_(...), x -= ...), which autograd cannot differentiate."),
    )),
    Check("feed_forward", "FeedForward", (
        Expect("parameters", PARAMS_HINT + " Here: linear1 = nn.Linear(d_model, d_ff), linear2 = "
               "nn.Linear(d_ff, d_model)."),
        Expect("eval_output", "linear1, then ReLU, then linear2."),
        Expect("train_output", "Apply dropout once, after the ReLU and before linear2."),
    )),
    Check("transformer_block", "TransformerBlock", (
        Expect("no_mask_output", "Post-norm with residuals: x = norm1(x + dropout(attn_out)), then "
               "x = norm2(x + dropout(feed_forward(x))); use norm1 for attention and norm2 for feed-forward."),
        Expect("no_mask_weights", "Return the attention weights from self.attention."),
        Expect("padding_output", "Pass the mask on to self.attention."),
        Expect("padding_weights", "Pass the mask on to self.attention."),
        Expect("train_output", "In training mode, apply self.dropout to each sublayer's output before adding the "
               "residual: norm1(x + dropout(attn_out)), norm2(x + dropout(ffn_out)); no dropout after the norms."),
    )),
    Check("mini_transformer", "MiniTransformer", (
        Expect("blocks_held", "Keep the blocks in an nn.ModuleList of num_layers separate TransformerBlock objects: "
               "a Python list is not registered (its parameters are not trained, moved to the GPU or switched to eval "
               "mode), and [block] * num_layers repeats one block, so the layers share their weights."),
        Expect("n_attention_maps", "Return a list with one attention map per block."),
        Expect("logits_more_padding", "Adding <PAD> at the end changed the logits: pass the mask to the blocks "
               "as (B, 1, 1, T) and pool over real tokens only.", same_as="logits"),
        Expect("logits_other_padding_ids", "Changing the ids at padded positions changed the logits: padding "
               "must be masked in attention and left out of the pooling.", same_as="logits"),
        Expect("logits", "Embed, run every block with the mask, apply ln_f to every token, then take the mean over "
               "real tokens (sum of mask * x over the sequence / number of real tokens), then the classifier."),
    )),
    Check("train_transformer", "train_transformer", (
        Expect("train_loss", "Use nn.CrossEntropyLoss on raw logits (no softmax first), call "
               "optimizer.zero_grad() before each backward pass, and average the batch losses per epoch."),
        Expect("train_acc", "train_acc is the fraction (0 to 1) of training examples predicted right during "
               "the epoch: count correct examples over all batches, then divide by the number of examples (a mean of "
               "per-batch accuracies is wrong when the last batch is smaller)."),
        Expect("val_loss", "Validate with evaluate(model, val_loader, criterion) after each epoch."),
        Expect("val_acc", "val_acc is the accuracy evaluate returns (a fraction)."),
        Expect("final_parameters", "Use torch.optim.AdamW(model.parameters(), lr=learning_rate, "
               "weight_decay=0.01), call model.train() at the start of every epoch, and step once per batch."),
    )),
    Check("layer_costs", "attention_cost, feed_forward_cost", (
        Expect("feed_forward", "Two linear layers: n * d_model * d_ff multiply-adds each."),
        Expect("attention", "Four (n, d) x (d, d) projections, 4 * n * d_model**2, plus the scores and the weighted sum, "
               "n**2 * d_model each."),
    )),
    Check("crossover_length", "crossover_length", (
        Expect("lengths", "Set 4*n*d**2 + 2*n**2*d >= 2*n*d*d_ff, divide by 2*n*d: n >= d_ff - 2*d_model; the smallest "
               "such n is at least 1 (max(1, d_ff - 2*d_model))."),
    )),
)
