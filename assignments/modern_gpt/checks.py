"""Checks of A Small GPT, Trained Well, and its catalogue of mistakes.

One `Check` per hidden test cell of the notebook (same id). Each expectation
names a probe output (see probes.py beside this file) and the mistake that
most often breaks it; clues are outputs worth nothing that tell mistakes
apart; a diagnosis names the mistake behind a pattern of wrong and right
outputs (course.verdicts.diagnose).

Tokenizers are judged exactly (ids and merges are integers); RoPE, attention
and the schedule to float tolerance; initialisation and overfitting by
properties that hold for any correct code (a standard deviation near 0.02, a
loss near ln V, a loss below 0.1), never by one run's random draws.
"""

from pathlib import Path

from course.verdicts import Check, Clue, Diagnosis, Expect

ASSIGNMENT = Path(__file__).parent.name

MISTAKES = {
    # train_bpe
    "bpe-merges": "Each round: count every adjacent pair of the current ids (Counter(zip(ids, ids[1:]))), take the "
                  "most frequent (ties: the smaller pair), replace it left to right without overlap by the next id "
                  "(256, 257, ...), and record it; vocab_size - 256 rounds, fewer if no pair is left.",
    "bpe-tie-rule": "Break ties between equally frequent pairs by the smaller pair, comparing (a, b) tuples as Python "
                    "does: min(counts, key=lambda pair: (-counts[pair], pair)). Counter.most_common and max keep "
                    "another order.",
    "bpe-overlap-count": "Count overlapping pairs too: in a a a the pair (a, a) occurs twice (positions 0 and 1). "
                         "Counter(zip(ids, ids[1:])) counts every adjacent pair.",
    "bpe-overlapping-merge": "Replace a pair from left to right WITHOUT overlap: after a merge, jump past both ids "
                             "(i += 2). Merging (a, a) in a a a gives [new, a], not two new tokens.",
    "bpe-merge-count": "Make exactly vocab_size - 256 merges (new ids 256 .. vocab_size - 1): "
                       "for new_id in range(256, vocab_size), a pair that occurs once merged like any other; stop "
                       "early only when no pair is left.",
    "bpe-no-pairs-left": "Stop when the text has fewer than two ids left: the pair counts are then empty, and "
                         "max or min of an empty collection raises. Check before choosing a pair.",
    "bpe-not-bytes": "Start from the UTF-8 bytes, list(text.encode('utf-8')), not from the characters: ids 0 to 255 "
                     "are bytes, and a character such as é or 🙂 is two to four of them.",
    # encode
    "encode-values": "Start from the UTF-8 bytes and apply every merge, in training order: merge i replaces its pair "
                     "by 256 + i everywhere, left to right, before merge i + 1 is applied.",
    "encode-merge-order": "Apply the merges in training order (merges[0] first), each over the whole sequence. "
                          "Matching the longest known token at each position, or applying the merges in another "
                          "order, gives other ids than training would.",
    # decode
    "decode-values": "Map each id to its bytes (ids below 256: bytes([id]); id 256 + i: the bytes of merges[i]'s two "
                     "ids joined), join all of them, then decode once: .decode('utf-8', errors='replace').",
    "decode-per-token": "Join the bytes of ALL the ids first, then decode once: a token may end in the middle of a "
                        "character (é is two bytes, 🙂 four), so decoding token by token breaks it into U+FFFD.",
    "decode-errors": "Decode with errors='replace': ids a model chose can form bytes that are not valid UTF-8, and "
                     "decode must give U+FFFD for them, not raise UnicodeDecodeError.",
    "decode-not-utf8": "Your text is what Latin-1 makes of the bytes: each byte became a character of its own (é "
                       "became Ã©). Decode the joined bytes as UTF-8, .decode('utf-8', errors='replace'), and build "
                       "each byte's entry as bytes([i]) (chr(i).encode() turns bytes 128 to 255 into two).",
    # apply_rope
    "rope-values": "Rotate each pair (x[2i], x[2i+1]) of the row at position m by the angle m * base ** (-2i / d): "
                   "x'[2i] = x[2i] cos - x[2i+1] sin, x'[2i+1] = x[2i] sin + x[2i+1] cos.",
    "rope-halves": "Pair coordinates 2i and 2i+1 (interleaved: x[..., 0::2] with x[..., 1::2]), as this notebook "
                   "asks. Pairing i with i + d/2 (halves) is another RoPE convention: a different function, whose "
                   "scores weights trained the interleaved way would get wrong.",
    "rope-angle-exponent": "Pair i turns by base ** (-2i / d) per position: the exponent is -2i/d with i = 0 .. d/2 - "
                           "1 (torch.arange(0, d, 2) / d), not -i/d.",
    "rope-direction": "Rotate counter-clockwise: x'[2i] = x[2i] cos - x[2i+1] sin and x'[2i+1] = x[2i] sin + "
                      "x[2i+1] cos. Your rotation turns the other way.",
    "rope-integer-angles": "Compute the angles in floating point: positions.float() (or the dtype of x) times theta. "
                           "Integer arithmetic truncates them.",
    "rope-not-relative": "A rotation keeps every vector's length, and rotating queries and keys by their positions "
                         "makes each score depend on m - n only: rotate both coordinates of each pair, by an angle "
                         "proportional to the position.",
    "rope-base": "Use the base you are given: pair i turns by base ** (-2i / d) per position, with base the "
                 "argument (10000.0 by default), not a number written in.",
    "rope-dtype": "Return the dtype of x: build the cosines and sines in float32 and cast them with .to(x.dtype), "
                  "so that float64 inputs give float64 outputs.",
    "modifies-argument": "Do not change a list or tensor you were given in place (a list's item assignment or "
                         "insert, a tensor's x[..., 0::2] = ..., mul_, +=): the caller's changes under it. Build the "
                         "result as a new one (a new list; torch.stack(...).flatten(-2)).",
    # CausalSelfAttention
    "attention-values": "Project to q, k, v and split the heads ((B, n_heads, T, d_head)), rotate q and k with "
                        "apply_rope at positions, append k and v after the cache's, softmax(q k^T / sqrt(d_head)) "
                        "with the causal mask, weights @ v, heads merged, then proj.",
    "cache-mask-offset": "With a cache, the new token i sits at position T_past + i and may attend to every cached key: "
                         "the mask is torch.ones(T, T_past + T).tril(diagonal=T_past). tril() without the offset lets "
                         "a one-token step see only the first key; a larger offset lets a token see the next ones.",
    "cache-order": "Append the new keys and values AFTER the cached ones: torch.cat([cache_k, k], dim=2). The cache "
                   "holds positions 0 .. T_past - 1, in order.",
    "cache-not-appended": "Return the cache with the new tokens' keys and values appended (T_past + T positions), "
                          "not the cache you were given: the next step must see this step's token.",
    "attention-scale": "Divide the scores by sqrt(d_head), the size of one head's queries and keys, not by "
                       "sqrt(d_model) and not by nothing.",
    "rope-on-values": "Rotate the queries and the keys only: the values are what a token passes on, and position "
                      "must not change them.",
    "attention-head-split": "Split the heads with .view(B, T, n_heads, d_head).transpose(1, 2): a view straight to "
                            "(B, n_heads, T, d_head) mixes the positions of different heads.",
    "rope-flag": "Rotate q and k only when self.rope is True: the model with learned positions (rope=False) gets its "
                 "positions from its table, and must not be rotated too.",
    "attention-not-causal": "Block every key after its query (the causal mask) before the softmax: an output must "
                            "not depend on later tokens.",
    # init_weights
    "init-values": "Initialise nn.Linear and nn.Embedding weights from N(0, 0.02^2), Linear biases to 0, LayerNorm "
                   "weights to 1 and biases to 0, and leave every other module as it is.",
    "init-embedding": "Initialise nn.Embedding weights from N(0, 0.02^2) too: PyTorch's default N(0, 1) through the "
                      "tied head makes logits of size about sqrt(d_model), and the first loss far above ln V.",
    "init-linear": "Draw every nn.Linear weight from N(0, 0.02^2): nn.init.normal_(module.weight, mean=0.0, "
                   "std=0.02).",
    "init-std": "Draw nn.Linear and nn.Embedding weights alike from the normal distribution with mean 0 and "
                "standard deviation 0.02: nn.init.normal_(module.weight, mean=0.0, std=0.02) (by keyword: normal_'s "
                "second positional argument is the mean).",
    "init-bias": "Set every nn.Linear bias to 0 (nn.init.zeros_), where the Linear has one (bias=False: "
                 "module.bias is None).",
    "init-layernorm": "Leave LayerNorm at weight 1 and bias 0 (nn.init.ones_, nn.init.zeros_): drawing its weight "
                      "from N(0, 0.02^2) scales every normalised activation down to almost nothing.",
    "init-reseeds": "Draw each layer's weights from the random stream as it goes, without seeding inside init_weights: "
                    "model.apply calls it once per module, so a seed there gives every layer of a shape the same "
                    "weights (and resets the caller's random state). Seed once, before building the model.",
    "init-in-place": "Initialise the existing parameters in place (nn.init.normal_(module.weight, ...)): assigning "
                     "a new nn.Parameter unties the head from the token embedding it must share.",
    "init-other-modules": "Initialise only nn.Linear, nn.Embedding and nn.LayerNorm: model.apply calls init_weights "
                          "on every module, and other modules' parameters are not yours to change.",
    # generate
    "generate-values": "Greedy: each step, the argmax of the last position's logits, appended; return the ids "
                       "(B, T + max_new_tokens) and the logits each new id was chosen from (B, max_new_tokens, V).",
    "generate-cache-unused": "With use_cache=True, run the model on the prompt once, then on the one new id per "
                             "step with the caches it returned: running it on all the ids again recomputes what the "
                             "cache holds.",
    "generate-cache-refeed": "With the cache, feed only the new id (B, 1): feeding all the ids again with the cache "
                             "adds their keys a second time, at later positions.",
    "generate-grad": "Generate under torch.no_grad(): no step needs gradients, and with them each step keeps its graph "
                     "(and the cache's) in memory.",
    "generate-logits": "Return the logits of the last position (logits[:, -1, :]) each id was chosen from, as they "
                       "are: not softmax probabilities, not another position's.",
    # configure_optimizer
    "optimizer-groups": "Two groups, in this order: every nn.Linear weight that is not also an embedding's, with "
                        "weight_decay; every other parameter, with weight_decay=0.0. Each parameter once.",
    "decay-on-norms-biases": "Do not decay LayerNorm weights and biases or any bias: decay is for the weight "
                             "matrices of nn.Linear layers only.",
    "decay-on-embeddings": "Do not decay the embeddings: the token table (which the tied head shares) and the "
                           "position table belong in the group without decay. Collect the nn.Embedding weights and "
                           "leave them out of the decayed group.",
    "optimizer-duplicate": "The tied head's weight IS the token embedding: one parameter, which must be in one group "
                           "once (AdamW refuses a parameter in two groups). Walk model.parameters(), which yields it "
                           "once.",
    "optimizer-settings": "Return torch.optim.AdamW with lr as given and betas=(0.9, 0.95), the decayed group first "
                          "with weight_decay, then the rest with weight_decay=0.0.",
    # lr_at
    "lr-values": "Warm-up: max_lr * (step + 1) / warmup for step < warmup; then min_lr + 0.5 * (1 + cos(pi * "
                 "progress)) * (max_lr - min_lr) with progress = (step - warmup) / (total - warmup); min_lr from "
                 "step total on. Return a Python float.",
    "warmup-off-by-one": "The warm-up is steps 0 .. warmup - 1 (step < warmup), and its first step already learns: "
                         "max_lr * (step + 1) / warmup, so step 0 gives max_lr / warmup (not 0), step warmup - 1 "
                         "gives max_lr, and the cosine starts at step warmup.",
    "cosine-progress": "Measure the cosine's progress from the end of the warm-up, as a fraction: (step - warmup) / "
                       "(total - warmup) (true division: // stays 0), so that it starts at max_lr right after the "
                       "warm-up and ends at min_lr at total.",
    "cosine-min-lr": "Decay to min_lr, not to 0: min_lr + 0.5 * (1 + cos(pi * progress)) * (max_lr - min_lr), and "
                     "min_lr from step total on.",
    "lr-shape": "After the warm-up the rate follows half a period of a cosine, 0.5 * (1 + cos(pi * progress)) with "
                "progress from 0 to 1: not a straight line, and not cos(progress) without the pi.",
    "lr-type": "Return a Python float (math.cos, not torch.cos of a tensor).",
    # train_step
    "train-step-values": "Set lr in every group, model.train(), logits = model(x)[0], mean cross-entropy over B*T, "
                         "zero_grad, backward, clip_grad_norm_(model.parameters(), 1.0), step; return loss.item().",
    "clip-after-step": "Clip the gradients between backward() and step(): clipping after the step changes nothing "
                       "that step did, and clip at a global norm of 1.0.",
    "lr-not-set": "Set the learning rate of EVERY parameter group before the step: for group in "
                  "optimizer.param_groups: group['lr'] = lr.",
    "no-zero-grad": "Call optimizer.zero_grad() at every step, before backward(): otherwise each step adds its "
                    "gradient to all earlier ones.",
    "step-order": "The optimizer stepped with all-zero gradients: at every step call optimizer.zero_grad(), then "
                  "loss.backward(), then clip_grad_norm_, then optimizer.step(), in that order (zero_grad after "
                  "backward, or step before it, throws the gradients away).",
    "no-train-mode": "Call model.train() before the forward pass: a model left in eval mode by an evaluation trains "
                     "with dropout (and anything else that differs) switched off.",
    "loss-not-float": "Return the loss as a Python float (loss.item()): a tensor keeps the whole graph of the step "
                      "alive.",
}


# ---------------------------------------------------------------- checks

# The optimizer's settings are named only where its groups are right: a wrong structure (three groups, one group of
# everything) also gives other decays and rates, and its own mistake is not a setting.
GROUPS_RIGHT = ("group_count", "decayed", "not_decayed", "each_once")

CHECKS = (
    Check("bpe_merges", "train_bpe", (
        Expect("same_twice", "state-between-calls"),
        Expect("merge_pair", "bpe-overlapping-merge",
               observed="merge_pair does not replace the pair left to right, without overlap, keeping every other id"),
        Expect("merge_pair_keeps_list", "modifies-argument"),
        Expect("ties", "bpe-tie-rule", observed="on a text with equally frequent pairs, the merges differ"),
        Expect("repeats", "bpe-merges", observed="on runs of one letter (aaaaaaa), the merges differ"),
        Expect("cases", "bpe-merges", observed="on a text of upper- and lower-case letters, the merges differ"),
        Expect("overlap", "bpe-overlap-count",
               observed="on aaabab, where the pair (a, a) occurs twice, overlapping, the merges differ"),
        Expect("words", "bpe-merges", observed="on a text of repeated words, the merges differ"),
        Expect("unicode", "bpe-not-bytes", observed="on a text with accents and emoji, the merges differ"),
        Expect("short", "bpe-no-pairs-left",
               observed="on a text of two letters and a vocabulary of 300, the merges differ (one merge, then no "
                        "pair is left)"),
        Expect("no_merges", "bpe-merges", observed="with vocab_size 250 the merges are not []"),
    ), clues=tuple(Clue(f"like_{slip}") for slip in ("tie_largest", "tie_first_seen", "count_without_overlap",
                                                     "disjoint_pairs", "counts_once", "overlapping_merge",
                                                     "drops_last", "one_merge_more", "code_points",
                                                     "tie_second_first", "least_frequent", "stop_at_single",
                                                     "ids_from_zero", "merge_right_to_left", "merge_nothing",
                                                     "merge_first_id_twice", "one_merge", "ascii_ignore",
                                                     "tie_as_strings", "id_one_ahead", "smallest_pair", "ids_kept",
                                                     "vocab_size_merges", "wrap_around", "last_pair_uncounted",
                                                     "no_space_pairs", "lowercased", "no_merge", "tie_by_sum",
                                                     "counts_accumulated", "merge_last_id_twice",
                                                     "merge_first_only")) + (Clue("short_raised"),),
        diagnoses=(
        Diagnosis("bpe-overlap-count", wrong=("words", "like_disjoint_pairs")),
        Diagnosis("bpe-merges", wrong=("words", "like_counts_once")),
        Diagnosis("bpe-merges", wrong=("words", "like_drops_last")),
        Diagnosis("bpe-tie-rule", wrong=("ties", "like_tie_largest")),
        Diagnosis("bpe-tie-rule", wrong=("ties", "like_tie_first_seen")),
        Diagnosis("bpe-tie-rule", wrong=("ties", "like_tie_second_first")),
        Diagnosis("bpe-merges", wrong=("words", "like_least_frequent")),
        Diagnosis("bpe-merge-count", wrong=("words", "like_stop_at_single")),
        Diagnosis("bpe-merges", wrong=("words", "like_ids_from_zero")),
        Diagnosis("bpe-overlapping-merge", wrong=("merge_pair", "like_merge_right_to_left")),
        Diagnosis("bpe-merges", wrong=("merge_pair", "like_merge_nothing")),
        Diagnosis("bpe-merges", wrong=("merge_pair", "like_merge_first_id_twice")),
        Diagnosis("bpe-merge-count", wrong=("words", "like_one_merge")),
        Diagnosis("bpe-not-bytes", wrong=("unicode", "like_ascii_ignore"), right=("words",)),
        Diagnosis("bpe-tie-rule", wrong=("ties", "like_tie_as_strings")),
        Diagnosis("bpe-merges", wrong=("words", "like_id_one_ahead")),
        Diagnosis("bpe-merges", wrong=("words", "like_smallest_pair")),
        Diagnosis("bpe-merges", wrong=("words", "like_ids_kept")),
        Diagnosis("bpe-merge-count", wrong=("words", "like_vocab_size_merges")),
        Diagnosis("bpe-merges", wrong=("words", "like_wrap_around")),
        Diagnosis("bpe-merges", wrong=("words", "like_last_pair_uncounted")),
        Diagnosis("bpe-merges", wrong=("words", "like_no_space_pairs")),
        Diagnosis("bpe-merges", wrong=("cases", "like_lowercased")),
        Diagnosis("bpe-merge-count", wrong=("words", "like_no_merge")),
        Diagnosis("bpe-overlap-count", wrong=("repeats", "like_count_without_overlap")),
        Diagnosis("bpe-overlapping-merge", wrong=("repeats", "like_overlapping_merge")),
        Diagnosis("bpe-merge-count", wrong=("words", "like_one_merge_more")),
        Diagnosis("bpe-not-bytes", wrong=("unicode", "like_code_points"), right=("words",)),
        Diagnosis("bpe-tie-rule", wrong=("ties", "like_tie_by_sum")),
        Diagnosis("bpe-merges", wrong=("words", "like_counts_accumulated")),
        Diagnosis("bpe-merges", wrong=("merge_pair", "like_merge_last_id_twice")),
        Diagnosis("bpe-merges", wrong=("merge_pair", "like_merge_first_only")),
        Diagnosis("bpe-no-pairs-left", wrong=("short", "short_raised"), right=("ties", "repeats", "words", "unicode")),
    )),
    Check("bpe_encode", "encode", (
        Expect("training_text", "encode-values",
               observed="the merges' own training text does not encode to training's sequence"),
        Expect("new_text", "encode-values", observed="a text the merges were not trained on encodes to other ids"),
        Expect("unicode", "encode-values", observed="a text with accents and emoji encodes to other ids"),
        Expect("order", "encode-merge-order",
               observed="with merges whose order matters (b c before a b), the ids differ"),
        Expect("runs", "encode-values", observed="a run of one letter (aaaaa) encodes to other ids"),
        Expect("pair", "encode-values", observed="two bytes whose pair is a merge do not encode to that merge's id"),
        Expect("one_byte", "encode-values", observed="a text of one byte does not encode to that byte"),
        Expect("whitespace", "encode-values", observed="a text with runs of spaces, tabs and newlines encodes to "
                                                       "other ids"),
        Expect("no_merges", "encode-values", observed="with no merges, a text does not encode to its UTF-8 bytes"),
        Expect("list_of_ints", "encode-values", observed="encode does not return a list of Python ints"),
        Expect("empty", "encode-values", observed="'' does not encode to []"),
    ), clues=(Clue("like_greedy_longest"), Clue("like_reversed"), Clue("like_overlapping_merge"),
              Clue("like_code_points"), Clue("like_offset"), Clue("like_normalised"), Clue("like_first_known_pair"),
              Clue("like_merges_as_set"), Clue("like_last_skipped"), Clue("like_unmerged"),
              Clue("like_first_merge_only")),
        diagnoses=(
        Diagnosis("encode-values", wrong=("whitespace", "like_normalised")),
        Diagnosis("encode-merge-order", wrong=("order", "like_first_known_pair")),
        Diagnosis("encode-merge-order", wrong=("order", "like_merges_as_set")),
        Diagnosis("encode-values", wrong=("training_text", "like_last_skipped")),
        Diagnosis("encode-values", wrong=("training_text", "like_unmerged")),
        Diagnosis("encode-values", wrong=("training_text", "like_first_merge_only")),
        Diagnosis("encode-values", wrong=("training_text", "like_offset")),
        Diagnosis("encode-merge-order", wrong=("order", "like_greedy_longest")),
        Diagnosis("encode-merge-order", wrong=("order", "like_reversed")),
        Diagnosis("bpe-overlapping-merge", wrong=("runs", "like_overlapping_merge")),
        Diagnosis("bpe-not-bytes", wrong=("unicode", "like_code_points"), right=("training_text",)),
        Diagnosis("encode-values", wrong=("pair",), right=("training_text", "new_text", "unicode", "order", "runs")),
    )),
    Check("bpe_decode", "decode", (
        Expect("ascii", "decode-values", observed="ids of ASCII text do not decode to that text"),
        Expect("accents", "decode-values", observed="ids of accented text do not decode to that text"),
        Expect("emoji", "decode-values", observed="ids of text with emoji do not decode to that text"),
        Expect("cjk", "decode-values", observed="ids of Chinese and Japanese text do not decode to that text"),
        Expect("whitespace", "decode-values",
               observed="ids of a text with whitespace at both ends do not decode to that text"),
        Expect("decomposed", "decode-values",
               observed="ids of text with decomposed accents (e + U+0301) do not decode to that text"),
        Expect("empty", "decode-values", observed="[] does not decode to ''"),
        Expect("split_character", "decode-per-token",
               observed="tokens that split a character's bytes between them do not decode to that character"),
        Expect("ids_unchanged", "modifies-argument"),
        Expect("invalid_bytes", "decode-errors",
               observed="bytes that are not UTF-8 do not decode to U+FFFD (with the valid ones kept)"),
    ), clues=(Clue("accents_first"), Clue("like_per_token"), Clue("like_latin_1"), Clue("like_errors_ignored"),
              Clue("like_pair_bytes"), Clue("like_repr"), Clue("like_zero_bytes"), Clue("like_spaced"),
              Clue("like_stripped"), Clue("like_nfc"), Clue("like_left_twice"), Clue("strict_error")), diagnoses=(
        Diagnosis("decode-values", wrong=("decomposed", "like_nfc")),
        Diagnosis("decode-values", wrong=("accents", "like_left_twice")),
        Diagnosis("decode-values", wrong=("ascii", "like_spaced")),
        Diagnosis("decode-values", wrong=("whitespace", "like_stripped")),
        Diagnosis("decode-values", wrong=("ascii", "like_repr")),
        Diagnosis("decode-values", wrong=("ascii", "like_zero_bytes")),
        Diagnosis("state-between-calls", wrong=("accents",), right=("accents_first",)),
        Diagnosis("decode-errors", wrong=("invalid_bytes", "like_errors_ignored")),
        Diagnosis("decode-values", wrong=("accents", "like_pair_bytes")),
        Diagnosis("decode-per-token", wrong=("accents", "like_per_token")),
        Diagnosis("decode-per-token", wrong=("split_character", "like_per_token")),
        Diagnosis("decode-not-utf8", wrong=("accents", "like_latin_1")),
        Diagnosis("decode-errors", wrong=("invalid_bytes", "strict_error"), right=("ascii", "accents", "emoji")),
    )),
    Check("rope_values", "apply_rope", (
        Expect("from_zero", "rope-values", atol=1e-5,
               observed="at positions 0 to 4, the rotated values differ"),
        Expect("late", "rope-values", atol=1e-4, observed="at positions 40 to 44, the rotated values differ"),
        Expect("odd_positions", "rope-values", atol=1e-5,
               observed="at positions that skip and repeat (0, 3, 3, 10, 2), the rotated values differ"),
        Expect("wide", "rope-values", atol=1e-5, observed="with d = 16, the rotated values differ"),
        Expect("base_100", "rope-values", atol=1e-4, observed="with base = 100, the rotated values differ"),
        Expect("two_dimensional", "rope-values", atol=1e-5,
               observed="for an input of shape (T, d), the rotated values differ"),
        Expect("float64", "rope-values", atol=1e-4, observed="for float64 input, the rotated values differ"),
        Expect("dtype_kept", "rope-dtype", observed="the output's dtype is not the input's (float32 or float64)"),
        Expect("x_unchanged", "modifies-argument"),
    ), clues=tuple(Clue(f"like_{slip}") for slip in ("halves", "exponent", "exponent_sign", "clockwise",
                                                     "integer_angles", "index_positions", "sign_typo",
                                                     "positions_from_one", "cos_sin_swapped", "halves_out",
                                                     "second_unrotated", "exponent_floor", "linspace_exponent",
                                                     "tiled", "log10", "exponent_precedence", "odd_exponents",
                                                     "pair_swapped", "angle_theta", "sequential_update",
                                                     "polar_swapped", "exponent_over_pairs",
                                                     "consecutive_positions", "frequencies_reversed", "angles_added",
                                                     "sin_from_cos")),
        diagnoses=(
        Diagnosis("rope-angle-exponent", wrong=("late", "like_exponent_sign")),
        Diagnosis("rope-angle-exponent", wrong=("late", "like_frequencies_reversed")),
        Diagnosis("rope-values", wrong=("from_zero", "like_angles_added")),
        Diagnosis("rope-values", wrong=("late", "like_sin_from_cos")),
        Diagnosis("rope-values", wrong=("late", "like_index_positions")),
        Diagnosis("rope-values", wrong=("late", "like_sign_typo")),
        Diagnosis("rope-halves", wrong=("late", "like_halves")),
        Diagnosis("rope-angle-exponent", wrong=("late", "like_exponent")),
        Diagnosis("rope-direction", wrong=("late", "like_clockwise")),
        Diagnosis("rope-integer-angles", wrong=("late", "like_integer_angles")),
        Diagnosis("rope-values", wrong=("late", "like_positions_from_one")),
        Diagnosis("rope-values", wrong=("late", "like_cos_sin_swapped")),
        Diagnosis("rope-values", wrong=("late", "like_halves_out")),
        Diagnosis("rope-not-relative", wrong=("late", "like_second_unrotated")),
        Diagnosis("rope-angle-exponent", wrong=("late", "like_exponent_floor")),
        Diagnosis("rope-angle-exponent", wrong=("late", "like_linspace_exponent")),
        Diagnosis("rope-values", wrong=("late", "like_tiled")),
        Diagnosis("rope-values", wrong=("late", "like_log10")),
        Diagnosis("rope-angle-exponent", wrong=("late", "like_exponent_precedence")),
        Diagnosis("rope-angle-exponent", wrong=("late", "like_odd_exponents")),
        Diagnosis("rope-values", wrong=("late", "like_pair_swapped")),
        Diagnosis("rope-values", wrong=("late", "like_angle_theta")),
        Diagnosis("rope-values", wrong=("late", "like_sequential_update")),
        # written into x in place: the second coordinate then reads the rotated first, which is that slip's values
        Diagnosis("modifies-argument", wrong=("x_unchanged", "late", "like_sequential_update")),
        Diagnosis("rope-not-relative", wrong=("late", "like_polar_swapped")),
        Diagnosis("rope-angle-exponent", wrong=("late", "like_exponent_over_pairs")),
        Diagnosis("rope-values", wrong=("odd_positions", "like_consecutive_positions")),
        Diagnosis("rope-dtype", wrong=("dtype_kept",), right=("from_zero", "float64")),
        Diagnosis("rope-base", wrong=("base_100",), right=("from_zero", "late", "odd_positions", "wide",
                                                          "two_dimensional", "float64")),
    )),
    Check("rope_relative", "apply_rope", (
        Expect("norms_kept", "rope-not-relative", observed="the rotation changes the vectors' lengths"),
        Expect("offset_free", "rope-not-relative",
               observed="moving queries and keys by the same offset changes their scores"),
        Expect("keys_moved_change", "rope-not-relative",
               observed="moving the keys alone leaves the scores as they were: the positions change nothing"),
        Expect("position_0_identity", "rope-values", observed="position 0 changes the vector"),
    )),
    Check("attention_cache", "CausalSelfAttention", (
        Expect("full", "attention-values",
               observed="inside the grader's GPT, the logits of a whole sequence at once differ"),
        Expect("stepwise", "attention-values", atol=1e-4,
               observed="token by token with the cache, the logits do not equal those of the whole sequence at once"),
        Expect("chunked", "attention-values", atol=1e-4,
               observed="three tokens, then four at once with their cache, do not give the logits of the whole "
                      "sequence"),
        Expect("cache_lengths", "cache-not-appended",
               observed="the cache does not grow by one position per token"),
        Expect("cached_keys", "attention-values", atol=1e-4,
               observed="the cached keys are not the rotated keys of every position so far, in order"),
        Expect("no_rope_full", "attention-values", observed="without RoPE, the logits of a whole sequence differ"),
        Expect("no_rope_stepwise", "attention-values", atol=1e-4,
               observed="without RoPE, the cached logits do not equal those of the whole sequence"),
        Expect("causal", "attention-not-causal",
               observed="changing the last two tokens changes the logits at earlier positions"),
    ), clues=tuple(Clue(f"like_{slip}") for slip in ("no_offset", "prepended", "no_scale", "scale_d_model",
                                                     "scaled_after_softmax", "rope_on_values", "heads_split",
                                                     "heads_merged", "cache_not_appended", "no_mask", "zero_fill",
                                                     "softmax_queries", "window_positions", "masked_after_softmax",
                                                     "mask_one_ahead", "no_proj", "qk_swapped", "heads_strided",
                                                     "scale_two_d_head", "rope_query_only", "positions_offset",
                                                     "value_cache_keys", "scale_key_count", "keys_by_queries",
                                                     "scale_multiplied", "rope_before_split",
                                                     "mask_without_cache_only", "global_softmax")),
        diagnoses=(
        Diagnosis("attention-not-causal", wrong=("causal", "like_no_mask")),
        Diagnosis("attention-not-causal", wrong=("causal", "like_zero_fill")),
        Diagnosis("attention-values", wrong=("full", "like_softmax_queries")),
        Diagnosis("attention-head-split", wrong=("full", "like_heads_merged")),
        Diagnosis("attention-scale", wrong=("full", "like_scaled_after_softmax")),
        Diagnosis("attention-values", wrong=("stepwise", "like_window_positions"), right=("full",)),
        Diagnosis("cache-mask-offset", wrong=("stepwise", "like_no_offset"), right=("full",)),
        Diagnosis("cache-order", wrong=("chunked", "like_prepended"), right=("full",)),
        Diagnosis("cache-not-appended", wrong=("cache_lengths", "like_cache_not_appended"), right=("full",)),
        Diagnosis("attention-scale", wrong=("full", "like_no_scale")),
        Diagnosis("attention-scale", wrong=("full", "like_scale_d_model")),
        Diagnosis("rope-on-values", wrong=("full", "like_rope_on_values"), right=("no_rope_full",)),
        Diagnosis("attention-head-split", wrong=("full", "like_heads_split")),
        Diagnosis("attention-not-causal", wrong=("causal", "like_masked_after_softmax")),
        Diagnosis("cache-mask-offset", wrong=("causal", "like_mask_one_ahead")),
        Diagnosis("attention-values", wrong=("full", "like_no_proj")),
        Diagnosis("attention-values", wrong=("full", "like_qk_swapped")),
        Diagnosis("attention-head-split", wrong=("full", "like_heads_strided")),
        Diagnosis("attention-scale", wrong=("full", "like_scale_two_d_head")),
        Diagnosis("attention-values", wrong=("full", "like_rope_query_only")),
        Diagnosis("attention-values", wrong=("stepwise", "like_positions_offset"), right=("full",)),
        Diagnosis("attention-values", wrong=("stepwise", "like_value_cache_keys"), right=("full",)),
        Diagnosis("attention-scale", wrong=("full", "like_scale_key_count")),
        Diagnosis("attention-values", wrong=("full", "like_keys_by_queries")),
        Diagnosis("attention-scale", wrong=("full", "like_scale_multiplied")),
        Diagnosis("attention-values", wrong=("full", "like_rope_before_split")),
        Diagnosis("cache-mask-offset", wrong=("chunked", "like_mask_without_cache_only"), right=("full",)),
        Diagnosis("attention-values", wrong=("full", "like_global_softmax")),
        Diagnosis("rope-flag", wrong=("no_rope_full",), right=("full", "stepwise", "chunked")),
        Diagnosis("cache-not-appended", wrong=("cache_lengths",), right=("full",)),
    )),
    Check("initial_loss", "init_weights", (
        Expect("loss_near_ln_v", "init-values",
               observed="after init_weights, the grader's GPT's loss on random tokens is not within 0.1 of ln 512"),
        Expect("weights_changed", "init-values",
               observed="after init_weights, every weight is as PyTorch drew it: init_weights changed none"),
        Expect("linear_std", "init-linear",
               observed="after init_weights, the nn.Linear weights' standard deviation is not near 0.02"),
        Expect("embedding_std", "init-embedding",
               observed="after init_weights, the nn.Embedding weights' standard deviation is not near 0.02"),
        Expect("draws_differ", "init-reseeds"),
        Expect("biases_zero", "init-bias"),
        Expect("layernorm", "init-layernorm"),
        Expect("other_modules_kept", "init-other-modules"),
        Expect("head_still_tied", "init-in-place"),
        Expect("container_kept", "init-other-modules"),
    ), diagnoses=(
        Diagnosis("init-other-modules", wrong=("other_modules_kept",)),  # first: its outputs fail with it
        Diagnosis("init-embedding", wrong=("loss_near_ln_v", "embedding_std"), right=("linear_std",)),
        Diagnosis("init-std", wrong=("linear_std", "embedding_std"), right=("weights_changed",)),
        Diagnosis("init-linear", wrong=("linear_std",), right=("weights_changed",)),
        Diagnosis("init-embedding", wrong=("embedding_std",), right=("weights_changed",)),
    )),
    Check("generate", "generate", (
        Expect("full_ids", "generate-values", observed="without the cache, the ids differ from greedy decoding's"),
        Expect("full_logits", "generate-logits", atol=1e-4,
               observed="without the cache, the logits returned differ from the last position's at each step"),
        Expect("full_dtype", "generate-values", observed="the ids are not int64"),
        Expect("cached_ids", "generate-values", observed="with the cache, the ids differ from greedy decoding's"),
        Expect("cached_logits", "generate-logits", atol=1e-4,
               observed="with the cache, the logits returned differ from the full recomputation's"),
        Expect("cached_calls", "generate-cache-unused",
               observed="with the cache, the model is not run on the prompt and then on one new id per step with "
                        "the caches"),
        Expect("full_calls", "generate-values",
               observed="without the cache, the model is not run on all the ids so far at each step"),
        Expect("full_no_grad", "generate-grad"),
        Expect("grad_mode_kept", "generate-grad"),
        Expect("single_shape", "generate-values",
               observed="for one prompt and one new token, the logits are not of shape (1, 1, vocab_size)"),
        Expect("cached_no_grad", "generate-grad"),
        Expect("full_argmax", "generate-values"),
        Expect("cached_argmax", "generate-values"),
        Expect("through_id_zero", "generate-values",
               observed="when the model's next id is 0, fewer ids than max_new_tokens come back: no id ends the text"),
    ), clues=(Clue("like_full_probabilities"), Clue("like_cached_probabilities"), Clue("like_full_first_position"),
              Clue("like_cached_first_position"), Clue("refeeds_ids"), Clue("drops_caches"), Clue("skips_prompt")),
        diagnoses=(
        Diagnosis("generate-cache-unused", wrong=("cached_calls", "skips_prompt")),
        Diagnosis("generate-logits", wrong=("full_logits", "like_full_first_position")),
        Diagnosis("generate-logits", wrong=("cached_logits", "like_cached_first_position")),
        Diagnosis("generate-cache-refeed", wrong=("cached_logits", "refeeds_ids")),
        Diagnosis("generate-cache-unused", wrong=("cached_calls", "drops_caches")),
        Diagnosis("generate-logits", wrong=("full_logits", "like_full_probabilities"), right=("full_ids",)),
        Diagnosis("generate-logits", wrong=("cached_logits", "like_cached_probabilities"), right=("cached_ids",)),
        Diagnosis("generate-cache-unused", wrong=("cached_calls",), right=("cached_ids", "cached_logits")),
    )),
    Check("optimizer_groups", "configure_optimizer", (
        Expect("type", "optimizer-settings", observed="configure_optimizer does not return a torch.optim.AdamW"),
        Expect("group_count", "optimizer-groups", observed="there are not exactly two parameter groups"),
        Expect("decayed", "optimizer-groups",
               observed="the first group is not exactly the weights of the nn.Linear layers that are not embeddings"),
        Expect("not_decayed", "optimizer-groups",
               observed="the second group is not exactly the biases, LayerNorm parameters and embeddings"),
        Expect("weight_decays", "optimizer-settings",
               observed="the groups' weight decays are not (weight_decay, 0.0)"),
        Expect("lr", "optimizer-settings", observed="the groups' learning rates are not the lr given"),
        Expect("betas", "optimizer-settings", observed="the groups' betas are not (0.9, 0.95)"),
        Expect("eps", "optimizer-settings", observed="eps is not AdamW's default, 1e-8"),
        Expect("each_once", "optimizer-groups", observed="not every parameter is in exactly one group, once"),
    ), clues=(Clue("decays_layernorm"), Clue("decays_biases"), Clue("decays_embeddings"), Clue("duplicate_error"),
              Clue("groups_swapped"), Clue("misses_linear_weights"), Clue("duplicated")), diagnoses=(
        Diagnosis("optimizer-duplicate", wrong=("each_once", "duplicated")),
        Diagnosis("optimizer-groups", wrong=("each_once",), right=("duplicated",)),
        Diagnosis("optimizer-groups", wrong=("decayed", "misses_linear_weights"), right=("group_count",)),
        Diagnosis("optimizer-groups", wrong=("decayed", "groups_swapped"), right=("group_count",)),
        Diagnosis("decay-on-norms-biases", wrong=("decayed", "decays_layernorm"), right=("group_count",)),
        Diagnosis("decay-on-norms-biases", wrong=("decayed", "decays_biases"), right=("group_count",)),
        Diagnosis("decay-on-embeddings", wrong=("decayed", "decays_embeddings"), right=("group_count", "decays_layernorm",
                                                                                       "decays_biases")),
        *(Diagnosis("optimizer-settings", wrong=(key,), right=GROUPS_RIGHT) for key in ("type", "weight_decays", "lr",
                                                                                       "betas")),
        Diagnosis("optimizer-duplicate", wrong=("type", "duplicate_error")),
        Diagnosis("optimizer-groups", wrong=("group_count",)),
    )),
    Check("lr_schedule", "lr_at", (
        Expect("warmup_10", "lr-values", atol=1e-9,
               observed="with 10 warm-up steps of 100 (max 1, min 0.1), the rates differ"),
        Expect("no_warmup", "lr-values", atol=1e-9, observed="with no warm-up, the rates differ"),
        Expect("warmup_1", "lr-values", atol=1e-9, observed="with one warm-up step, the rates differ"),
        Expect("flat", "lr-values", atol=1e-9, observed="with max_lr = min_lr, the rates are not constant"),
        Expect("floats", "lr-type", observed="lr_at does not return a Python float at every step"),
    ), clues=tuple(Clue(f"like_{slip}") for slip in ("warmup_from_zero", "warmup_linspace", "progress_over_total",
                                                     "progress_short", "no_floor", "no_clamp", "linear_decay",
                                                     "warmup_inclusive", "warmup_from_min", "progress_floor", "no_pi",
                                                     "bounds_swapped", "warmup_floor", "range_not_subtracted",
                                                     "degrees", "parentheses_lost", "warmup_plus_one",
                                                     "progress_from_zero", "steps_from_one", "no_half",
                                                     "warmup_over_total", "constant_without_warmup",
                                                     "floor_max_lr", "quarter_cosine", "min_lr_ratio", "full_period",
                                                     "warmup_clamped", "warmup_parentheses", "warmup_to_range",
                                                     "warmup_not_returned")),
        diagnoses=(
        Diagnosis("warmup-off-by-one", wrong=("warmup_10", "like_warmup_linspace")),
        Diagnosis("cosine-progress", wrong=("warmup_10", "like_progress_short")),
        Diagnosis("cosine-min-lr", wrong=("warmup_10", "like_no_clamp")),
        Diagnosis("warmup-off-by-one", wrong=("warmup_10", "like_warmup_from_zero")),
        Diagnosis("cosine-progress", wrong=("warmup_10", "like_progress_over_total")),
        Diagnosis("cosine-min-lr", wrong=("warmup_10", "like_no_floor")),
        Diagnosis("lr-shape", wrong=("warmup_10", "like_linear_decay")),
        Diagnosis("warmup-off-by-one", wrong=("warmup_10", "like_warmup_inclusive")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_warmup_from_min")),
        Diagnosis("cosine-progress", wrong=("warmup_10", "like_progress_floor")),
        Diagnosis("lr-shape", wrong=("warmup_10", "like_no_pi")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_bounds_swapped")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_warmup_floor")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_range_not_subtracted")),
        Diagnosis("lr-shape", wrong=("warmup_10", "like_degrees")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_parentheses_lost")),
        Diagnosis("warmup-off-by-one", wrong=("warmup_10", "like_warmup_plus_one")),
        Diagnosis("cosine-progress", wrong=("warmup_10", "like_progress_from_zero")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_steps_from_one")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_no_half")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_warmup_over_total")),
        Diagnosis("lr-values", wrong=("no_warmup", "like_constant_without_warmup")),
        Diagnosis("cosine-min-lr", wrong=("warmup_10", "like_floor_max_lr")),
        Diagnosis("lr-shape", wrong=("warmup_10", "like_quarter_cosine")),
        Diagnosis("cosine-min-lr", wrong=("warmup_10", "like_min_lr_ratio")),
        Diagnosis("lr-shape", wrong=("warmup_10", "like_full_period")),
        Diagnosis("lr-values", wrong=("no_warmup", "like_warmup_clamped")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_warmup_parentheses")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_warmup_to_range")),
        Diagnosis("lr-values", wrong=("warmup_10", "like_warmup_not_returned")),
        Diagnosis("lr-type", wrong=("floats",), right=("warmup_10", "no_warmup")),
    )),
    Check("train_step", "train_step", (
        Expect("losses", "train-step-values", atol=1e-5,
               observed="the losses returned are not the mean cross-entropy of each batch before its step"),
        Expect("loss_types", "loss-not-float"),
        Expect("steps_taken", "train-step-values", observed="the optimizer did not step once per call of train_step"),
        Expect("step_rates", "lr-not-set", atol=1e-12,
               observed="the learning rates when the optimizer stepped are not those train_step was given"),
        Expect("clipped", "clip-after-step",
               observed="the gradients when the optimizer stepped are not clipped to a norm of 1.0"),
        Expect("step_gradients", "train-step-values", atol=1e-5,
               observed="the gradients when the optimizer stepped are not this batch's, clipped to a norm of 1.0"),
        Expect("train_mode", "no-train-mode"),
        Expect("small_gradient", "clip-after-step", atol=1e-6,
               observed="a gradient whose norm is below 1.0 was changed before the step: clipping must leave it as it "
                        "is"),
        Expect("parameters", "train-step-values", atol=1e-5,
               observed="after three steps, the parameters differ"),
        Expect("overfits_one_batch", "train-step-values",
               observed="150 steps on one batch of a small GPT do not bring its loss below 0.1"),
    ), clues=(Clue("like_unclipped"), Clue("like_accumulated"), Clue("zero_gradients_at_step"),
              Clue("like_loss_summed"), Clue("like_loss_shifted_again"), Clue("like_loss_nll_of_logits"),
              Clue("like_loss_softmax_twice"), Clue("like_loss_last_position"), Clue("like_loss_inputs_as_targets"),
              Clue("like_loss_label_smoothing"), Clue("like_loss_ignore_zero"), Clue("like_loss_over_batch"),
              Clue("like_loss_time_major")),
        diagnoses=(
        Diagnosis("train-step-values", wrong=("losses", "like_loss_inputs_as_targets")),
        Diagnosis("train-step-values", wrong=("losses", "like_loss_label_smoothing")),
        Diagnosis("train-step-values", wrong=("losses", "like_loss_ignore_zero")),
        Diagnosis("train-step-values", wrong=("losses", "like_loss_over_batch")),
        Diagnosis("train-step-values", wrong=("losses", "like_loss_time_major")),
        Diagnosis("train-step-values", wrong=("steps_taken",)),
        Diagnosis("step-order", wrong=("step_gradients", "zero_gradients_at_step")),
        Diagnosis("train-step-values", wrong=("losses", "like_loss_summed")),
        Diagnosis("train-step-values", wrong=("losses", "like_loss_shifted_again")),
        Diagnosis("train-step-values", wrong=("losses", "like_loss_nll_of_logits")),
        Diagnosis("train-step-values", wrong=("losses", "like_loss_softmax_twice")),
        Diagnosis("train-step-values", wrong=("losses", "like_loss_last_position")),
        Diagnosis("no-zero-grad", wrong=("step_gradients", "like_accumulated")),
        Diagnosis("clip-after-step", wrong=("step_gradients", "like_unclipped")),
        Diagnosis("lr-not-set", wrong=("step_rates",), right=("steps_taken",)),
        Diagnosis("clip-after-step", wrong=("clipped",), right=("steps_taken",)),
    )),
)
