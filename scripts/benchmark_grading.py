"""Grading throughput and overhead on a class of copies of the samples: serially, two at a time, and on a LocalCluster.

    make bench-grading [ASSIGNMENT=name] [STUDENTS=20] [REPEAT=1]      (default: pretrained_attention, 20 students)

In a scratch course directory: releases the assignment, runs its perfect, partial and blank samples, hands them in
as STUDENTS students (in turn), then prints
- each sample notebook executed bare with nbclient (one process each, one thread as in grading): wall and CPU seconds;
- the class graded serially (the local batch, --jobs 1), two at a time (--jobs 2) and on a LocalCluster of 2 worker
  processes (--cluster local --jobs 2): submissions per minute, the speedups, and whether all gave the same grades
  (with --repeat N, N times each way in turn, each way's fastest run kept: a 2-core machine's other load slows a
  run by several percent, and a single run of each way can tip a speedup either way);
- the class's own steps (a batch with nothing left to grade: the merge, the report, similar submissions), and the
  LocalCluster's start, which each batch runs once whatever the class's size; the speedup and the ratios below are
  of the gradings without them (and the whole batch's speedup beside);
- grading's wall and CPU per submission against the bare execution's (the overhead ratios), and where grading's time goes
  (each step's wall seconds, from the records of the serial run).
Nothing here is a test: it prints figures. Run it on an otherwise idle machine.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from course import paths  # noqa: E402
from course.grading import limits  # noqa: E402
from course.grading.sandbox import grading_env  # noqa: E402

SAMPLES = ("perfect", "partial", "blank")
BARE = ("import sys, nbformat\n"
        "from pathlib import Path\n"
        "from course.samples import run_notebook\n"
        "run_notebook(nbformat.read(sys.argv[1], as_version=4), Path(sys.argv[2]), cell_timeout=600)\n")
# Grading runs each notebook with one thread per kernel (--jobs 1 here, and one per worker on the cluster); the bare
# runs get the same, so that both sides of the overhead ratio do the same work on the same cores.
ONE_THREAD = {name: "1" for name in limits.THREAD_VARIABLES}


def machine_cpu() -> float:
    """CPU seconds the whole machine has been busy (/proc/stat): grading's steps run in sandboxes and process groups
    whose CPU time no parent collects, so a run's CPU is the machine's, on an otherwise idle machine."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq = (int(v) for v in f.readline().split()[1:8])
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def timed(command: list[str], env: dict, cwd: Path = paths.ROOT) -> tuple[float, float]:
    """Run `command` to the end; (wall seconds, CPU seconds of the machine meanwhile)."""
    cpu, start = machine_cpu(), time.perf_counter()
    subprocess.run(command, cwd=cwd, env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - start, machine_cpu() - cpu


# Timed in a process that has already imported what every batch imports (the local batch pays that too): only what
# --cluster local adds, Dask's import, the LocalCluster and its workers warmed, is counted as the cluster's start.
CLUSTER_START = ("import time\nimport course.grading.batch\nstart = time.perf_counter()\n"
                 "from course.grading.cluster import LOCAL, ClusterPool\n"
                 "pool = ClusterPool(LOCAL, 2)\npool.client.wait_for_workers(2)\npool.close()\n"
                 "print(time.perf_counter() - start)\n")


def cluster_start_seconds(env: dict) -> float:
    """Seconds for what the batch's pool of --cluster local --jobs 2 adds to a batch (course.grading.cluster.ClusterPool:
    Dask's import, a LocalCluster, its workers warmed, stopped): once per batch, whatever the class's size, like the
    class's own steps."""
    done = subprocess.run([sys.executable, "-c", CLUSTER_START], cwd=paths.ROOT, env=env, check=True,
                          capture_output=True, text=True)
    return float(done.stdout.split()[-1])


def records(course: Path, assignment: str) -> dict[str, dict]:
    return {p.stem: json.loads(p.read_text()) for p in (course / "build" / "results" / assignment).glob("*.json")}


def without_seconds(found: dict[str, dict]) -> dict[str, dict]:
    return {student: {k: v for k, v in record.items() if k != "seconds"} for student, record in found.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("assignment", nargs="?", default="pretrained_attention")
    parser.add_argument("--students", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=1,
                        help="grade the class this many times each way, in turn, and keep each way's fastest run")
    args = parser.parse_args()
    assignment, python = args.assignment, sys.executable
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as scratch:
        course = Path(scratch)
        env = {**grading_env(), **paths.course_environment(course, course / "build"),
               "COURSE_ASSIGNMENTS_DIR": str(paths.ASSIGNMENTS_DIR)}
        for command in (["course.build_source", assignment], ["course.release", assignment],
                        ["course.samples", assignment, "--samples", *SAMPLES]):
            done = subprocess.run([python, "-m", *command], cwd=paths.ROOT, env=env, capture_output=True, text=True)
            if done.returncode:
                sys.exit(f"{' '.join(command)} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        submitted = course / "submitted"
        print(f"# {assignment}: a class of {args.students} ({', '.join(SAMPLES)} in turn)\n")
        bare = {}
        for sample in SAMPLES:
            folder = course / "bare" / sample
            shutil.copytree(submitted / sample / assignment, folder)
            bare[sample] = timed([python, "-c", BARE, str(folder / f"{assignment}.ipynb"), str(folder)],
                                 {**env, **ONE_THREAD}, folder)
            print(f"bare nbclient run, {sample:8s} {bare[sample][0]:6.1f} s wall {bare[sample][1]:6.1f} s CPU")
        for sample in SAMPLES:
            shutil.rmtree(submitted / sample)
        students = [f"student{i:02d}" for i in range(1, args.students + 1)]
        for i, student in enumerate(students):
            shutil.copytree(course / "bare" / SAMPLES[i % len(SAMPLES)], submitted / student / assignment)
        bare_wall, bare_cpu = (statistics.mean(bare[SAMPLES[i % len(SAMPLES)]][m] for i in range(len(students)))
                               for m in (0, 1))

        batch = [python, "-m", "course.grading.batch", assignment, "--quiet"]
        ways = {"serial": ([*batch, "--regrade", "--jobs", "1"], {**env, **ONE_THREAD}),
                "two_jobs": ([*batch, "--regrade", "--jobs", "2"], env),
                "cluster": ([*batch, "--regrade", "--cluster", "local", "--jobs", "2"], env)}
        fastest, serial_records, same = {}, None, True
        for _ in range(args.repeat):  # the three ways in turn, each one's fastest run kept (other load only slows)
            for way, (command, way_env) in ways.items():
                taken = timed(command, way_env)
                serial_records = serial_records or records(course, assignment)
                same = same and without_seconds(records(course, assignment)) == without_seconds(serial_records)
                fastest[way] = min(fastest.get(way, taken), taken)
                if args.repeat > 1:
                    print(f"  run: {way:8s} {taken[0]:6.1f} s wall")
        serial, two_jobs, cluster = fastest["serial"], fastest["two_jobs"], fastest["cluster"]
        # The class's own steps, once per batch whatever its size: listing, the merge (grades, feedback pages, the
        # report, similar submissions). A batch with nothing left to grade does only those.
        class_steps = timed([*batch, "--jobs", "1"], {**env, **ONE_THREAD})
        start = cluster_start_seconds(env)
        n = len(students)
        grading = [total - steps for total, steps in zip(serial, class_steps)]  # (wall, CPU) of the gradings alone
        print(f"\nserially (local batch, 1 at a time)  {serial[0]:6.1f} s  {60 * n / serial[0]:5.1f} submissions/min")
        print(f"local batch, 2 at a time (--jobs 2)  {two_jobs[0]:6.1f} s  {60 * n / two_jobs[0]:5.1f} submissions/min")
        print(f"LocalCluster, 2 worker processes     {cluster[0]:6.1f} s  {60 * n / cluster[0]:5.1f} submissions/min")
        print(f"the class's own steps (listing, merge, report, similarity), in each: {class_steps[0]:.1f} s; "
              f"the LocalCluster's start (its scheduler and 2 worker processes, warmed): {start:.1f} s")
        print(f"speedup of the gradings, 2 at a time against 1 (target at least 1.9x): local batch "
              f"{grading[0] / (two_jobs[0] - class_steps[0]):.2f}x, LocalCluster "
              f"{grading[0] / (cluster[0] - class_steps[0] - start):.2f}x; of the whole batch "
              f"{serial[0] / two_jobs[0]:.2f}x and {serial[0] / cluster[0]:.2f}x; same grades all three ways: "
              f"{'yes' if same else 'NO'}")
        print(f"\nper submission, one thread each: grading {grading[0] / n:.1f} s wall, {grading[1] / n:.1f} s CPU; "
              f"bare nbclient run {bare_wall:.1f} s wall, {bare_cpu:.1f} s CPU")
        print(f"overhead ratio: wall {grading[0] / n / bare_wall:.2f}x, CPU {grading[1] / n / bare_cpu:.2f}x "
              f"(target at most 1.3x)")
        seconds = {step: statistics.mean(r["seconds"].get(step, 0.0) for r in serial_records.values())
                   for step in ("nbgrader", "probe", "judge")}
        print("where a grading's wall time goes (serial run): nbgrader's step "
              f"{seconds['nbgrader']:.1f} s, of which the probes {seconds['probe']:.1f} s (in the notebook's kernel) "
              f"and the judge {seconds['judge']:.2f} s; the rest (grade_one's own process, the batch's) "
              f"{grading[0] / n - seconds['nbgrader']:.1f} s")

if __name__ == "__main__":
    main()
