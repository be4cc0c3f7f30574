"""The grader's corpus for Attention Designed by Hand: the partial sample's bugs, mutants (each with the mistake it
must be diagnosed as, from MISTAKES in checks.py) and correct alternatives (course.measuring.grader_accuracy).

Edits change the instructor solution's answer cells; each (old, new) pair must match the solution exactly.
"""

from course.samples import Edit

MODULE, CONTENT, POSITION, CHALLENGE = ("answer-pytorch-transformer", "answer-attention-by-content",
                                        "answer-attention-by-position", "answer-attention-by-content-and-position")
SCORES = "weights = torch.softmax(Q @ K.T / math.sqrt(self.qk_dim), dim=-1)"
CONCAT = "torch.cat([seq, self.pos.weight[:seq_len]], dim=-1)"
LAYERS = ("        self.Qm = nn.Linear(total_input_dim, qk_dim, bias=False)\n"
          "        self.Km = nn.Linear(total_input_dim, qk_dim, bias=False)\n"
          "        self.Vm = nn.Linear(total_input_dim, v_dim, bias=False)\n")
PROJECT = "Q, K, V = self.Qm(x), self.Km(x), self.Vm(x)"
PENALTY = "    Qm[4:, 3:8], Km[4:, 3:8] = 60 * np.eye(5), -np.eye(5)  # same-position penalty\n"
CLS_COLUMN = "    Qm[:4, 8], Km[3, 8] = 30.0, 1.0  # every query asks for CLS with score 30 / 3 = 10\n"

SAMPLE_BUGS = (
    (Edit("positions_first", MODULE, ((CONCAT, "torch.cat([self.pos.weight[:seq_len], seq], dim=-1)"),),
          "positions concatenated before the tokens", "positions-order"), "pytorch_transformer_positions"),
    (Edit("content_hinted_scale", CONTENT, (("10 * np.eye(3)", "3 * np.eye(3)"),),
          "content design at the seed's hinted scale 3: outputs off by 0.027 at length 6", "design-margin"),
     "attention_by_content"),
    (Edit("challenge_no_penalty", CHALLENGE, ((PENALTY, ""),),
          "challenge without the same-position penalty: every token matches itself", "challenge-self-match"),
     "attention_by_content_and_position"),
)

MUTANTS = tuple(edit for edit, _ in SAMPLE_BUGS) + (
    # the layers
    Edit("bias_true", MODULE, (("bias=False", "bias=True"),), "layers with a bias", "linear-bias"),
    Edit("in_features_without_positions", MODULE, (("nn.Linear(total_input_dim,", "nn.Linear(input_dim,"),),
         "in_features ignores pos_dim", "in-features-pos"),
    Edit("values_to_qk_dim", MODULE, (("nn.Linear(total_input_dim, v_dim", "nn.Linear(total_input_dim, qk_dim"),),
         "Vm maps to qk_dim features", "out-features"),
    Edit("raw_parameters", MODULE, (
        (LAYERS, "        self.Qm = nn.Parameter(torch.randn(total_input_dim, qk_dim))\n"
                 "        self.Km = nn.Parameter(torch.randn(total_input_dim, qk_dim))\n"
                 "        self.Vm = nn.Parameter(torch.randn(total_input_dim, v_dim))\n"),
        (PROJECT, "Q, K, V = x @ self.Qm, x @ self.Km, x @ self.Vm")),
         "weights as raw nn.Parameter matrices", "raw-parameters"),
    Edit("plain_tensors", MODULE, (
        (LAYERS, "        self.Qm = torch.randn(qk_dim, total_input_dim, requires_grad=True)\n"
                 "        self.Km = torch.randn(qk_dim, total_input_dim, requires_grad=True)\n"
                 "        self.Vm = torch.randn(v_dim, total_input_dim, requires_grad=True)\n"),
        (PROJECT, "Q, K, V = x @ self.Qm.T, x @ self.Km.T, x @ self.Vm.T")),
         "weights as plain tensors, never registered", "unregistered-parameters"),
    # the attention formula
    Edit("softmax_over_queries", MODULE, ((SCORES, SCORES.replace("dim=-1", "dim=0")),), "softmax over dim 0",
         "softmax-axis"),
    Edit("unscaled", MODULE, ((" / math.sqrt(self.qk_dim)", ""),), "scores not scaled", "attention-scale"),
    Edit("scaled_by_qk_dim", MODULE, (("math.sqrt(self.qk_dim)", "self.qk_dim"),), "scores / qk_dim",
         "attention-scale"),
    Edit("scaled_by_v_dim", MODULE, (("math.sqrt(self.qk_dim)", "math.sqrt(self.v_dim)"),), "scores / sqrt(v_dim)",
         "attention-scale"),
    Edit("scaled_by_length", MODULE, (("math.sqrt(self.qk_dim)", "math.sqrt(K.shape[0])"),),
         "scores / sqrt(number of keys)", "attention-scale"),
    Edit("scores_transposed", MODULE, (("Q @ K.T", "K @ Q.T"),), "K @ Q.T", "scores-transposed"),
    Edit("dropout_on_weights", MODULE, (("return weights @ V", "return torch.dropout(weights, 0.1, self.training) @ V"),),
         "dropout on the attention weights", "dropout-added"),
    Edit("float64_scale", MODULE, (("math.sqrt(self.qk_dim)", "torch.as_tensor(np.sqrt([self.qk_dim]))"),),
         "a float64 tensor mixed in: float64 weights times float32 values fail", "mixed-dtypes"),
    Edit("positions_shifted", MODULE, (("self.pos.weight[:seq_len]", "self.pos.weight[-seq_len:]"),),
         "the last seq_len rows of the table", "positions-concat"),
    # gradients
    Edit("numpy_round_trip", MODULE, ((PROJECT, "x = torch.tensor(x.detach().numpy())\n        " + PROJECT),),
         "the input goes through NumPy", "gradients-broken"),
    Edit("no_grad", MODULE, ((SCORES, "with torch.no_grad():\n            " + SCORES),), "scores under no_grad",
         "gradients-broken"),
    Edit("positions_detached", MODULE, (("self.pos.weight[:seq_len]", "self.pos.weight[:seq_len].detach()"),),
         "the positional table detached", "gradients-broken"),
    # attention by content
    Edit("content_identity", CONTENT, (("10 * np.eye(3)", "np.eye(3)"),), "Km = Qm = I: near-uniform attention",
         "design-margin"),
    Edit("content_values_permuted", CONTENT, (("Vm = np.eye(3)", "Vm = np.eye(3)[[1, 2, 0]]"),), "Vm permuted",
         "design-values"),
    Edit("content_queries_mismatched", CONTENT, (("Qm = 10 * np.eye(3)", "Qm = 10 * (1 - np.eye(3))"),),
         "queries prefer the other tokens", "content-selection"),
    Edit("content_without_values", CONTENT, (("return Km, Qm, Vm", "return Km, Qm"),), "Vm not returned",
         "design-shapes"),
    Edit("content_scales_a_global", CONTENT, (
        ("def attention_by_content():", "BASE = np.eye(3)\n\n\ndef attention_by_content():"),
        ("Km = 10 * np.eye(3)", "Km = BASE\n    Km *= 10")),
         "scales a global array in place: another design at every call", "state-between-calls"),
    # attention by position
    Edit("position_key_on_last", POSITION, (("Km[3, 0] = 1.0", "Km[6, 0] = 1.0"),), "the key marks the last position",
         "position-key"),
    Edit("position_queries_from_a_only", POSITION, (("Qm[:3, 0] = 20.0", "Qm[0, 0] = 20.0"),),
         "only token A asks for position 0", "position-query"),
    Edit("position_small_scores", POSITION, (("Qm[:3, 0] = 20.0", "Qm[:3, 0] = 2.0"),), "score gap of 2",
         "design-margin"),
    Edit("position_values_from_positions", POSITION, (("Vm[:3] = np.eye(3)", "Vm[3:6] = np.eye(3)"),),
         "the values read the positions", "design-values"),
    Edit("position_table_too_short", POSITION, (("pos = np.eye(4)", "pos = np.eye(4)[:3]"),), "pos has 3 rows",
         "pos-too-few-rows"),
    # the challenge
    Edit("challenge_no_cls_offset", CHALLENGE, ((CLS_COLUMN, ""),), "no CLS column: lone tokens attend evenly",
         "challenge-cls-offset"),
    Edit("challenge_value_signs_swapped", CHALLENGE, (("= -1.0, 1.0", "= 1.0, -1.0"),), "value signs swapped",
         "challenge-value-signs"),
    Edit("challenge_cls_too_strong", CHALLENGE, (("30.0, 1.0", "90.0, 1.0"),), "CLS outscores a copy",
         "challenge-content"),
    Edit("challenge_table_too_short", CHALLENGE, (("pos = np.eye(5)", "pos = np.eye(5)[:4]"),), "pos has 4 rows",
         "pos-too-few-rows"),
)


# Written after the catalogue and the checks, as held-out tests of the diagnosis (5 of 10 diagnosed before the
# grader learned from them: the distinct-layers clue, the row sums that are all alike, the forward error told
# apart from the backward one).
MUTANTS += (
    Edit("scale_after_softmax", MODULE, ((SCORES, "weights = torch.softmax(Q @ K.T, dim=-1) / math.sqrt(self.qk_dim)"),),
         "divides the weights, not the scores", "attention-scale"),
    Edit("queries_and_keys_swapped", MODULE, ((PROJECT, "Q, K, V = self.Km(x), self.Qm(x), self.Vm(x)"),),
         "Q from Km and K from Qm", "scores-transposed"),
    Edit("one_layer_for_queries_and_keys", MODULE, (
        ("self.Km = nn.Linear(total_input_dim, qk_dim, bias=False)", "self.Km = self.Qm"),),
         "Km is Qm", "layers-shared"),
    Edit("positions_stacked_below", MODULE, ((CONCAT, CONCAT.replace("dim=-1", "dim=0")),),
         "positions concatenated as rows", "positions-concat"),
    Edit("values_from_queries", MODULE, ((PROJECT, "Q, K, V = self.Qm(x), self.Km(x), self.Qm(x)"),), "V = Q",
         "attention-formula"),
    Edit("content_values_scaled", CONTENT, (("Vm = np.eye(3)", "Vm = 10 * np.eye(3)"),), "values 10 times the tokens",
         "design-values"),
    Edit("content_keys_negated", CONTENT, (("Km = 10 * np.eye(3)", "Km = -10 * np.eye(3)"),), "keys negated",
         "content-selection"),
    Edit("position_table_blank", POSITION, (("pos = np.eye(4)", "pos = np.zeros((4, 4))"),), "an all-zero table",
         "position-key"),
    Edit("challenge_no_cls_query", CHALLENGE, (("Qm[:4, 8], Km[3, 8] = 30.0, 1.0", "Km[3, 8] = 1.0"),),
         "a CLS key no query asks for", "challenge-cls-offset"),
    Edit("challenge_penalty_weak", CHALLENGE, (("60 * np.eye(5), -np.eye(5)", "30 * np.eye(5), -np.eye(5)"),),
         "a penalty that only ties a token's match with itself to CLS", "challenge-self-match"),
)

ALTERNATIVES = (
    Edit("layers_other_order", MODULE, ((LAYERS, "\n".join(reversed(LAYERS.rstrip("\n").split("\n"))) + "\n"),),
         "the layers created in another order"),
    Edit("layers_positional_bias_argument", MODULE, (("bias=False", "False"),), "bias as a positional argument"),
    Edit("layers_setattr_loop", MODULE, ((LAYERS, "        for name, out in ((\"Qm\", qk_dim), (\"Km\", qk_dim), "
                                                  "(\"Vm\", v_dim)):\n"
                                                  "            setattr(self, name, nn.Linear(total_input_dim, out, "
                                                  "bias=False))\n"),),
         "a setattr loop"),
    Edit("torch_sdpa", MODULE, ((SCORES + "  # each query's row sums to 1\n        return weights @ V",
                                 "return nn.functional.scaled_dot_product_attention(Q[None], K[None], V[None])[0]"),),
         "F.scaled_dot_product_attention"),
    Edit("einsum_scores", MODULE, (("Q @ K.T", "torch.einsum(\"qd,kd->qk\", Q, K)"),), "einsum"),
    Edit("positions_by_lookup", MODULE, (("self.pos.weight[:seq_len]", "self.pos(torch.arange(seq_len))"),),
         "self.pos(torch.arange(n))"),
    Edit("loop_over_queries", MODULE, ((SCORES + "  # each query's row sums to 1\n        return weights @ V",
                                        "return torch.stack([torch.softmax(K @ q / math.sqrt(self.qk_dim), dim=0) @ V "
                                        "for q in Q])"),), "one query at a time"),
    Edit("content_scale_100", CONTENT, (("10 * np.eye(3)", "100 * np.eye(3)"),), "content design at scale 100"),
    Edit("content_two_dimensions", CONTENT, (("Km = 10 * np.eye(3)", "Km = 10 * np.array([[1, 0], [-0.5, 0.75 ** 0.5], "
                                                                     "[-0.5, -0.75 ** 0.5]])"),
                                             ("Qm = 10 * np.eye(3)", "Qm = Km.copy()")),
         "content design with qk_dim = 2: three keys 120 degrees apart"),
    Edit("content_asymmetric", CONTENT, (("Km = 10 * np.eye(3)", "Km = np.eye(3)"),
                                         ("Qm = 10 * np.eye(3)", "Qm = 100 * np.eye(3)")), "Qm = 100 I, Km = I"),
    Edit("content_lists_of_ints", CONTENT, (("Km = 10 * np.eye(3)", "Km = [[10, 0, 0], [0, 10, 0], [0, 0, 10]]"),
                                            ("Qm = 10 * np.eye(3)", "Qm = [[10, 0, 0], [0, 10, 0], [0, 0, 10]]"),
                                            ("Vm = np.eye(3)", "Vm = [[1, 0, 0], [0, 1, 0], [0, 0, 1]]")),
         "nested lists of ints"),
    Edit("position_one_column_table", POSITION, (("pos = np.eye(4)", "pos = np.eye(4)[:, :1]"),
                                                 ("np.zeros((7, 1))", "np.zeros((4, 1))"),
                                                 ("np.zeros((7, 3))", "np.zeros((4, 3))")),
         "a positional table of one column"),
    Edit("position_ten_rows", POSITION, (("pos = np.eye(4)", "pos = np.eye(10)"), ("np.zeros((7, 1))", "np.zeros((13, 1))"),
                                         ("np.zeros((7, 3))", "np.zeros((13, 3))")), "a 10-row positional table"),
    Edit("challenge_simplex_table", CHALLENGE, (("pos = np.eye(5)", "pos = np.eye(5) - 0.2"),),
         "positions at the corners of a centred simplex"),
    Edit("challenge_scaled_by_10", CHALLENGE, (("    Vm = np.zeros((9, 1))", "    Qm = 10 * Qm\n    Vm = np.zeros((9, 1))"),),
         "every score times 10"),
    # held out, as the mutants above
    Edit("softmax_over_dim_1", MODULE, ((SCORES, SCORES.replace("dim=-1", "dim=1")),), "dim=1 of a 2-D tensor"),
    Edit("weights_multiplied", MODULE, ((PROJECT, "Q, K, V = x @ self.Qm.weight.T, x @ self.Km.weight.T, "
                                                  "x @ self.Vm.weight.T"),), "x @ layer.weight.T"),
    Edit("scale_from_shape", MODULE, (("math.sqrt(self.qk_dim)", "Q.shape[-1] ** 0.5"),), "Q.shape[-1] ** 0.5"),
    Edit("position_negative_keys", POSITION, (("Km[3, 0] = 1.0", "Km[4:, 0] = -1.0"),),
         "the other positions' keys pushed down instead"),
)


# Written after the rules were frozen (commit 3da4907), without reading the grader's rules: held-out mutants and
# alternatives, kept apart from MUTANTS and ALTERNATIVES so that their figures stay visible.
#
# The mistake names they introduced are now in the catalogue (MISTAKES in checks.py, with their advice): kv-cache-stale,
# softmax-overflow, broadcast-keepdim, mask-added, challenge-cls-value and challenge-blocks-overlap;
# state-between-calls is one of course.verdicts.COMMON_MISTAKES.
FRESH_MUTANTS = (
    # PytorchTransformer
    Edit("keys_values_cached_once", MODULE, (
        (LAYERS, LAYERS + "        self.cache = None  # keys and values, computed once\n"),
        (PROJECT, "Q = self.Qm(x)\n        if self.cache is None:\n            self.cache = self.Km(x), self.Vm(x)\n"
                  "        K, V = self.cache")),
         "keys and values cached at the first call and never recomputed", "kv-cache-stale"),
    Edit("scale_folded_into_weights_each_call", MODULE, (
        (PROJECT, "self.Qm.weight.data /= math.sqrt(self.qk_dim)  # scale folded into the queries\n        " + PROJECT),
        (" / math.sqrt(self.qk_dim)", "")),
         "divides Qm.weight in place at every forward instead of scaling the scores", "state-between-calls"),
    Edit("scaled_by_input_dim", MODULE, (("math.sqrt(self.qk_dim)", "math.sqrt(self.input_dim)"),),
         "scores / sqrt(input_dim), the model width of the tutorials", "attention-scale"),
    Edit("scale_operator_precedence", MODULE, (("Q @ K.T / math.sqrt(self.qk_dim)", "Q @ K.T / self.qk_dim ** 1/2"),),
         "qk_dim ** 1/2 parses as qk_dim / 2: scores / qk_dim / 2", "attention-scale"),
    Edit("softmax_by_hand_without_max", MODULE, (
        (SCORES, "scores = torch.exp(Q @ K.T / math.sqrt(self.qk_dim))\n"
                 "        weights = scores / scores.sum(dim=-1, keepdim=True)"),),
         "softmax written as exp / sum, no maximum subtracted: nan for large scores", "softmax-overflow"),
    Edit("softmax_max_without_keepdim", MODULE, (
        (SCORES, "scores = Q @ K.T / math.sqrt(self.qk_dim)\n"
                 "        weights = torch.exp(scores - scores.max(dim=-1).values)  # stable\n"
                 "        weights = weights / weights.sum(dim=-1, keepdim=True)"),),
         "row maximum subtracted without keepdim: column j shifted by row j's maximum", "broadcast-keepdim"),
    Edit("weights_transposed_before_values", MODULE, (("return weights @ V", "return weights.T @ V"),),
         "weights.T @ V: each output mixes by a column of the weights", "attention-formula"),
    Edit("positions_from_row_one", MODULE, (("self.pos.weight[:seq_len]", "self.pos.weight[1:seq_len + 1]"),),
         "positions counted from 1: rows 1 to seq_len of the table", "positions-concat"),
    Edit("causal_mask_added", MODULE, (
        (SCORES, "scores = Q @ K.T / math.sqrt(self.qk_dim)\n"
                 "        future = torch.triu(torch.ones(seq_len, seq_len, dtype=torch.bool), diagonal=1)\n"
                 "        weights = torch.softmax(scores.masked_fill(future, float(\"-inf\")), dim=-1)"),),
         "a causal mask: queries ignore later keys", "mask-added"),
    Edit("input_dropout_always_on", MODULE, ((PROJECT, "x = nn.functional.dropout(x, p=0.1)\n        " + PROJECT),),
         "F.dropout on the inputs without training=: random in every mode", "dropout-added"),
    Edit("output_as_float64", MODULE, (("return weights @ V", "return (weights @ V).double()"),),
         "the output converted to float64", "mixed-dtypes"),
    Edit("attention_kept_detached", MODULE, (
        ("return weights @ V", "self.attention = weights.detach()  # kept for plotting\n        return self.attention @ V"),),
         "the detached copy of the weights, kept for plotting, multiplies V: no gradient reaches Qm, Km",
         "gradients-broken"),
    # attention by content
    Edit("content_returns_a_pos", CONTENT, (("return Km, Qm, Vm", "return Km, Qm, Vm, None"),),
         "returns (Km, Qm, Vm, None) like the position task", "design-shapes"),
    Edit("content_weights_overflow", CONTENT, (("Km = 10 * np.eye(3)", "Km = 1e200 * np.eye(3)"),
                                               ("Qm = 10 * np.eye(3)", "Qm = 1e200 * np.eye(3)")),
         "enormous weights for hard attention: the scores overflow to inf, outputs nan", "design-not-finite"),
    Edit("content_gap_before_scaling", CONTENT, (("Km = 10 * np.eye(3)", "Km = np.sqrt(6.5) * np.eye(3)"),
                                                 ("Qm = 10 * np.eye(3)", "Qm = np.sqrt(6.5) * np.eye(3)")),
         "aims at a gap of 6.5 but forgets the division by sqrt(qk_dim): gap 3.75", "design-margin"),
    # attention by position
    Edit("position_returns_qm_first", POSITION, (("return Km, Qm, Vm, pos", "return Qm, Km, Vm, pos"),),
         "returns (Qm, Km, Vm, pos): queries and keys swapped", "design-shapes"),
    Edit("position_queries_range_end", POSITION, (("Qm[:3, 0] = 20.0", "Qm[3:6, 0] = 20.0"),),
         "queries read positions 3:6, missing the last position row", "position-query"),
    Edit("position_queries_negated", POSITION, (("Qm[:3, 0] = 20.0", "Qm[:3, 0] = -20.0"),),
         "queries of -20: position 0 scored lowest", "position-query"),
    # the challenge
    Edit("challenge_cls_without_value", CHALLENGE, (("Vm[:3, 0], Vm[3, 0] = -1.0, 1.0", "Vm[:3, 0] = -1.0"),),
         "CLS given no value: lone tokens output about 0, slightly negative", "challenge-cls-value"),
    Edit("challenge_penalty_rows_from_cls", CHALLENGE, (("Qm[4:, 3:8]", "Qm[3:8, 3:8]"),),
         "penalty query rows start at the CLS row: each query penalises the next position", "challenge-self-match"),
    Edit("challenge_blocks_share_a_column", CHALLENGE, (("Qm[4:, 3:8], Km[4:, 3:8]", "Qm[4:, 2:7], Km[4:, 2:7]"),),
         "penalty block one column early, on the content column of C", "challenge-blocks-overlap"),
)

FRESH_ALTERNATIVES = (
    Edit("layers_keyword_arguments", MODULE, (
        (LAYERS, "        self.Qm = nn.Linear(in_features=total_input_dim, out_features=qk_dim, bias=False)\n"
                 "        self.Km = nn.Linear(in_features=total_input_dim, out_features=qk_dim, bias=False)\n"
                 "        self.Vm = nn.Linear(in_features=total_input_dim, out_features=v_dim, bias=False)\n"),),
         "nn.Linear with keyword arguments"),
    Edit("functional_linear", MODULE, (
        (PROJECT, "Q, K, V = (nn.functional.linear(x, layer.weight) for layer in (self.Qm, self.Km, self.Vm))"),),
         "F.linear with each layer's weight"),
    Edit("softmax_by_hand_stable", MODULE, (
        (SCORES, "scores = Q @ K.T / math.sqrt(self.qk_dim)\n"
                 "        scores = scores - scores.amax(dim=-1, keepdim=True)\n"
                 "        weights = scores.exp() / scores.exp().sum(dim=-1, keepdim=True)"),),
         "a stable softmax written by hand"),
    Edit("queries_scaled_first", MODULE, (
        (SCORES, "weights = torch.softmax((Q / math.sqrt(self.qk_dim)) @ K.transpose(0, 1), dim=-1)"),),
         "Q divided by sqrt(qk_dim) before the product, K.transpose(0, 1)"),
    Edit("positions_hstack", MODULE, ((CONCAT, "torch.hstack((seq, self.pos.weight[:seq_len]))"),),
         "torch.hstack of tokens and positions"),
    Edit("content_queries_row_shifted", CONTENT, (("Qm = 10 * np.eye(3)", "Qm = 10 * np.eye(3) - 5"),),
         "every score of a query shifted by the same constant"),
    Edit("content_padded_qk_column", CONTENT, (("Km = 10 * np.eye(3)", "Km = 10 * np.eye(3, 4)"),
                                               ("Qm = 10 * np.eye(3)", "Qm = 10 * np.eye(3, 4)")),
         "qk_dim = 4 with a zero column: gap 50"),
    Edit("position_queries_from_positions", POSITION, (("Qm[:3, 0] = 20.0", "Qm[3:, 0] = 20.0"),),
         "the queries read the one-hot position instead of the token"),
    Edit("position_scalar_index", POSITION, (("pos = np.eye(4)", "pos = np.arange(4.0)[:, None]"),
                                             ("np.zeros((7, 1))", "np.zeros((4, 1))"),
                                             ("Km[3, 0] = 1.0", "Km[3, 0] = -1.0"),
                                             ("np.zeros((7, 3))", "np.zeros((4, 3))")),
         "position as one number 0..3, keys -position: position 0 scores highest"),
    Edit("position_values_eye_7_by_3", POSITION, (("Vm = np.zeros((7, 3))\n    Vm[:3] = np.eye(3)", "Vm = np.eye(7, 3)"),),
         "Vm = np.eye(7, 3)"),
    Edit("challenge_cls_value_on_position_0", CHALLENGE, (("Vm[:3, 0], Vm[3, 0]", "Vm[:3, 0], Vm[4, 0]"),),
         "CLS's value on its position row p0 (CLS is always at position 0)"),
    Edit("challenge_cls_key_on_position_0", CHALLENGE, (("Km[3, 8]", "Km[4, 8]"),),
         "the CLS key read from position 0's row"),
)


# Written after the rules were frozen (commit 1dca0df), without reading the grader's rules: a second held-out set,
# kept apart from MUTANTS, ALTERNATIVES, FRESH_MUTANTS and FRESH_ALTERNATIVES so that its figures stay visible (the
# rules were re-tuned on FRESH_MUTANTS; this set measures them again on mistakes they have never seen).
#
# New mistake names used below (not in MISTAKES of checks.py):
# forward-returns-tuple: forward returns one tensor, the output (seq_len, v_dim); reference_attention also returns
#     the weights, but the module must not (callers multiply, compare and train on model(seq) directly).
# log-softmax: use torch.softmax; log_softmax returns the logarithms of the weights (all negative, rows that do not
#     sum to 1), so the output is not a weighted average of the values.
# output-squeezed: return the (seq_len, v_dim) result as it is; .squeeze() drops the dimensions of size 1, so a
#     sequence of one token or a layer with v_dim = 1 returns the wrong shape (and MSELoss then broadcasts silently).
# floor-division: divide the scores with /, not //: floor division rounds every score down to an integer, and it
#     has no gradient (backward fails: the derivative of floor_divide is not implemented), so nothing trains.
# device-mismatch: build intermediate tensors from the input (torch.cat, seq.new_zeros(...), device=seq.device):
#     a tensor created with torch.zeros(...) lives on the CPU, and the layers fail when Part 3 trains on a GPU.
# zero-init: keep nn.Linear's random initialisation: with Qm and Km both zero, the gradient of each is multiplied by
#     the other, so both stay zero and the attention stays uniform however long you train.
# arrays-aliased: Km = Qm = Vm = np.eye(3) makes one array with three names; scaling one in place (*=) scales all
#     three: create each matrix on its own, or .copy() it.
HELD_OUT_MUTANTS = (
    # PytorchTransformer
    Edit("forward_returns_weights_too", MODULE, (("return weights @ V", "return weights @ V, weights"),),
         "forward returns (output, weights), like reference_attention", "forward-returns-tuple"),
    Edit("log_softmax_weights", MODULE, ((SCORES, SCORES.replace("torch.softmax", "torch.log_softmax")),),
         "torch.log_softmax instead of torch.softmax: log-weights multiply V", "log-softmax"),
    Edit("output_squeezed", MODULE, (("return weights @ V", "return (weights @ V).squeeze()"),),
         ".squeeze() on the output: (seq_len,) for v_dim = 1, (v_dim,) for one token", "output-squeezed"),
    Edit("softmax_over_the_output", MODULE, (
        (SCORES + "  # each query's row sums to 1\n        return weights @ V",
         "return torch.softmax(Q @ K.T / math.sqrt(self.qk_dim) @ V, dim=-1)"),),
         "steps out of order: the softmax applied to scores @ V, after the values", "attention-formula"),
    Edit("seq_len_from_last_axis", MODULE, (("seq_len = seq.shape[0]", "seq_len = seq.shape[-1]"),),
         "seq_len read from the feature axis: input_dim rows of the table", "positions-concat"),
    Edit("scores_floor_divided", MODULE, (("Q @ K.T / math.sqrt", "Q @ K.T // math.sqrt"),),
         "// instead of /: every score floored, and backward fails", "floor-division"),
    Edit("input_preallocated_on_cpu", MODULE, (
        ("x = seq if self.pos is None else " + CONCAT,
         "x = torch.zeros(seq_len, self.Qm.in_features)  # on the CPU, in float32, whatever seq is\n"
         "        x[:, :self.input_dim] = seq\n"
         "        if self.pos is not None:\n"
         "            x[:, self.input_dim:] = self.pos.weight[:seq_len]"),),
         "the input rows filled into a torch.zeros tensor created on the CPU: fails on a GPU", "device-mismatch"),
    Edit("layers_zero_initialised", MODULE, (
        (LAYERS, LAYERS + "        for layer in (self.Qm, self.Km, self.Vm):\n"
                          "            nn.init.zeros_(layer.weight)  # start from uniform attention\n"),),
         "every layer initialised to zero: Qm and Km get no gradient and never train", "zero-init"),
    # attention by content
    Edit("content_ones_for_eye", CONTENT, (("Km = 10 * np.eye(3)", "Km = 10 * np.ones((3, 3))"),),
         "np.ones for np.eye: every key alike, attention uniform", "content-selection"),
    Edit("content_arrays_aliased", CONTENT, (
        ("    Km = 10 * np.eye(3)\n    Qm = 10 * np.eye(3)\n    Vm = np.eye(3)",
         "    Km = Qm = Vm = np.eye(3)\n    Km *= 10\n    Qm *= 10"),),
         "Km = Qm = Vm = np.eye(3), then scaled in place: one array, Vm = 100 I", "arrays-aliased"),
    Edit("content_linear_weight_convention", CONTENT, (("Km = 10 * np.eye(3)", "Km = 10 * np.eye(4, 3)"),
                                                       ("Qm = 10 * np.eye(3)", "Qm = 10 * np.eye(4, 3)")),
         "qk_dim = 4 with the matrices in nn.Linear's (out, in) shape (4, 3)", "design-shapes"),
    # attention by position
    Edit("position_key_on_token_row", POSITION, (("Km[3, 0] = 1.0", "Km[0, 0] = 1.0"),),
         "the key reads row 0 (token A) for 'position 0': queries attend to the A tokens", "position-key"),
    Edit("position_table_wider_than_matrices", POSITION, (("pos = np.eye(4)", "pos = np.eye(5)"),),
         "a 5-column table while Km, Qm, Vm keep 3 + 4 rows", "design-shapes"),
    # the challenge
    Edit("challenge_penalty_sign_flipped", CHALLENGE, (("-np.eye(5)  # same-position", "np.eye(5)  # same-position"),),
         "the same-position 'penalty' with a + sign: a token's own key scores 40", "challenge-self-match"),
    Edit("challenge_cls_key_on_every_token", CHALLENGE, (("Km[3, 8] = 30.0, 1.0", "Km[:4, 8] = 30.0, 1.0"),),
         "the slice [:4] of the query copied to the key: every key gets the CLS score", "challenge-cls-offset"),
    Edit("challenge_cls_key_on_row_0", CHALLENGE, (("Km[3, 8]", "Km[0, 8]"),),
         "CLS comes first, so its key was put on row 0 (token A's feature)", "challenge-cls-offset"),
)

HELD_OUT_ALTERNATIVES = (
    Edit("layers_one_tuple_assignment", MODULE, (
        (LAYERS, "        self.Qm, self.Km, self.Vm = (nn.Linear(total_input_dim, qk_dim, bias=False),\n"
                 "                                     nn.Linear(total_input_dim, qk_dim, bias=False),\n"
                 "                                     nn.Linear(total_input_dim, v_dim, bias=False))\n"),),
         "the three layers created in one tuple assignment (same order)"),
    Edit("log_softmax_exponentiated", MODULE, ((SCORES, "weights = torch.log_softmax(Q @ K.T / math.sqrt(self.qk_dim), "
                                                        "dim=-1).exp()"),),
         "exp of log_softmax"),
    Edit("softmax_of_transposed_scores", MODULE, ((SCORES, "weights = torch.softmax((Q @ K.T).T / math.sqrt(self.qk_dim), "
                                                           "dim=0).T"),),
         "softmax over dim 0 of the transposed scores, transposed back"),
    Edit("positions_by_padding", MODULE, (
        (CONCAT, "(nn.functional.pad(seq, (0, self.pos.embedding_dim))\n"
                 "                                            + nn.functional.pad(self.pos.weight[:seq_len], "
                 "(self.input_dim, 0)))"),),
         "tokens and positions zero-padded to the full width and added"),
    Edit("matmul_times_inverse_sqrt", MODULE, (("Q @ K.T / math.sqrt(self.qk_dim)",
                                                "torch.matmul(Q, K.transpose(-2, -1)) * self.qk_dim ** -0.5"),),
         "torch.matmul, transpose(-2, -1) and a factor qk_dim ** -0.5"),
    Edit("content_question_1_symmetry", CONTENT, (
        ("Km = 10 * np.eye(3)", "M = np.array([[1.0, 2.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])\n"
                                "    Km = 10 * np.linalg.inv(M).T"),
        ("Qm = 10 * np.eye(3)", "Qm = 10 * M")),
         "Qm = 10 M, Km = 10 M^-T: the same Qm Km^T = 100 I"),
    Edit("content_both_negated", CONTENT, (("Km = 10 * np.eye(3)", "Km = -10 * np.eye(3)"),
                                           ("Qm = 10 * np.eye(3)", "Qm = -10 * np.eye(3)")),
         "Km = Qm = -10 I: the product is unchanged"),
    Edit("position_queries_from_every_row", POSITION, (("Qm[:3, 0] = 20.0", "Qm[:, 0] = 10.0"),),
         "every row of Qm 10: token 10 + position 10 = 20 for every query"),
    Edit("challenge_penalty_stronger", CHALLENGE, (("60 * np.eye(5), -np.eye(5)", "90 * np.eye(5), -np.eye(5)"),),
         "a same-position penalty of -30: a token's own key scores -10"),
    Edit("challenge_token_values_doubled", CHALLENGE, (("= -1.0, 1.0", "= -2.0, 1.0"),),
         "tokens' value -2, CLS's +1: only the signs are judged"),
)
