"""Correct implementations written differently from the solution: all must get full marks."""

from course.samples import Edit

from .mutants import ATT, BLOCK, EMB, FF, LN, MHA, MODEL, PE, SOFTMAX, TE, T, TRAIN

ALTERNATIVES = (
    Edit("clean_text_character_loop", T, (('return " ".join(re.findall(r"[^\\W_]+(?:\'[^\\W_]+)*", text.lower()))',
        """words, word = [], ""
        text = text.lower()
        for i, ch in enumerate(text):
            inner_apostrophe = ch == "'" and word and i + 1 < len(text) and text[i + 1].isalnum()
            if ch.isalnum() or inner_apostrophe:
                word += ch
            else:
                if word:
                    words.append(word)
                word = ""
        return " ".join(words + [word] if word else words)"""),), "clean_text as a character loop"),
    Edit("vocab_sorted_by_count_then_first_seen", T, (
        ("words = [word for word, _ in counts.most_common(max(self.vocab_size - len(specials), 0))]",
         "first_seen = {word: i for i, word in enumerate(counts)}\n"
         "        ranked = sorted(counts, key=lambda w: (-counts[w], first_seen[w]))\n"
         "        words = ranked[: max(self.vocab_size - len(specials), 0)]"),), "explicit sort instead of most_common"),
    Edit("embedding_power_scale", EMB, (("* math.sqrt(self.d_model)", "* self.d_model ** 0.5"),), "d_model ** 0.5"),
    Edit("pe_python_loops", PE, ((
        """        position = torch.arange(max_length).unsqueeze(1).float()  # (max_length, 1)
        inverse_freq = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))  # (d_model/2,)
        pe = torch.zeros(max_length, d_model)
        pe[:, 0::2] = torch.sin(position * inverse_freq)
        pe[:, 1::2] = torch.cos(position * inverse_freq)""",
        """        pe = torch.zeros(max_length, d_model)
        for pos in range(max_length):
            for i in range(d_model // 2):
                angle = pos / 10000 ** (2 * i / d_model)
                pe[pos, 2 * i], pe[pos, 2 * i + 1] = math.sin(angle), math.cos(angle)"""),),
         "positional table filled with loops and math.sin"),
    Edit("embeddings_step_by_step", TE, (("return self.dropout(self.pos_encoding(self.token_embedding(input_ids)))",
                                          "tokens = self.token_embedding(input_ids)  # (B, T, d_model)\n"
                                          "        with_positions = self.pos_encoding(tokens)\n"
                                          "        return self.dropout(with_positions)"),), "one step per line"),
    Edit("attention_einsum", ATT, (("Q @ K.transpose(-2, -1)", 'torch.einsum("...qd,...kd->...qk", Q, K)'),
                                   ("return weights @ V, weights", 'return torch.einsum("...qk,...kv->...qv", weights, V), weights')),
         "einsum instead of matmul"),
    Edit("attention_minus_inf_with_safe_rows", ATT, (("masked_fill(mask == 0, -1e9)", 'masked_fill(mask == 0, float("-inf"))'),
                                                     (SOFTMAX, "weights = torch.softmax(scores, dim=-1).nan_to_num(0.0)")),
         "-inf fill, torch.softmax, and fully masked rows set to zero"),
    Edit("attention_bool_mask_and_mT", ATT, (("Q @ K.transpose(-2, -1)", "Q.matmul(K.mT)"),
                                             ("masked_fill(mask == 0, -1e9)", "masked_fill(~mask.bool(), -1e9)")),
         "matmul with .mT and a boolean mask"),
    Edit("mha_loop_over_heads", MHA, ((
        """        Q, K, V = split_heads(self.W_q(x)), split_heads(self.W_k(x)), split_heads(self.W_v(x))
        heads, weights = scaled_dot_product_attention(Q, K, V, mask=mask, dropout=self.dropout)  # (B, H, T, d_k)
        merged = heads.transpose(1, 2).contiguous().view(B, T, self.d_model)  # heads side by side""",
        """        q, k, v = self.W_q(x), self.W_k(x), self.W_v(x)
        outputs, all_weights = [], []
        for h in range(self.num_heads):
            part = slice(h * self.d_k, (h + 1) * self.d_k)
            head_mask = None if mask is None else mask[:, 0]  # (B, 1, T) or (B, T, T) for this head
            out, w = scaled_dot_product_attention(q[..., part], k[..., part], v[..., part], mask=head_mask,
                                                  dropout=self.dropout)
            outputs.append(out)
            all_weights.append(w)
        merged, weights = torch.cat(outputs, dim=-1), torch.stack(all_weights, dim=1)"""),),
         "one head at a time in a loop"),
    Edit("mha_reshape_permute_and_other_order", MHA, (
        ("""        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)""", """        self.W_o = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_q = nn.Linear(d_model, d_model)"""),
        (".view(B, T, self.num_heads, self.d_k).transpose(1, 2)", ".reshape(B, T, self.num_heads, self.d_k).permute(0, 2, 1, 3)"),
        (".transpose(1, 2).contiguous().view(B, T, self.d_model)", ".permute(0, 2, 1, 3).reshape(B, T, -1)")),
     "reshape/permute, layers created in another order"),
    Edit("layer_norm_functional", LN, ((
        """        mean = x.mean(dim=-1, keepdim=True)
        var = x.var(dim=-1, keepdim=True, unbiased=False)
        return self.gamma * (x - mean) / torch.sqrt(var + self.eps) + self.beta""",
        "        return F.layer_norm(x, self.gamma.shape, self.gamma, self.beta, self.eps)"),), "F.layer_norm"),
    Edit("layer_norm_rsqrt", LN, (("x.var(dim=-1, keepdim=True, unbiased=False)", "((x - mean) ** 2).mean(dim=-1, keepdim=True)"),
                                  ("(x - mean) / torch.sqrt(var + self.eps)", "(x - mean) * torch.rsqrt(var + self.eps)")),
         "variance by hand and rsqrt"),
    Edit("ffn_functional_dropout", FF, (("self.dropout(F.relu(self.linear1(x)))",
                                         "F.dropout(torch.clamp(self.linear1(x), min=0), self.dropout.p, self.training)"),),
         "clamp as ReLU, functional dropout"),
    Edit("block_sublayer_helper", BLOCK, ((
        """        # Attention part
        attn_out, weights = self.attention(x, mask)
        x = self.norm1(x + self.dropout(attn_out))
        # Feed-forward part
        x = self.norm2(x + self.dropout(self.feed_forward(x)))
        return x, weights""",
        """        def add_and_norm(norm, x, sublayer_out):
            return norm(x + self.dropout(sublayer_out))

        attn_out, weights = self.attention(x, mask=mask)
        x = add_and_norm(self.norm1, x, attn_out)
        return add_and_norm(self.norm2, x, self.feed_forward(x)), weights"""),), "a helper for add & norm"),
    Edit("model_pooling_with_where", MODEL, (("pooled = (x * real).sum(dim=1) / real.sum(dim=1).clamp(min=1.0)",
                                              "pooled = torch.where(real.bool(), x, 0.0).sum(1) / attention_mask.sum(1, keepdim=True)"),),
         "pooling with torch.where"),
    Edit("train_functional_loss", TRAIN, (("loss = criterion(logits, labels)", "loss = F.cross_entropy(logits, labels)"),
                                          ("optimizer.zero_grad()", "optimizer.zero_grad(set_to_none=True)"),
                                          ("correct += (logits.argmax(-1) == labels).sum().item()",
                                           "correct += int((logits.detach().argmax(dim=1) == labels).float().sum())")),
         "F.cross_entropy and other bookkeeping"),
)
