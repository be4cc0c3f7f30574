"""Hidden probes of A Small GPT, Trained Well: instructor-only, never released.

A probe builds one of the student's pieces from the notebook's namespace, runs
it on the grader's own inputs at fixed seeds, on the CPU, and returns plain
data: a dict of numpy arrays. The judge compares it with the instructor's
(reference.npz) in a process where no student code ran.

Pieces built from other pieces are probed with the grader's own versions of
the others: encode and decode with the grader's merges, the attention inside
the grader's own GPT, init_weights on the grader's GPT, generate with the
grader's model, train_step with the grader's model and optimizer. A caught
error becomes an output, so that the other outputs still tell what went wrong;
`like_*` outputs are clues: trusted re-computations of a usual mistake, which
name it when the student's output equals one.
"""

from __future__ import annotations

import functools
import math
import unicodedata
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

from course.probe_tools import (caught, clue, error_output, fill_parameters, generator, like, randn, registry,
                                replaced, require, stand_in_registry, to_array)

PROBES, probe = registry()  # check id -> probe; the grader runs them all (course.probe_runner.run_probes)
STAND_INS, stand_in = stand_in_registry()  # stand-in class name -> how a message names it


def codes(values) -> np.ndarray:
    """A list of ints (ids, merges) as an int64 array; text as its code points (compared exactly)."""
    if isinstance(values, str):
        return np.array([ord(ch) for ch in values], dtype=np.int64)
    return np.asarray(values, dtype=np.int64).reshape(len(values), -1) if len(values) else np.zeros((0, 2), np.int64)


def ids_array(ids) -> np.ndarray:
    return np.asarray([int(i) for i in ids], dtype=np.int64)


def flag(compute) -> np.ndarray:
    """bool(compute()) as an array; False when it raises (the graded outputs show the error)."""
    try:
        return np.array(bool(compute()))
    except Exception:
        return np.array(False)


# ---------------------------------------------------------------- Part 1: BPE, the grader's own and its usual slips


def trusted_merge_pair(ids: list[int], pair: tuple[int, int], new_id: int, overlapping: bool = False,
                       drops_last: bool = False) -> list[int]:
    """Left to right, without overlap; with `overlapping`, the slip that moves on by one id after a merge, so that
    the pair's second id is read again (a a a becomes new new a; a a b becomes new a b); with `drops_last`, the slip
    whose loop stops one id early (a last id not merged is lost)."""
    merged, i = [], 0
    while i + drops_last < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            merged.append(new_id)
            i += 1 if overlapping else 2
        else:
            merged.append(ids[i])
            i += 1
    return merged


def merge_pair_slip(ids: list[int], pair: tuple[int, int], new_id: int, slip: str) -> list[int]:
    """merge_pair's slips: "right_to_left" (the pairs replaced from the right: a a a gives [a, new]), "nothing" (the
    ids returned as they came), "first_id_twice" (both ids compared with the pair's first), "last_id_twice" (the loop
    stops before the last id, which is appended after it, merged or not), "first_only" (only the first occurrence
    replaced)."""
    if slip == "nothing":
        return list(ids)
    if slip == "last_id_twice":
        return trusted_merge_pair(ids, pair, new_id, drops_last=True) + ids[-1:]
    if slip == "first_only":
        at = next((i for i in range(len(ids) - 1) if (ids[i], ids[i + 1]) == pair), None)
        return list(ids) if at is None else ids[:at] + [new_id] + ids[at + 2:]
    if slip == "first_id_twice":
        return trusted_merge_pair(ids, (pair[0], pair[0]), new_id)
    merged, i = [], len(ids) - 1
    while i >= 0:
        if i > 0 and (ids[i - 1], ids[i]) == pair:
            merged.append(new_id)
            i -= 2
        else:
            merged.append(ids[i])
            i -= 1
    return merged[::-1]


def trusted_train_bpe(text: str, vocab_size: int, slip: str = "") -> list[tuple[int, int]]:
    """The merges, or those of a slip: "tie_largest" (ties to the larger pair), "tie_first_seen" (ties to the pair
    seen first, as Counter.most_common gives), "count_without_overlap" (a a a counts (a, a) once), "disjoint_pairs"
    (only the pairs at even positions counted), "counts_once" (the pairs counted once, on the bytes, each round the
    next most frequent of those), "overlapping_merge", "drops_last" (merging loses an unmerged last id),
    "one_merge_more" (vocab_size - 255 merges), "code_points" (code points, not UTF-8 bytes), "tie_second_first"
    (ties to the pair with the smaller second id), "least_frequent" (the least frequent pair merged), "stop_at_single"
    (training stops once the most frequent pair occurs only once), "ids_from_zero" (merge i gives id i, among the
    bytes), "one_merge" (training returns after its first merge), "ascii_ignore" (non-ASCII characters dropped),
    "tie_as_strings" (ties to the pair whose str() is smaller), "id_one_ahead" (merge i written as 257 + i),
    "smallest_pair" (the smallest pair present, whatever its count), "ids_kept" (merge_pair's result thrown away),
    "vocab_size_merges" (up to vocab_size merges), "wrap_around" (the pair (last, first) counted too),
    "last_pair_uncounted" (zip(ids, ids[1:-1])), "no_space_pairs" (pairs with a space left out), "lowercased" (the
    text lowercased first), "no_merge" (no merge at all), "tie_by_sum" (ties to the pair of smaller a + b, then the
    first seen), "counts_accumulated" (one Counter updated each round: pairs merged away keep their counts)."""
    if slip == "no_merge":
        return []
    if slip == "lowercased":
        text = text.lower()
    if slip == "code_points":
        ids = [ord(ch) for ch in text]
    else:
        ids = list(text.encode("ascii", errors="ignore") if slip == "ascii_ignore" else text.encode("utf-8"))
    merges, first_counts, kept_counts = [], Counter(zip(ids, ids[1:])), Counter()
    last = vocab_size + (slip == "one_merge_more") + (256 if slip == "vocab_size_merges" else 0)
    for new_id in range(256, last):
        if slip == "counts_once":
            counts = first_counts
        elif slip == "disjoint_pairs":
            counts = Counter(zip(ids[::2], ids[1::2]))
        elif slip == "wrap_around":
            counts = Counter(zip(ids, ids[1:] + ids[:1]))
        elif slip == "last_pair_uncounted":
            counts = Counter(zip(ids, ids[1:-1]))
        elif slip == "counts_accumulated":
            kept_counts.update(zip(ids, ids[1:]))
            counts = kept_counts
        elif slip == "no_space_pairs":
            counts = Counter(pair for pair in zip(ids, ids[1:]) if 32 not in pair)
        elif slip == "count_without_overlap":
            counts, i = Counter(), 0
            while i + 1 < len(ids):
                counts[ids[i], ids[i + 1]] += 1
                i += 2 if i + 2 < len(ids) and ids[i] == ids[i + 1] == ids[i + 2] else 1
        else:
            counts = Counter(zip(ids, ids[1:]))
        if not counts:
            break
        if slip == "tie_largest":
            pair = max(counts, key=lambda p: (counts[p], p))
        elif slip == "tie_first_seen":
            pair = counts.most_common(1)[0][0]
        elif slip == "tie_second_first":
            pair = min(counts, key=lambda p: (-counts[p], p[1], p[0]))
        elif slip == "least_frequent":
            pair = min(counts, key=lambda p: (counts[p], p))
        elif slip == "tie_as_strings":
            pair = min(counts, key=lambda p: (-counts[p], str(p)))
        elif slip == "smallest_pair":
            pair = min(counts)
        elif slip == "tie_by_sum":
            pair = min(counts, key=lambda p: (-counts[p], sum(p)))
        else:
            pair = min(counts, key=lambda p: (-counts[p], p))
        if slip == "stop_at_single" and counts[pair] < 2:
            break
        written = {"ids_from_zero": new_id - 256, "id_one_ahead": new_id + 1}.get(slip, new_id)
        merged = trusted_merge_pair(ids, pair, written, overlapping=slip == "overlapping_merge",
                                    drops_last=slip == "drops_last")
        ids = ids if slip == "ids_kept" else merged
        merges.append(pair)
        if slip == "one_merge":
            break
        if slip == "counts_once":
            del counts[pair]
    return merges


def trusted_encode(text: str, merges, slip: str = "") -> list[int]:
    """The ids, or those of a slip: "reversed" (the last merge first), "overlapping_merge", "code_points", "offset"
    (merge i gives id 512 + i: 256 added twice), "normalised" (whitespace runs made one space, the ends stripped),
    "first_known_pair" (passes left to right merging whichever known pair comes first, until nothing changes),
    "merges_as_set" (the merges applied in a set's order), "last_skipped" (the last merge left out), "unmerged" (the
    bytes, no merge applied), "first_merge_only"."""
    if slip == "first_merge_only":
        merges = merges[:1]
    if slip == "unmerged":
        return list(text.encode("utf-8"))
    if slip == "normalised":
        text = " ".join(text.split())
    ids = [ord(ch) for ch in text] if slip == "code_points" else list(text.encode("utf-8"))
    if slip == "first_known_pair":
        return first_known_pair(ids, merges)
    order = list(enumerate(merges[:-1] if slip == "last_skipped" else merges))
    if slip == "merges_as_set":
        order = [(list(merges).index(pair), pair) for pair in set(merges)]
    for i, pair in reversed(order) if slip == "reversed" else order:
        ids = trusted_merge_pair(ids, tuple(pair), (512 if slip == "offset" else 256) + i,
                                 overlapping=slip == "overlapping_merge")
    return ids


def first_known_pair(ids: list[int], merges) -> list[int]:
    """encode's slip of merging, pass after pass, whichever known pair comes first (not the merges in order)."""
    known, changed = {tuple(pair): 256 + i for i, pair in enumerate(merges)}, True
    while changed:
        changed, merged, i = False, [], 0
        while i < len(ids):
            if i + 1 < len(ids) and (ids[i], ids[i + 1]) in known:
                merged.append(known[ids[i], ids[i + 1]])
                changed, i = True, i + 2
            else:
                merged.append(ids[i])
                i += 1
        ids = merged
    return ids


def vocabulary(merges) -> dict[int, bytes]:
    vocab = {i: bytes([i]) for i in range(256)}
    for i, (a, b) in enumerate(merges):
        vocab[256 + i] = vocab[a] + vocab[b]
    return vocab


def greedy_longest(text: str, merges) -> list[int]:
    """The slip of encoding by the longest token that matches at each position (not the merges in order)."""
    vocab = vocabulary(merges)
    by_bytes = {token: i for i, token in sorted(vocab.items(), reverse=True)}  # the first-learned id of equal tokens
    data, ids, i = text.encode("utf-8"), [], 0
    longest = max(len(t) for t in by_bytes)
    while i < len(data):
        for size in range(min(longest, len(data) - i), 0, -1):
            if data[i:i + size] in by_bytes:
                ids.append(by_bytes[data[i:i + size]])
                i += size
                break
    return ids


def trusted_decode(ids, merges, slip: str = "") -> str:
    """The text, or that of a slip: "per_token" (each token decoded alone, errors replaced), "latin_1",
    "errors_ignored" (invalid bytes dropped), "pair_bytes" (a merged token taken as the two bytes of its pair's ids,
    which raises for ids above 255), "repr" (str() of the joined bytes), "zero_bytes" (byte i taken as bytes(i): i
    zero bytes), "spaced" (the tokens' bytes joined with spaces), "stripped" (the text's ends stripped), "nfc" (the
    text NFC-normalised), "left_twice" (a merged token's bytes taken as its first id's twice)."""
    if slip == "left_twice":
        vocab = {i: bytes([i]) for i in range(256)}
        for i, (a, b) in enumerate(merges):
            vocab[256 + i] = vocab[a] + vocab[a]
        return b"".join(vocab[int(i)] for i in ids).decode("utf-8", errors="replace")
    if slip == "zero_bytes":
        vocab = {i: bytes(i) for i in range(256)}
        for i, (a, b) in enumerate(merges):
            vocab[256 + i] = vocab[a] + vocab[b]
        return b"".join(vocab[int(i)] for i in ids).decode("utf-8", errors="replace")
    if slip == "pair_bytes":
        vocab = {i: bytes([i]) for i in range(256)} | {256 + i: bytes([a, b]) for i, (a, b) in enumerate(merges)}
        return b"".join(vocab[int(i)] for i in ids).decode("utf-8", errors="replace")
    vocab = vocabulary(merges)
    if slip == "per_token":
        return "".join(vocab[int(i)].decode("utf-8", errors="replace") for i in ids)
    joined = (b" " if slip == "spaced" else b"").join(vocab[int(i)] for i in ids)
    if slip == "stripped":
        return joined.decode("utf-8", errors="replace").strip()
    if slip == "nfc":
        return unicodedata.normalize("NFC", joined.decode("utf-8", errors="replace"))
    if slip == "repr":
        return str(joined)
    if slip == "latin_1":
        return joined.decode("latin-1")
    return joined.decode("utf-8", errors="ignore" if slip == "errors_ignored" else "replace")


def _alphabet_text(seed: int, length: int, alphabet: str) -> str:
    """A seeded text over `alphabet` with repeated words, so that pairs have varied counts."""
    words = ["".join(alphabet[int(j)] for j in torch.randint(0, len(alphabet), (int(n),), generator=generator(seed + k)))
             for k, n in enumerate(torch.randint(2, 6, (12,), generator=generator(seed)))]
    picks = torch.randint(0, len(words), (length,), generator=generator(seed + 99))
    return " ".join(words[int(i)] for i in picks)


BPE_TEXTS = {  # name -> (text, vocab_size)
    "ties": ("abcabdabcabeacbd", 262),
    "repeats": ("aaaaaaa bbbbb aaaa", 264),
    "overlap": ("aaabab", 258),  # (a, a) twice, overlapping, ties (a, b): counted once, (a, b) would win
    "cases": ("The tent and THE TENT, the Tent", 266),
    "words": (_alphabet_text(1, 60, "abcdeno"), 300),
    "unicode": ("naïve café, déjà vu: 🙂🙂 naïve café 🙂 漢字漢字", 280),
    "short": ("ab", 300),
    "no_merges": ("hello", 250),
}
BPE_SLIPS = ("tie_largest", "tie_first_seen", "count_without_overlap", "disjoint_pairs", "counts_once",
             "overlapping_merge", "drops_last", "one_merge_more", "code_points", "tie_second_first", "least_frequent",
             "stop_at_single", "ids_from_zero", "one_merge", "ascii_ignore", "tie_as_strings", "id_one_ahead",
             "smallest_pair", "ids_kept", "vocab_size_merges", "wrap_around", "last_pair_uncounted", "no_space_pairs",
             "lowercased", "no_merge", "tie_by_sum", "counts_accumulated")
NO_PAIR_ERRORS = tuple(e.__name__ for e in (ValueError, IndexError, KeyError))  # max/min of none, most_common(1)[0]
MERGE_PAIR_CASES = (([97, 97, 97, 98, 97, 97], (97, 97), 300), ([5, 6, 5, 6, 7], (6, 5), 301), ([5], (5, 5), 302),
                    ([], (1, 2), 303))


@functools.cache
def bpe_slip_merges(slip: str) -> tuple[tuple[str, np.ndarray], ...]:
    """(text's name, the slip's merges as codes) for every text of BPE_TEXTS where they are not the right ones: the
    same for every submission, so computed once per process."""
    slipped = {name: trusted_train_bpe(text, size, slip) for name, (text, size) in BPE_TEXTS.items()}
    return tuple((name, codes(merges)) for name, merges in slipped.items() if merges != bpe_right_merges(name))


@functools.cache
def bpe_right_merges(name: str) -> list[tuple[int, int]]:
    """The right merges of BPE_TEXTS[name], computed once per process."""
    return trusted_train_bpe(*BPE_TEXTS[name])


@probe("bpe_merges")
def probe_bpe_merges(ns):
    """The merges of a text twice (the second call must give the first's: nothing kept between calls); of texts with
    ties, runs of one letter, overlapping pairs (aaabab), upper and lower case, repeated words, accented letters and emoji, a text too
    short for all its merges and a vocabulary of fewer than 256; merge_pair's results and whether it left its list as it was; clues: whether the
    merges are those of each usual slip (BPE_SLIPS), and whether the short text raised the error of choosing from
    no pairs."""
    train_bpe, merge_pair = require(ns, "train_bpe"), require(ns, "merge_pair")
    first = caught(lambda: codes([tuple(int(v) for v in pair) for pair in train_bpe("abab cab", 262)]))
    again = caught(lambda: codes([tuple(int(v) for v in pair) for pair in train_bpe("abab cab", 262)]))
    same = np.array(first.shape == again.shape and bool(np.array_equal(first, again)))
    lists = [list(ids) for ids, _, _ in MERGE_PAIR_CASES]
    merged = caught(lambda: np.concatenate([ids_array(merge_pair(ids, pair, new_id)) for ids, (_, pair, new_id)
                                            in zip(lists, MERGE_PAIR_CASES)] + [np.array([-1])]))
    kept = np.array(all(ids == list(case[0]) for ids, case in zip(lists, MERGE_PAIR_CASES)))
    out = {"same_twice": same, "merge_pair": merged, "merge_pair_keeps_list": kept}
    for slip in ("right_to_left", "nothing", "first_id_twice", "last_id_twice", "first_only"):
        slipped = np.concatenate([np.array(merge_pair_slip(list(ids), pair, new_id, slip), dtype=np.int64)
                                  for ids, pair, new_id in MERGE_PAIR_CASES] + [np.array([-1])])
        out[f"like_merge_{slip}"] = clue(lambda slipped=slipped: np.array(
            merged.shape == slipped.shape and bool(np.array_equal(merged, slipped))))
    out |= {name: caught(lambda text=text, size=size: codes([tuple(int(v) for v in pair) for pair in
                                                           train_bpe(text, size)]))
           for name, (text, size) in BPE_TEXTS.items()}
    out["short_raised"] = np.array(out["short"].dtype.kind == "U" and out["short"].ndim == 0
                                   and str(out["short"]).startswith(NO_PAIR_ERRORS))
    for slip in BPE_SLIPS:
        def like_slip(slip=slip) -> np.ndarray:
            differing = bpe_slip_merges(slip)
            return np.array(bool(differing) and all(out[name].shape == merges.shape
                                                    and np.array_equal(out[name], merges) for name, merges in differing))
        out[f"like_{slip}"] = clue(like_slip)
    return out


ENCODE_MERGES = trusted_train_bpe(_alphabet_text(2, 80, "abcdent"), 320)
ORDER_MERGES = [(ord("b"), ord("c")), (ord("a"), ord("b")), (256, ord("d")), (ord("a"), 256)]
ENCODE_TEXTS = {
    "training_text": (_alphabet_text(2, 80, "abcdent"), ENCODE_MERGES),
    "new_text": ("tenant decadent cab tent, abbed", ENCODE_MERGES),
    "unicode": ("naïve — déjà 🙂 vu", trusted_train_bpe("naïve déjà 🙂🙂 naïve", 270)),
    "order": ("abcd abc bcd", ORDER_MERGES),
    "runs": ("aaaaa", [(97, 97), (256, 97)]),
    "pair": ("ab", [(97, 98)]),
    "one_byte": ("a", ENCODE_MERGES),
    "whitespace": ("  tent\t\tand  cab\n\n", ENCODE_MERGES),
    "no_merges": ("cab é", []),
    "empty": ("", ENCODE_MERGES),
}


@probe("bpe_encode")
def probe_bpe_encode(ns):
    """encode, with the grader's merges (and merge_pair), of the merges' own training text, of other texts, of
    accents and emoji, of a text whose merges must apply in order, of a run of one letter, of two bytes that are one
    merge, of runs of spaces, tabs and newlines, of a text with no merges, and of ''; whether every result is a list
    of Python ints; clues: whether the ids are those of the longest match at each position, of the merges applied
    last first, of overlapping merges, or of code points."""
    encode = require(ns, "encode")
    returned = []
    with replaced(ns, merge_pair=trusted_merge_pair):  # the grader's: a slip in merge_pair costs train_bpe's points
        def ids_of(text, merges):
            ids = encode(text, list(merges))
            returned.append(isinstance(ids, list) and all(type(i) is int for i in ids))
            return ids_array(ids)
        out = {name: caught(lambda text=text, merges=merges: ids_of(text, merges))
               for name, (text, merges) in ENCODE_TEXTS.items()}
    out["list_of_ints"] = np.array(bool(returned) and all(returned))

    def like_slip(slip_ids) -> np.ndarray:
        """Whether the ids are the slip's on every text where the slip's are not the right ones."""
        differing = [(name, ids_array(slip_ids(text, merges))) for name, (text, merges) in ENCODE_TEXTS.items()
                     if slip_ids(text, merges) != trusted_encode(text, merges)]
        return np.array(bool(differing) and all(out[name].shape == ids.shape and np.array_equal(out[name], ids)
                                                for name, ids in differing))

    out["like_greedy_longest"] = clue(lambda: like_slip(greedy_longest))
    for slip in ("reversed", "overlapping_merge", "code_points", "offset", "normalised", "first_known_pair",
                 "merges_as_set", "last_skipped", "unmerged", "first_merge_only"):
        out[f"like_{slip}"] = clue(lambda slip=slip: like_slip(lambda t, m: trusted_encode(t, m, slip)))
    return out


DECODE_MERGES = trusted_train_bpe("é" * 5 + "🙂" * 4 + "ab" * 3, 262)  # tokens that end inside a character
DECODE_IDS = {
    "ascii": trusted_encode("To be, or not to be:\nthat is the question.", ENCODE_MERGES),
    "accents": trusted_encode("Ophélie, où est-il? déjà vu", DECODE_MERGES),
    "emoji": trusted_encode("🙂🙂🙂 ab 🙂", DECODE_MERGES),
    "cjk": trusted_encode("漢字とかな", DECODE_MERGES),
    "empty": [],
    "whitespace": trusted_encode(" \tto be\n\n", ENCODE_MERGES),
    "decomposed": trusted_encode("Ophe\u0301lie, cafe\u0301", DECODE_MERGES),
    "split_character": [256, 0xA9, 256, 0xA9, ord("b")],  # a + é's first byte, then é's second: "aéaéb"
    "invalid_bytes": [0xFF, ord("a"), 0xC3],
}
DECODE_MERGES_OF = {"ascii": ENCODE_MERGES, "whitespace": ENCODE_MERGES, "split_character": [(ord("a"), 0xC3)]}


@probe("bpe_decode")
def probe_bpe_decode(ns):
    """decode, with the grader's merges, of ids of ASCII, accented (composed and decomposed), emoji and CJK text, of
    whitespace at both ends,
    and of []; of tokens that
    split a character's bytes between them; of bytes that are not UTF-8 (each as code points); whether the lists of
    ids were left as they were; clues: whether the text is that of decoding token by token, or of Latin-1."""
    decode = require(ns, "decode")
    merges = {name: list(DECODE_MERGES_OF.get(name, DECODE_MERGES)) for name in DECODE_IDS}
    # The first call of all: a decode that keeps something of an earlier call's merges gets this one right only.
    out = {"accents_first": caught(lambda: codes(decode(list(DECODE_IDS["accents"]), merges["accents"])))}
    given = {name: list(ids) for name, ids in DECODE_IDS.items()}
    out |= {name: caught(lambda name=name: codes(decode(given[name], merges[name]))) for name in DECODE_IDS}
    out["ids_unchanged"] = np.array(all(given[name] == list(ids) for name, ids in DECODE_IDS.items()))

    def slipped_text(name: str, slip: str) -> np.ndarray:
        try:
            return codes(trusted_decode(DECODE_IDS[name], merges[name], slip))
        except Exception:
            return np.array("error")

    def like_slip(slip: str) -> np.ndarray:
        """Whether every output is the slip's (an error where the slip raises), and the slip differs somewhere."""
        same = [slipped_text(name, slip).dtype.kind in "US" and out[name].dtype.kind in "US"
                or (out[name].shape == slipped_text(name, slip).shape
                    and np.array_equal(out[name], slipped_text(name, slip))) for name in DECODE_IDS]
        differs = any(not np.array_equal(slipped_text(name, slip), slipped_text(name, "")) for name in DECODE_IDS)
        return np.array(all(same) and differs)

    for slip in ("per_token", "latin_1", "errors_ignored", "pair_bytes", "repr", "zero_bytes", "spaced", "stripped",
                 "nfc", "left_twice"):
        out[f"like_{slip}"] = clue(lambda slip=slip: like_slip(slip))
    out["strict_error"] = np.array(any("UnicodeDecodeError" in str(out[name]) for name in DECODE_IDS
                                       if out[name].dtype.kind in "US"))
    return out


# ---------------------------------------------------------------- Part 2: RoPE


def trusted_rope(x: torch.Tensor, positions: torch.Tensor, base: float = 10000.0, slip: str = "") -> torch.Tensor:
    """RoPE with interleaved pairs, or a slip: "halves" (pair i with i + d/2), "exponent" (base ** (-i / d) for
    pair i), "exponent_sign" (base ** (+2i / d)), "clockwise" (each pair turned the other way), "integer_angles"
    (angles truncated to integers), "index_positions" (the rows' indexes 0 .. T-1, not the positions given),
    "sign_typo" (x'[2i+1] = x[2i+1] cos - x[2i] sin: not a rotation), "positions_from_one" (the row at m turned by
    m + 1), "cos_sin_swapped", "halves_out" (interleaved pairs rotated, the results laid out as halves),
    "second_unrotated" (x'[2i+1] = x[2i+1]: half of each pair left as it was), "exponent_floor" (the exponent
    (-2i) // d: 0 or -1), "linspace_exponent" (exponents from linspace(0, 1, d/2)), "tiled" (cos and sin
    repeated, not interleaved, across the coordinates), "log10" (theta from exp(-2i/d * log10(base))),
    "exponent_precedence" (base ** -2i / d), "odd_exponents" (base ** (-(2i + 1) / d)), "pair_swapped" (each pair
    read as (x[2i+1], x[2i])), "angle_theta" (every row turned by theta, whatever its position),
    "sequential_update" (x'[2i+1] computed from the rotated x'[2i]), "polar_swapped" (each pair scaled by its angle
    and turned by one radian), "exponent_over_pairs" (base ** (-2i / (d/2))), "consecutive_positions"
    (positions[0] + 0 .. T-1), "frequencies_reversed" (the exponents from -(d-2)/d up to 0), "angles_added" (m +
    theta_i, not m * theta_i), "sin_from_cos" (the sine as sqrt(1 - cos^2): its sign lost)."""
    if slip == "consecutive_positions":
        positions = positions[0] + torch.arange(x.shape[-2])
    d = x.shape[-1]
    index = torch.arange(d // 2, dtype=torch.float64)
    exponent = (1 if slip == "exponent_sign" else -1) * (index if slip == "exponent" else 2 * index)
    theta = base ** (exponent // d if slip == "exponent_floor" else exponent / d)
    if slip == "linspace_exponent":
        theta = base ** -torch.linspace(0, 1, d // 2, dtype=torch.float64)
    if slip == "log10":
        theta = torch.exp(-2 * index / d * math.log10(base))
    if slip == "exponent_precedence":
        theta = base ** (-2 * index) / d
    if slip == "odd_exponents":
        theta = base ** (-(2 * index + 1) / d)
    if slip == "exponent_over_pairs":
        theta = base ** (-2 * index / (d // 2))
    if slip == "frequencies_reversed":
        theta = base ** (-2 * index.flip(0) / d)
    if slip == "index_positions":
        positions = torch.arange(x.shape[-2])
    if slip == "positions_from_one":
        positions = positions + 1
    angles = positions.to(torch.float64)[:, None] * theta[None, :]
    if slip == "angles_added":
        angles = positions.to(torch.float64)[:, None] + theta[None, :]
    if slip == "angle_theta":
        angles = theta[None, :].expand_as(angles)
    if slip == "integer_angles":
        angles = angles.trunc()
    cos, sin = angles.cos().to(x.dtype), angles.sin().to(x.dtype)
    if slip == "sin_from_cos":
        sin = (1 - angles.cos() ** 2).sqrt().to(x.dtype)
    if slip == "clockwise":
        sin = -sin
    if slip == "cos_sin_swapped":
        cos, sin = sin, cos
    if slip == "halves":
        first, second = x[..., : d // 2], x[..., d // 2:]
        return torch.cat([first * cos - second * sin, first * sin + second * cos], dim=-1)
    even, odd = (x[..., 1::2], x[..., 0::2]) if slip == "pair_swapped" else (x[..., 0::2], x[..., 1::2])
    if slip == "sign_typo":
        return torch.stack([even * cos - odd * sin, odd * cos - even * sin], dim=-1).flatten(-2)
    if slip == "sequential_update":
        first = even * cos - odd * sin
        return torch.stack([first, first * sin + odd * cos], dim=-1).flatten(-2)
    if slip == "polar_swapped":
        rotor = torch.polar(angles, torch.ones_like(angles)).to(torch.complex128)
        turned = torch.view_as_real(torch.complex(even.double(), odd.double()) * rotor)
        return turned.flatten(-2).to(x.dtype)
    if slip == "tiled":
        neighbour = torch.stack([-x[..., 1::2], x[..., 0::2]], dim=-1).flatten(-2)
        return x * cos.repeat(*[1] * (cos.dim() - 1), 2) + neighbour * sin.repeat(*[1] * (sin.dim() - 1), 2)
    if slip == "second_unrotated":
        return torch.stack([even * cos - odd * sin, odd], dim=-1).flatten(-2)
    if slip == "halves_out":
        return torch.cat([even * cos - odd * sin, even * sin + odd * cos], dim=-1)
    return torch.stack([even * cos - odd * sin, even * sin + odd * cos], dim=-1).flatten(-2)


ROPE_SLIPS = ("halves", "exponent", "exponent_sign", "clockwise", "integer_angles", "index_positions", "sign_typo",
              "positions_from_one", "cos_sin_swapped", "halves_out", "second_unrotated", "exponent_floor",
              "linspace_exponent", "tiled", "log10", "exponent_precedence", "odd_exponents", "pair_swapped",
              "angle_theta", "sequential_update", "polar_swapped", "exponent_over_pairs", "consecutive_positions",
              "frequencies_reversed", "angles_added", "sin_from_cos")


def rope_cases() -> dict[str, tuple[torch.Tensor, torch.Tensor, dict]]:
    """Case name -> (x, positions, keyword arguments) of apply_rope's probe: new tensors at each call (a submission
    may change the ones it is given)."""
    x, wide = randn(10, 2, 3, 5, 8), randn(11, 1, 2, 4, 16)
    late, odd_positions = torch.arange(40, 45), torch.tensor([0, 3, 3, 10, 2])
    return {"from_zero": (x, torch.arange(5), {}), "late": (x, late, {}), "odd_positions": (x, odd_positions, {}),
            "wide": (wide, torch.arange(4), {}), "base_100": (x, late, {"base": 100.0}),
            "two_dimensional": (x[0, 0], torch.arange(5), {})}


@functools.cache
def rope_slip_values(slip: str) -> tuple[tuple[str, torch.Tensor], ...]:
    """(case, the slip's values) for every case of rope_cases where they are not RoPE's: the same for every
    submission, so computed once per process."""
    slipped = {name: (trusted_rope(x, p, slip=slip, **kw), trusted_rope(x, p, **kw))
               for name, (x, p, kw) in rope_cases().items()}
    return tuple((name, values) for name, (values, right) in slipped.items()
                 if not torch.allclose(values, right, atol=1e-5))


@probe("rope_values")
def probe_rope_values(ns):
    """apply_rope of (B, H, T, d) inputs at positions 0.. and at positions that start late, skip and repeat, with
    d = 8 and 16, the default base and base 100, in float64, and of a (T, d) input; whether float64 and float32
    inputs keep their dtype; whether x was left as it was; clues: whether the values are those of a usual slip
    (ROPE_SLIPS)."""
    apply_rope = require(ns, "apply_rope")
    cases = rope_cases()
    x, late = cases["late"][0], cases["late"][1]
    kept = x.clone()
    out = {name: caught(lambda x=x, p=p, kw=kw: apply_rope(x.clone(), p.clone(), **kw)) for name, (x, p, kw) in cases.items()}
    try:
        double = apply_rope(x.double(), late)
        out["float64"], out["dtype_kept"] = to_array(double), np.array(getattr(double, "dtype", None) == torch.float64)
    except Exception as error:
        out["float64"], out["dtype_kept"] = error_output(error), np.array(False)
    try:
        single = apply_rope(x, late)
        out["dtype_kept"] = np.array(bool(out["dtype_kept"]) and getattr(single, "dtype", None) == torch.float32)
    except Exception:
        pass
    out["x_unchanged"] = np.array(bool(torch.equal(x, kept)))
    for slip in ROPE_SLIPS:
        def like_slip(slip=slip) -> np.ndarray:
            differing = rope_slip_values(slip)
            return np.array(bool(differing) and all(bool(like(out[name], values, atol=1e-5))
                                                    for name, values in differing))
        out[f"like_{slip}"] = clue(like_slip)
    return out


@probe("rope_relative")
def probe_rope_relative(ns):
    """What makes RoPE a relative encoding, measured on the student's apply_rope: every row's norm kept; the scores
    of queries at m and keys at n unchanged when both move by the same offset (12 pairs, three offsets); the scores
    changing when only the keys move; position 0 leaving a vector as it is."""
    apply_rope = require(ns, "apply_rope")
    q, k = randn(20, 2, 6, 8), randn(21, 2, 6, 8)
    positions = torch.tensor([0, 1, 4, 9, 10, 25])

    def scores(shift: int, key_shift: int = 0) -> torch.Tensor:
        return apply_rope(q, positions + shift) @ apply_rope(k, positions + shift + key_shift).transpose(-2, -1)

    base = scores(0)
    out = {"norms_kept": flag(lambda: torch.allclose(apply_rope(q, positions).norm(dim=-1), q.norm(dim=-1), atol=1e-4)),
           "offset_free": flag(lambda: all(torch.allclose(scores(s), base, atol=1e-3) for s in (1, 17, 300))),
           "keys_moved_change": flag(lambda: not torch.allclose(scores(0, key_shift=3), base, atol=1e-3)),
           "position_0_identity": flag(lambda: torch.allclose(apply_rope(q, torch.zeros(6, dtype=torch.long)), q))}
    return out


# ---------------------------------------------------------------- Part 3: the grader's GPT around the student's attention


class GraderBlock(nn.Module):
    """The notebook's pre-norm Block, with the attention class it is given."""

    def __init__(self, attention_class, d_model: int, n_heads: int, rope: bool):
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d_model), nn.LayerNorm(d_model)
        self.attn = attention_class(d_model, n_heads, rope)
        self.mlp = nn.Sequential(nn.Linear(d_model, 4 * d_model), nn.GELU(), nn.Linear(4 * d_model, d_model))

    def forward(self, x, positions, cache=None):
        attended, cache = self.attn(self.ln1(x), positions, cache)
        x = x + attended
        return x + self.mlp(self.ln2(x)), cache


@stand_in("model")
class GraderGPT(nn.Module):
    """The notebook's GPT (RoPE, pre-norm, tied head), with the attention class it is given; parameters are set
    by name (fill_parameters), not by init_weights. It records each forward's input length, whether it was given
    caches, and whether gradients were on."""

    def __init__(self, attention_class, vocab_size: int = 23, d_model: int = 16, n_heads: int = 4,
                 n_layers: int = 2, rope: bool = True, seed: int = 70):
        super().__init__()
        self.tok_emb = nn.Embedding(vocab_size, d_model)
        self.blocks = nn.ModuleList(GraderBlock(attention_class, d_model, n_heads, rope) for _ in range(n_layers))
        self.ln_f = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab_size, bias=False)
        self.head.weight = self.tok_emb.weight
        self.max_len = 10_000
        self.calls: list[tuple[int, bool, bool]] = []
        fill_parameters(self, seed)

    def forward(self, idx, caches=None):
        self.calls.append((int(idx.shape[1]), caches is not None, torch.is_grad_enabled()))
        past = 0 if caches is None else caches[0][0].shape[2]
        positions = torch.arange(past, past + idx.shape[1])
        x, new = self.tok_emb(idx), []
        for i, block in enumerate(self.blocks):
            x, cache = block(x, positions, None if caches is None else caches[i])
            new.append(cache)
        return self.head(self.ln_f(x)), new


class TrustedAttention(nn.Module):
    """The attention of the notebook's solution, or one of its usual slips (`slip`, a class attribute set by
    `slipped`): "no_offset" (the causal mask ignores the cache: tril(0)), "prepended" (new keys before the cached
    ones), "no_scale", "scale_d_model" (scores / sqrt(d_model)), "scaled_after_softmax" (the weights, not
    the scores, divided by sqrt(d_head)), "rope_on_values", "heads_split" (heads split by view(B, n_heads, T, d_head)), "heads_merged"
    (heads merged by a reshape without the transpose), "cache_not_appended" (the cache returned as it came),
    "no_mask", "zero_fill" (blocked scores set to 0), "softmax_queries" (the softmax over the queries),
    "window_positions" (q and k rotated at 0 .. T-1, not at the positions given), "masked_after_softmax" (later
    keys' weights zeroed after a softmax over all keys), "mask_one_ahead" (tril(T_past + 1): each token also sees the
    next), "no_proj" (the merged heads returned without proj), "qk_swapped" (the projection unpacked as k, q, v),
    "heads_strided" (head h takes every n_heads-th coordinate), "scale_two_d_head" (scores / (2 d_head)),
    "rope_query_only", "positions_offset" (with a cache, q and k rotated at positions + T_past), "value_cache_keys"
    (the new keys appended to the value cache), "scale_key_count" (scores / sqrt(T_past + T)), "keys_by_queries"
    (scores k q^T), "scale_multiplied" (scores * sqrt(d_head)), "rope_before_split" (q and k rotated as vectors of
    d_model, before the heads are split), "mask_without_cache_only" (no mask when there is a cache),
    "global_softmax" (exp(scores) over the sum of the whole tensor)."""

    slip = ""

    def __init__(self, d_model: int, n_heads: int, rope: bool = True):
        super().__init__()
        self.n_heads, self.rope = n_heads, rope
        self.qkv = nn.Linear(d_model, 3 * d_model)
        self.proj = nn.Linear(d_model, d_model)

    def forward(self, x, positions, cache=None):
        B, T, d_model = x.shape
        d_head = d_model // self.n_heads
        if self.slip == "rope_before_split":
            q, k, v = self.qkv(x).split(d_model, dim=-1)
            q, k = trusted_rope(q, positions), trusted_rope(k, positions)
            q, k, v = (t.view(B, T, self.n_heads, d_head).transpose(1, 2) for t in (q, k, v))
        elif self.slip == "heads_split":
            q, k, v = (t.reshape(B, self.n_heads, T, d_head) for t in self.qkv(x).split(d_model, dim=-1))
        elif self.slip == "heads_strided":
            q, k, v = (t.view(B, T, d_head, self.n_heads).permute(0, 3, 1, 2) for t in self.qkv(x).split(d_model, -1))
        else:
            q, k, v = (t.view(B, T, self.n_heads, d_head).transpose(1, 2) for t in self.qkv(x).split(d_model, dim=-1))
        if self.slip == "qk_swapped":
            q, k = k, q
        if self.rope and self.slip != "rope_before_split":
            at = torch.arange(T) if self.slip == "window_positions" else positions
            if self.slip == "positions_offset" and cache is not None:
                at = positions + cache[0].shape[2]
            q, k = trusted_rope(q, at), (k if self.slip == "rope_query_only" else trusted_rope(k, at))
            if self.slip == "rope_on_values":
                v = trusted_rope(v, positions)
        new_k, new_v = k, v
        if cache is not None:
            first, second = ((k, cache[0]), (v, cache[1])) if self.slip == "prepended" else ((cache[0], k), (cache[1], v))
            k, v = torch.cat(first, dim=2), torch.cat((cache[1], k) if self.slip == "value_cache_keys" else second, dim=2)
        past = k.shape[2] - T
        scale = {"no_scale": 1.0, "scaled_after_softmax": 1.0, "scale_d_model": math.sqrt(d_model),
                 "scale_two_d_head": 2.0 * d_head}.get(self.slip, math.sqrt(d_head))
        scores = (k @ q.transpose(-2, -1) if self.slip == "keys_by_queries" else q @ k.transpose(-2, -1))
        if self.slip == "scale_multiplied":
            scores = scores * math.sqrt(d_head)
        else:
            scores = scores / (math.sqrt(k.shape[2]) if self.slip == "scale_key_count" else scale)
        offset = {"no_offset": 0, "mask_one_ahead": past + 1}.get(self.slip, past)
        allowed = torch.ones(T, past + T, dtype=torch.bool).tril(diagonal=offset)
        if self.slip not in ("no_mask", "masked_after_softmax") and not (self.slip == "mask_without_cache_only"
                                                                           and cache is not None):
            scores = scores.masked_fill(~allowed, 0.0 if self.slip == "zero_fill" else float("-inf"))
        weights = torch.softmax(scores, dim=-2 if self.slip == "softmax_queries" else -1)
        if self.slip == "global_softmax":
            weights = scores.exp() / scores.exp().sum()
        if self.slip == "scaled_after_softmax":
            weights = weights / math.sqrt(d_head)
        if self.slip == "masked_after_softmax":
            weights = weights.masked_fill(~allowed, 0.0)
        y = (weights @ v).reshape(B, T, d_model) if self.slip == "heads_merged" else \
            (weights @ v).transpose(1, 2).reshape(B, T, d_model)
        returned = cache if self.slip == "cache_not_appended" and cache is not None else (k, v)
        if self.slip == "cache_not_appended" and cache is None:
            returned = (new_k, new_v)
        return (y if self.slip == "no_proj" else self.proj(y)), returned


def slipped(slip: str):
    """TrustedAttention with `slip`."""
    return type(f"Slipped{slip.title()}", (TrustedAttention,), {"slip": slip})


ATTENTION_SLIPS = ("no_offset", "prepended", "no_scale", "scale_d_model", "scaled_after_softmax", "rope_on_values",
                   "heads_split", "heads_merged", "cache_not_appended", "no_mask", "zero_fill", "softmax_queries",
                   "window_positions", "masked_after_softmax", "mask_one_ahead", "no_proj", "qk_swapped",
                   "heads_strided", "scale_two_d_head", "rope_query_only", "positions_offset", "value_cache_keys",
                   "scale_key_count", "keys_by_queries", "scale_multiplied", "rope_before_split",
                   "mask_without_cache_only", "global_softmax")
PROMPT = torch.randint(0, 23, (2, 7), generator=generator(80))


def _attention_runs(attention_class, rope: bool = True) -> dict[str, np.ndarray]:
    """The grader's GPT around `attention_class`: logits of the whole sequence at once; token by token with the
    cache; three tokens, then four at once with their cache; the cache's length after each token; the first
    layer's cached keys."""
    model = GraderGPT(attention_class, rope=rope).eval()
    out = {}
    with torch.no_grad():
        out["full"] = caught(lambda: model(PROMPT)[0])

        def stepwise():
            logits, caches, lengths = [], None, []
            for t in range(PROMPT.shape[1]):
                step_logits, caches = model(PROMPT[:, t:t + 1], caches)
                logits.append(step_logits)
                lengths.append(int(caches[0][0].shape[2]))
            out["cache_lengths"] = ids_array(lengths)
            out["cached_keys"] = to_array(caches[0][0])
            return torch.cat(logits, dim=1)

        out["stepwise"] = caught(stepwise)

        def chunked():
            first, caches = model(PROMPT[:, :3])
            return torch.cat([first, model(PROMPT[:, 3:], caches)[0]], dim=1)

        out["chunked"] = caught(chunked)
    return out


@probe("attention_cache")
def probe_attention_cache(ns):
    """The student's CausalSelfAttention inside the grader's GPT (parameters set by name, the grader's apply_rope),
    with RoPE and without:
    the logits of a sequence at once, token by token with the cache (the cached logits must equal the full
    recomputation), three tokens and then four with their cache; the cache's length after each token; the cached
    keys (rotated); whether outputs at earlier positions ignore later tokens; clues: whether the logits are those
    of a usual slip (ATTENTION_SLIPS)."""
    attention_class = require(ns, "CausalSelfAttention")
    with replaced(ns, apply_rope=lambda x, positions, base=10000.0: trusted_rope(x, positions, base)):
        # the grader's apply_rope: a slip in the student's costs its own checks' points
        out = _attention_runs(attention_class)
        out |= {f"no_rope_{key}": value for key, value in _attention_runs(attention_class, rope=False).items()
                if key in ("full", "stepwise")}
        model = GraderGPT(attention_class).eval()
        changed = PROMPT.clone()
        changed[:, 5:] = (changed[:, 5:] + 1) % 23
        with torch.no_grad():
            out["causal"] = flag(lambda: torch.allclose(model(changed)[0][:, :5], model(PROMPT)[0][:, :5], atol=1e-5))
    for slip in ATTENTION_SLIPS:
        def compare(slip=slip):
            runs, right = slip_runs(slip), slip_runs("")
            differing = [key for key in ("full", "stepwise", "chunked")
                         if runs[key].dtype.kind == "f" and not np.allclose(runs[key], right[key], atol=1e-4)]
            return np.array(bool(differing) and all(bool(like(out[key], torch.as_tensor(runs[key]), atol=1e-4))
                                                    for key in differing))
        out[f"like_{slip}"] = clue(compare)
    return out


@functools.cache
def slip_runs(slip: str) -> dict[str, np.ndarray]:
    """The grader's GPT's runs with the attention of a slip ("": the right one): the same for every submission."""
    return _attention_runs(slipped(slip) if slip else TrustedAttention)


INIT_VOCAB = 512


class ScaledLinear(nn.Linear):
    """A subclass of nn.Linear, as a model may hold (nn.MultiheadAttention's out_proj is one)."""


@probe("initial_loss")
def probe_initial_loss(ns):
    """The grader's GPT (vocabulary 512, d_model 64, with learned positions, LayerNorms that have learned) after
    model.apply(init_weights): whether the loss on random tokens is within 0.1 of ln 512 (at three seeds), whether
    Linear weights (a subclass's too) and the Embeddings not tied to the head (the head's Linear draws the tied
    weight again) have a standard deviation near 0.02, whether init_weights changed any Linear or Embedding weight
    at all, whether two layers of one shape got different weights, whether every Linear bias is 0 and every
    LayerNorm 1 and 0, whether modules of other kinds (a convolution, a batch norm, a bare parameter) kept theirs,
    whether the head is still the token embedding's weight; and whether init_weights called on a container left
    the Linear inside it as it was."""
    init_weights = require(ns, "init_weights")
    results = {"loss_near_ln_v": [], "weights_changed": [], "linear_std": [], "embedding_std": [], "draws_differ": [],
               "biases_zero": [], "layernorm": []}
    for seed in (0, 1, 2):
        torch.manual_seed(seed)
        model = GraderGPT(TrustedAttention, vocab_size=INIT_VOCAB, d_model=64, n_heads=4, n_layers=2)
        model.pos_emb = nn.Embedding(128, 64)
        model.gate = nn.Linear(64, 64, bias=False)  # a Linear without a bias (not the tied head)
        model.scaled = ScaledLinear(64, 64)  # a subclass of nn.Linear: a Linear all the same
        model.extra = nn.Module()
        model.extra.register_parameter("scale", nn.Parameter(torch.full((3,), 7.0)))
        model.extra.conv, model.extra.norm = nn.Conv1d(4, 4, 3), nn.BatchNorm1d(4)  # modules of other kinds
        for module in model.modules():  # PyTorch's own initialisation, as a new model has it
            if hasattr(module, "reset_parameters"):
                module.reset_parameters()
        model.tok_emb.reset_parameters()  # the tied weight as a new GPT has it: nn.Embedding's N(0, 1), drawn last
        with torch.no_grad():  # a model whose LayerNorms have learned: init_weights must reset them too
            for module in model.modules():
                if isinstance(module, nn.LayerNorm):
                    module.weight.fill_(0.5)
                    module.bias.fill_(0.1)
        drawn = {m: m.weight.detach().clone() for m in model.modules() if isinstance(m, (nn.Linear, nn.Embedding))}
        others = {name: p.detach().clone() for name, p in model.extra.named_parameters()}
        model.apply(init_weights)
        linears = [m for m in model.modules() if isinstance(m, nn.Linear) and m is not model.head]
        results["weights_changed"].append(any(not torch.equal(m.weight, weight) for m, weight in drawn.items()))
        first, second = (block.attn.qkv.weight for block in model.blocks)  # one shape, two layers
        results["draws_differ"].append(not torch.equal(first, second))
        results["linear_std"].append(all(abs(m.weight.std().item() - 0.02) < 0.004 for m in linears))
        untied = [m for m in model.modules() if isinstance(m, nn.Embedding) and m.weight is not model.head.weight]
        results["embedding_std"].append(all(abs(m.weight.std().item() - 0.02) < 0.004 for m in untied))
        results["biases_zero"].append(all(torch.all(m.bias == 0).item() for m in linears if m.bias is not None))
        results["layernorm"].append(all(torch.all(m.weight == 1).item() and torch.all(m.bias == 0).item()
                                        for m in model.modules() if isinstance(m, nn.LayerNorm)))
        tokens = torch.randint(0, INIT_VOCAB, (8, 64), generator=generator(90 + seed))
        with torch.no_grad():
            loss = F.cross_entropy(model(tokens)[0].reshape(-1, INIT_VOCAB), tokens.roll(-1, dims=1).reshape(-1))
        results["loss_near_ln_v"].append(abs(loss.item() - math.log(INIT_VOCAB)) < 0.1)
        other_kept = torch.equal(model.extra.scale, torch.full((3,), 7.0)) and all(
            torch.equal(p, others[name]) for name, p in model.extra.named_parameters() if name in others)
        tied = model.head.weight is model.tok_emb.weight
    inner = nn.Linear(4, 4)
    before = inner.weight.detach().clone()
    init_weights(nn.Sequential(inner))  # called on a container, init_weights changes nothing below it
    return {key: np.array(all(values)) for key, values in results.items()} | {
        "other_modules_kept": np.array(other_kept), "head_still_tied": np.array(tied),
        "container_kept": np.array(torch.equal(inner.weight, before))}


GENERATE_PROMPT = torch.randint(0, 23, (2, 4), generator=generator(81))
NEW_TOKENS = 6


@stand_in("model")
class ZeroModel(nn.Module):
    """A model whose next id is always 0, on any input (B, T), with a cache of one layer's (keys, values), (B, 1,
    T_past + T, 1): 0 ends no text, so generate must still return every id asked for."""

    def forward(self, idx, caches=None):
        past = 0 if caches is None else caches[0][0].shape[2]
        logits = torch.zeros(*idx.shape, 5)
        logits[..., 0] = 1.0
        keys = torch.zeros(idx.shape[0], 1, past + idx.shape[1], 1)
        return logits, [(keys, keys)]


@probe("generate")
def probe_generate(ns):
    """The student's generate with the grader's GPT (its own attention), with the cache and without: the ids, the
    logits each new id was chosen from, the dtype of the ids; each forward's input length and whether it was
    given caches; whether gradients were off in every forward, and on again after generate returned; the shape of
    the logits for one prompt and one new token; the shape of the ids when every next id is 0 (ZeroModel), with and
    without the cache; clues: whether the logits are the probabilities,
    or the logits of the first position."""
    generate = require(ns, "generate")
    out = {}
    for use_cache in (False, True):
        mode = "cached" if use_cache else "full"
        model = GraderGPT(TrustedAttention, seed=71).eval()
        model.max_len = GENERATE_PROMPT.shape[1] + NEW_TOKENS - 2  # RoPE: nothing to outgrow, all ids still read
        try:
            ids, logits = generate(model, GENERATE_PROMPT.clone(), NEW_TOKENS, use_cache=use_cache)
            out[f"{mode}_ids"], out[f"{mode}_logits"] = to_array(ids), to_array(logits)
            out[f"{mode}_dtype"] = np.array(str(getattr(ids, "dtype", type(ids).__name__)))
        except Exception as error:
            out[f"{mode}_ids"] = error_output(error)
        out[f"{mode}_calls"] = np.array([[length, given] for length, given, _ in model.calls], dtype=np.int64)
        out[f"{mode}_no_grad"] = np.array(not any(grad for _, _, grad in model.calls))
        if f"{mode}_logits" in out:
            new_ids, logits = out[f"{mode}_ids"][:, GENERATE_PROMPT.shape[1]:], out[f"{mode}_logits"]
            out[f"{mode}_argmax"] = np.array(new_ids.shape == logits.shape[:2]
                                             and bool(np.array_equal(new_ids, logits.argmax(-1))))
        later = model.calls[1:]
        if use_cache:
            out["refeeds_ids"] = np.array(any(given and length > 1 for length, given, _ in later))
            out["drops_caches"] = np.array(bool(later) and not any(given for _, given, _ in later))
            out["skips_prompt"] = np.array(bool(model.calls) and model.calls[0][0] < GENERATE_PROMPT.shape[1])
    torch.set_grad_enabled(True)
    try:
        _, single = generate(GraderGPT(TrustedAttention, seed=71).eval(), GENERATE_PROMPT[:1].clone(), 1, use_cache=True)
        out["single_shape"] = np.array(tuple(getattr(single, "shape", ())))
    except Exception as error:
        out["single_shape"] = error_output(error)
    finally:
        out["grad_mode_kept"] = np.array(torch.is_grad_enabled())
        torch.set_grad_enabled(True)
    out["through_id_zero"] = np.array([
        tuple(caught(lambda use_cache=use_cache: generate(ZeroModel(), torch.zeros(2, 3, dtype=torch.long), 4,
                                                          use_cache=use_cache)[0]).shape)
        for use_cache in (False, True)])
    model = GraderGPT(TrustedAttention, seed=71).eval()
    with torch.no_grad():
        reference_logits = []
        ids = GENERATE_PROMPT.clone()
        for _ in range(NEW_TOKENS):
            logits = model(ids)[0]
            reference_logits.append(logits)
            ids = torch.cat([ids, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    last = torch.stack([logits[:, -1] for logits in reference_logits], dim=1)
    first = torch.stack([logits[:, 0] for logits in reference_logits], dim=1)
    for mode in ("full", "cached"):
        if f"{mode}_logits" in out:
            out[f"like_{mode}_probabilities"] = clue(lambda mode=mode: like(out[f"{mode}_logits"], last.softmax(-1)))
            out[f"like_{mode}_first_position"] = clue(lambda mode=mode: like(out[f"{mode}_logits"], first))
    return out


# ---------------------------------------------------------------- Part 4: the recipe


@stand_in("model")
class RecipeModel(nn.Module):
    """A model with every kind of parameter the optimizer's groups separate: a tied token embedding, a learned
    position table, Linear layers with and without bias, LayerNorms, and a Linear whose bias is off."""

    def __init__(self):
        super().__init__()
        self.tok_emb = nn.Embedding(11, 6)
        self.pos_emb = nn.Embedding(8, 6)
        self.ln = nn.LayerNorm(6)
        self.mix = nn.Sequential(nn.Linear(6, 12), nn.GELU(), nn.Linear(12, 6, bias=False))
        self.ln_f = nn.LayerNorm(6)
        self.head = nn.Linear(6, 11, bias=False)
        self.head.weight = self.tok_emb.weight
        self.logit_scale = 4.0  # logits large enough that the gradients' norm is above 1 (clipping acts)
        fill_parameters(self, 60)

    def forward(self, idx, caches=None):
        x = self.tok_emb(idx) + self.pos_emb(torch.arange(idx.shape[1]))
        x = x + self.mix(self.ln(x))
        return self.head(self.ln_f(x)) * self.logit_scale, None


@probe("optimizer_groups")
def probe_optimizer_groups(ns):
    """configure_optimizer on a model with a tied head, a position table, LayerNorms, biases and a Linear shaped like
    the embedding: the optimizer's type, the parameter names of each group, each group's weight decay, lr, betas and
    eps, and whether every parameter
    is in one group once; clues: whether the decayed group holds LayerNorm weights, biases or embeddings."""
    configure_optimizer = require(ns, "configure_optimizer")
    model = RecipeModel()
    model.gate = nn.Linear(6, 11, bias=False)  # a Linear shaped like the token embedding, not tied to it
    names = {id(p): name for name, p in model.named_parameters()}
    try:
        optimizer = configure_optimizer(model, 0.0125, 0.07)  # positionally, as the notebook's recipe calls it
    except ValueError as error:  # AdamW refuses a parameter in two groups: the tied weight, counted twice
        if "more than one parameter group" not in str(error):
            raise
        return {"type": error_output(error), "duplicate_error": np.array(True)}
    groups = [[names.get(id(p), "not a parameter of the model") for p in group["params"]]
              for group in optimizer.param_groups]
    out = {"type": np.array(type(optimizer).__name__), "group_count": np.array(len(groups)),
           "decayed": np.array(sorted(groups[0]) if groups else []),
           "not_decayed": np.array(sorted(name for group in groups[1:] for name in group)),
           "weight_decays": np.array([float(group.get("weight_decay", 0.0)) for group in optimizer.param_groups]),
           "lr": np.array([float(group["lr"]) for group in optimizer.param_groups]),
           "betas": np.array([tuple(map(float, group["betas"])) for group in optimizer.param_groups]),
           "eps": np.array([float(group["eps"]) for group in optimizer.param_groups]),
           "each_once": np.array(sorted(name for group in groups for name in group) == sorted(names.values()))}
    decays = [float(group.get("weight_decay", 0.0)) for group in optimizer.param_groups]
    first = groups[int(np.argmax(decays))] if groups else []  # the decayed group, wherever it is
    out["groups_swapped"] = np.array(len(decays) == 2 and decays[0] == 0.0 and decays[1] > 0.0)
    out["decays_layernorm"] = np.array(any(name.startswith("ln") for name in first))
    out["decays_biases"] = np.array(any(name.endswith("bias") for name in first))
    out["decays_embeddings"] = np.array(any("emb" in name for name in first))
    listed = [id(p) for group in optimizer.param_groups for p in group["params"]]
    out["duplicated"] = np.array(len(listed) != len(set(listed)))
    out["misses_linear_weights"] = np.array(not any(name.startswith("mix") and name.endswith("weight")
                                                    for name in first))
    out["duplicate_error"] = np.array(False)
    return out


LR_SETTINGS = {"warmup_10": (10, 100, 1.0, 0.1, 115), "no_warmup": (0, 50, 3e-3, 3e-4, 55),
               "warmup_1": (1, 20, 2.0, 0.0, 22), "flat": (5, 30, 0.5, 0.5, 33)}


def trusted_lr(step, warmup, total, max_lr, min_lr, slip: str = "") -> float:
    """The schedule, or a slip: "warmup_from_zero" (max_lr * step / warmup), "warmup_linspace" (max_lr * step /
    (warmup - 1)), "progress_over_total" ((step - warmup) / total), "progress_short" ((step - warmup) / (total -
    warmup - 1)), "no_floor" (cosine to 0), "no_clamp" (the cosine goes on past total), "linear_decay",
    "warmup_inclusive" (the warm-up's formula at step warmup too), "warmup_from_min" (warm-up from min_lr),
    "progress_floor" (progress by floor division), "no_pi" (cos(progress)), "bounds_swapped" (the cosine from
    min_lr up to max_lr), "warmup_floor" (max_lr * ((step + 1) // warmup)), "range_not_subtracted" (the cosine
    scales max_lr, not max_lr - min_lr), "degrees" (cos(180 * progress)), "parentheses_lost" (min_lr + 0.5 + cos *
    (max_lr - min_lr)), "warmup_plus_one" (the warm-up over warmup + 1), "progress_from_zero" (step / (total -
    warmup)), "steps_from_one" (the schedule one step ahead), "no_half" (the cosine without its 0.5),
    "warmup_over_total" (max_lr * (step + 1) / total), "constant_without_warmup" (max_lr throughout when warmup
    is 0), "floor_max_lr" (max_lr from step total on), "quarter_cosine" (cos(pi/2 * progress)), "min_lr_ratio"
    (min_lr taken as a fraction of max_lr), "full_period" (cos(2 pi progress)), "warmup_clamped" (warmup raised to
    1 when it is 0), "warmup_parentheses" (max_lr * (step + 1 / warmup)), "warmup_to_range" ((max_lr - min_lr) *
    (step + 1) / warmup), "warmup_not_returned" (the warm-up steps fall through to the cosine)."""
    if slip == "warmup_clamped":
        warmup = max(warmup, 1)
    if slip == "constant_without_warmup" and warmup == 0:
        return max_lr
    if slip == "steps_from_one":
        step += 1
    if (step < warmup or (slip == "warmup_inclusive" and step == warmup)) and slip != "warmup_not_returned":
        if slip == "warmup_linspace":
            return max_lr * step / (warmup - 1)
        if slip == "warmup_from_min":
            return min_lr + (max_lr - min_lr) * (step + 1) / warmup
        if slip == "warmup_floor":
            return max_lr * ((step + 1) // warmup)
        if slip == "warmup_plus_one":
            return max_lr * (step + 1) / (warmup + 1)
        if slip == "warmup_over_total":
            return max_lr * (step + 1) / total
        if slip == "warmup_parentheses":
            return max_lr * (step + 1 / warmup)
        if slip == "warmup_to_range":
            return (max_lr - min_lr) * (step + 1) / warmup
        return max_lr * (step if slip == "warmup_from_zero" else step + 1) / warmup
    if slip == "min_lr_ratio" and step >= warmup:
        min_lr = min_lr * max_lr
    if step >= total and slip == "floor_max_lr":
        return max_lr
    if step >= total and slip != "no_clamp":
        return 0.0 if slip == "no_floor" else min_lr
    span = {"progress_over_total": total, "progress_short": total - warmup - 1}.get(slip, total - warmup)
    progress = (step - warmup) // span if slip == "progress_floor" else (step - warmup) / span
    if slip == "progress_from_zero":
        progress = step / span
    if slip == "parentheses_lost":
        return min_lr + 0.5 + math.cos(math.pi * progress) * (max_lr - min_lr)
    if slip == "linear_decay":
        return max_lr - progress * (max_lr - min_lr)
    low, high = (max_lr, min_lr) if slip == "bounds_swapped" else (0.0 if slip == "no_floor" else min_lr, max_lr)
    half_period = {"no_pi": 1.0, "degrees": 180.0, "full_period": 2 * math.pi}.get(slip, math.pi)
    amplitude = max_lr if slip == "range_not_subtracted" else high - low
    if slip == "quarter_cosine":
        return min_lr + math.cos(0.5 * math.pi * progress) * (max_lr - min_lr)
    return low + (1.0 if slip == "no_half" else 0.5) * (1.0 + math.cos(half_period * progress)) * amplitude


LR_SLIPS = ("warmup_from_zero", "warmup_linspace", "progress_over_total", "progress_short", "no_floor", "no_clamp",
            "linear_decay", "warmup_inclusive", "warmup_from_min", "progress_floor", "no_pi", "bounds_swapped",
            "warmup_floor", "range_not_subtracted", "degrees", "parentheses_lost", "warmup_plus_one",
            "progress_from_zero", "steps_from_one", "no_half", "warmup_over_total", "constant_without_warmup",
            "floor_max_lr", "quarter_cosine", "min_lr_ratio", "full_period", "warmup_clamped", "warmup_parentheses",
            "warmup_to_range", "warmup_not_returned")


def slip_rates(slip: str, warmup: int, total: int, max_lr: float, min_lr: float, steps: int) -> np.ndarray | None:
    """The slip's rates at every step of a setting, or None where it cannot compute them (a division by zero)."""
    try:
        return np.array([trusted_lr(step, warmup, total, max_lr, min_lr, slip) for step in range(steps)])
    except ZeroDivisionError:
        return None


@probe("lr_schedule")
def probe_lr_schedule(ns):
    """lr_at at every step (and some past the end) of runs with 10, 0 and 1 warm-up steps and a flat one; whether
    every value is a Python float; clues: whether the rates are those of a usual slip (LR_SLIPS)."""
    lr_at = require(ns, "lr_at")
    out, types = {}, []
    for name, (warmup, total, max_lr, min_lr, steps) in LR_SETTINGS.items():
        def rates(warmup=warmup, total=total, max_lr=max_lr, min_lr=min_lr, steps=steps):
            values = [lr_at(step, warmup, total, max_lr, min_lr) for step in range(steps)]
            types.extend(type(v).__name__ for v in values)
            return np.array(values, dtype=np.float64)
        out[name] = caught(rates)
    out["floats"] = np.array(bool(types) and all(t == "float" for t in types))
    for slip in LR_SLIPS:
        def like_slip(slip=slip) -> np.ndarray:
            """The slip's rates in every setting where they are not the schedule's (and it computes them)."""
            differing = [(name, rates) for name, setting in LR_SETTINGS.items()
                         if (rates := slip_rates(slip, *setting)) is not None
                         and not np.allclose(rates, slip_rates("", *setting))]
            return np.array(bool(differing) and all(bool(like(out[name], rates, atol=1e-9))
                                                    for name, rates in differing))
        out[f"like_{slip}"] = clue(like_slip)
    return out


class RecordingAdamW(torch.optim.AdamW):
    """The grader's AdamW (two groups, as the recipe's), recording at each step each group's lr and the gradients
    (flattened, in the groups' order)."""

    def __init__(self, model: nn.Module):
        decay = [model.mix[0].weight, model.mix[2].weight]
        rest = [p for p in model.parameters() if all(p is not q for q in decay)]
        super().__init__([{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}], lr=1e-3,
                         betas=(0.9, 0.95))
        self.gradients, self.rates = [], []

    def step(self, closure=None):
        self.gradients.append(torch.cat([(p.grad if p.grad is not None else torch.zeros_like(p)).detach().reshape(-1)
                                         for group in self.param_groups for p in group["params"]]))
        self.rates.append([float(group["lr"]) for group in self.param_groups])
        return super().step(closure)


def fresh_gradient(model: nn.Module, x: torch.Tensor, y: torch.Tensor, optimizer: RecordingAdamW):
    """The gradient of the mean cross-entropy of (x, y) for a copy of `model` (before its step), flattened in the
    optimizer's group order (the copy's parameters matched to the original's by name), and the losses of four slips:
    summed over the positions, on targets shifted a second time (logits[:, :-1] against y[:, 1:]), nll_loss of the
    logits (no log-softmax), the cross-entropy of the probabilities (softmax twice), that of the last position
    only, that against the inputs, that with label smoothing 0.1, that leaving out the targets of id 0, that divided
    by B again, and that of the logits flattened time-major."""
    copy, names = copy_module(model), {id(p): name for name, p in model.named_parameters()}
    copied = dict(copy.named_parameters())
    logits, _ = copy(x)
    flat = logits.reshape(-1, logits.shape[-1])
    loss = F.cross_entropy(flat, y.reshape(-1))
    with torch.no_grad():
        slips = {"summed": F.cross_entropy(flat, y.reshape(-1), reduction="sum").item(),
                 "shifted_again": F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]),
                                                  y[:, 1:].reshape(-1)).item(),
                 "nll_of_logits": F.nll_loss(flat, y.reshape(-1)).item(),
                 "softmax_twice": F.cross_entropy(flat.softmax(dim=-1), y.reshape(-1)).item(),
                 "last_position": F.cross_entropy(logits[:, -1, :], y[:, -1]).item(),
                 "inputs_as_targets": F.cross_entropy(flat, x.reshape(-1)).item(),
                 "label_smoothing": F.cross_entropy(flat, y.reshape(-1), label_smoothing=0.1).item(),
                 "ignore_zero": F.cross_entropy(flat, y.reshape(-1), ignore_index=0).item(),
                 "over_batch": loss.item() / x.shape[0],
                 "time_major": F.cross_entropy(logits.transpose(0, 1).reshape(-1, logits.shape[-1]),
                                               y.reshape(-1)).item()}
    loss.backward()
    gradient = torch.cat([copied[names[id(p)]].grad.reshape(-1) for group in optimizer.param_groups
                          for p in group["params"]])
    return gradient, slips


def copy_module(model: nn.Module) -> nn.Module:
    clone = RecipeModel()
    clone.load_state_dict(model.state_dict())
    clone.logit_scale = model.logit_scale
    return clone


def clipped(gradient: torch.Tensor, max_norm: float = 1.0) -> torch.Tensor:
    """As clip_grad_norm_ scales gradients whose global norm is above max_norm."""
    return gradient * min(1.0, max_norm / (float(gradient.norm()) + 1e-6))


STEP_RATES = (0.05, 0.02, 0.03)


def _batch(seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    tokens = torch.randint(0, 11, (3, 8), generator=generator(seed))
    return tokens[:, :-1], tokens[:, 1:]


def as_number(loss) -> float:
    """A returned loss as a float (a float, a one-element tensor), or NaN for anything else (None, loss.item
    uncalled): the type is recorded on its own."""
    try:
        return float(loss)
    except (TypeError, ValueError, RuntimeError):
        return float("nan")


STALE_GRADIENT = 0.5  # in every parameter's .grad before the first call, as an evaluation's backward leaves them


@probe("train_step")
def probe_train_step(ns):
    """Three calls of train_step (the grader's model and AdamW, each call its own batch and lr, the model left in
    eval mode before each, its gradients holding STALE_GRADIENT before the first): the losses returned and their types, each group's lr and the gradients when the
    optimizer stepped, whether the model was in training mode, the parameters after; the gradient at the step of a
    model whose gradient's norm is below 1.0 (clipping must leave it); then 150 steps on one batch
    of the grader's small GPT: whether its loss fell below 0.1 (overfitting one batch). Clues: whether the
    gradients at each step were this batch's unclipped, or this batch's added to the step before's."""
    train_step = require(ns, "train_step")
    model = RecipeModel()
    optimizer = RecordingAdamW(model)
    for parameter in model.parameters():  # gradients left over from before (an evaluation's backward)
        parameter.grad = torch.full_like(parameter, STALE_GRADIENT)
    losses, types, modes, fresh, slipped_losses = [], [], [], [], []
    for i, lr in enumerate(STEP_RATES):
        x, y = _batch(100 + i)
        gradient, slips = fresh_gradient(model, x, y, optimizer)
        fresh.append(gradient)
        slipped_losses.append(slips)
        model.eval()
        original_forward = model.forward

        def forward(idx, caches=None):
            modes.append(model.training)
            return original_forward(idx, caches)

        model.forward = forward
        try:
            loss = train_step(model, optimizer, x, y, lr)
        finally:
            model.forward = original_forward
        types.append(type(loss).__name__)
        losses.append(as_number(loss))
    recorded = optimizer.gradients
    out = {"losses": np.array(losses), "loss_types": np.array(types),
           "steps_taken": np.array(len(recorded)),
           "step_rates": np.array(optimizer.rates, dtype=np.float64).reshape(-1),
           "step_gradients": caught(lambda: torch.stack(recorded)),
           "clipped": np.array(len(recorded) == 3 and all(float(g.norm()) <= 1.0 + 1e-4 for g in recorded)),
           "train_mode": np.array(bool(modes) and all(modes)),
           "parameters": np.concatenate([to_array(p).ravel() for _, p in sorted(model.named_parameters())])}
    out["zero_gradients_at_step"] = np.array(bool(recorded) and all(float(g.abs().max()) == 0.0 for g in recorded))
    for slip in ("summed", "shifted_again", "nll_of_logits", "softmax_twice", "last_position", "inputs_as_targets",
                 "label_smoothing", "ignore_zero", "over_batch", "time_major"):  # only the first step's: the slips' later losses follow other steps
        out[f"like_loss_{slip}"] = clue(lambda slip=slip: like(out["losses"][:1], [slipped_losses[0][slip]], atol=1e-4))
    if len(recorded) == 3:
        out["like_unclipped"] = clue(lambda: like(to_array(torch.stack(recorded)), torch.stack(fresh), atol=1e-5))
        accumulated, before = [], torch.full_like(fresh[0], STALE_GRADIENT)
        for gradient in fresh:
            before = clipped(before + gradient)
            accumulated.append(before)
        out["like_accumulated"] = clue(lambda: like(to_array(torch.stack(recorded)), torch.stack(accumulated),
                                                    atol=1e-5))
    gentle = RecipeModel()
    gentle.logit_scale = 0.05  # gradients of norm below 1.0: clipping leaves them as they are
    gentle_optimizer = RecordingAdamW(gentle)
    x, y = _batch(120)
    train_step(gentle, gentle_optimizer, x, y, 0.01)
    out["small_gradient"] = caught(lambda: gentle_optimizer.gradients[0])
    torch.manual_seed(0)
    small = GraderGPT(TrustedAttention, vocab_size=30, d_model=16, n_heads=2, n_layers=1, seed=72)
    small_optimizer = torch.optim.AdamW(small.parameters(), lr=0.01, betas=(0.9, 0.95), weight_decay=0.0)
    tokens = torch.randint(0, 30, (4, 17), generator=generator(110))
    final = None
    for _ in range(150):
        final = train_step(small, small_optimizer, tokens[:, :-1], tokens[:, 1:], 0.01)
    out["overfits_one_batch"] = np.array(bool(as_number(final) < 0.1))
    return out
