"""The fast path (course.measuring.grader_accuracy: the corpus's notebooks judged without the sandbox, for the grader's
figures and the tests) runs student-like code outside the sandbox's cgroup, so each of its processes caps its own
memory: code that asks for far more than any probe needs (the given Block pasted where decode was: the ids taken for
a LayerNorm's shape) gets an allocation error, which the probes catch, not the machine's memory."""

from course.measuring.grader_accuracy import FAST_PATH_MEMORY_MB, fast_path_pool


def reserve(megabytes: int) -> str:
    """Reserve (without touching) a tensor of `megabytes` in this process."""
    import torch

    try:
        torch.empty(megabytes * 2**20, dtype=torch.uint8)
    except RuntimeError:
        return "refused"
    return "reserved"


def test_a_fast_path_process_is_refused_more_memory_than_its_cap_and_given_what_a_probe_needs():
    with fast_path_pool() as pool:
        assert list(pool.map(reserve, [FAST_PATH_MEMORY_MB + 1024, 512])) == ["refused", "reserved"]
