"""Grading on a Dask cluster: each submission one task, graded on a worker, its result applied by the driver.

    python -m course.grading.batch --cluster tcp://scheduler:8786     (or COURSE_SCHEDULER=tcp://...; --cluster local
                                                                      starts a LocalCluster of --jobs processes)

Workers get each submission as bytes (course.grading.task) and return the result as data: no shared filesystem,
and the driver stays the only writer of records, the gradebook, autograded/ and feedback/. A task whose worker dies
(kill -9, a lost machine) is run again once, elsewhere; if its worker dies again, the submission is recorded as
'crashed' and the rest of the class is graded.
"""

from __future__ import annotations

import sys
import uuid
from dataclasses import asdict

import dask
from distributed import Client, Future, LocalCluster, as_completed
from distributed.scheduler import KilledWorker

from course import paths
from course.grading import gradebook, limits
from course.grading.grade_one import invalid_record
from course.grading.task import (Result, UnfitWorker, apply, crashed_worker_record, fingerprint, grade_task, pack,
                                 remove_stale_folders)

LOCAL = "local"
# Dask's own sampling, off or slowed in a LocalCluster, whose scheduler and workers share the machine's cores with the
# gradings: its statistical profiler (every 10 ms), event-loop health checks (every 20 ms), memory and system monitors.
# They took about 6% of a 2-core machine's CPU while it graded; with these, under 3%.
QUIET_DASK = {"distributed.worker.profile.enabled": False, "distributed.admin.tick.interval": "1s",
              "distributed.admin.system-monitor.interval": "5s", "distributed.worker.memory.monitor-interval": "1s"}


def _retry_once(dask_scheduler) -> None:
    """(run on the scheduler) A task whose worker dies is run again once; the second death marks it KilledWorker."""
    dask_scheduler.allowed_failures = 1


def warm_worker() -> None:
    """(run on each worker as the pool starts) Nothing but loading this module there, which imports what every task
    needs (the grading steps, nbgrader's gradebook API: about a second) before the first task, rather than during it
    beside another worker's grading."""


def grade_on_worker(task) -> Result:
    """The Dask task: grade `task` on this worker, with the share of the machine's cores that COURSE_JOBS (the
    gradings its workers run at once; by default one per core) leaves each."""
    return grade_task(task, limits.default_jobs())


class ClusterPool:
    """Submissions graded as tasks on the Dask scheduler at `address`, or on a LocalCluster of `jobs` processes."""

    def __init__(self, address: str, jobs: int):
        if address == LOCAL:
            dask.config.set(QUIET_DASK)  # before the cluster starts: its workers get this process's configuration
        self.cluster = (LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True, dashboard_address=None,
                                     env={"COURSE_JOBS": str(jobs)}) if address == LOCAL else None)
        self.client = Client(self.cluster or address)
        self.client.run_on_scheduler(_retry_once)
        self.client.run(warm_worker)
        self.versions: dict[str, tuple[bytes, str]] = {}  # assignment -> (gradebook without students, fingerprint)
        self.graded: dict[str, tuple[str, str]] = {}  # task key -> (assignment, student)

    def submit(self, assignment: str, student: str, alone: bool = False) -> Future:
        if assignment not in self.versions:
            self.versions[assignment] = gradebook.without_students(), fingerprint(assignment)
        key = f"grade-{assignment}-{student}-{uuid.uuid4().hex[:8]}"
        self.graded[key] = (assignment, student)
        invalid = invalid_record(assignment, student, paths.submission_dir(student, assignment))
        if invalid:  # nothing to send (it may hold links or special files): its record goes the same way
            return self.client.submit(Result, asdict(invalid), key=key, pure=False)
        task = pack(assignment, student, *self.versions[assignment], alone)
        return self.client.submit(grade_on_worker, task, key=key, pure=False)

    def finish(self, future: Future) -> float | None:
        """Apply a finished task's result; its seconds, or None if there is no verdict (stopped from outside, or the
        worker failed: the submission is graded next time)."""
        try:
            result = future.result()
        except KilledWorker:
            result = Result(crashed_worker_record(*self.graded[future.key]))
        except UnfitWorker as error:
            raise SystemExit(f"a worker refused to grade: {error}") from error
        except Exception as error:  # the worker failed, not the submission (a full disk, a lost connection)
            print(f"{'/'.join(self.graded[future.key])}: the worker failed ({type(error).__name__}: {error})",
                  file=sys.stderr)
            return None
        if result.record is None:
            return None
        apply(result)
        return result.seconds

    as_completed = staticmethod(as_completed)

    def in_flight(self) -> int:
        """Gradings to keep submitted: one per worker thread, none waiting. Dask places a task on a worker as soon as
        it is submitted, so a waiting one would queue behind one worker's grading while another worker frees first;
        the driver holds it instead, and submits it to whichever frees (grade_all). At least one: with no worker (all
        restarting, or none joined yet) it waits on the scheduler for one."""
        return max(1, sum(info["nthreads"] for info in self.client.scheduler_info()["workers"].values()))

    def close(self) -> None:
        self.client.close()
        if self.cluster:
            self.cluster.close()
            remove_stale_folders()  # its workers are gone: a worker killed mid-task left its task's folder

