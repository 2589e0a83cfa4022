"""`mpirun -np 2 gpusort sort` interrupted (Ctrl-C) while it runs: one consistent outcome.

Usage: cli_interrupt_test.py GPUSORT MPIRUN [MPIRUN FLAGS...]

A sort with values big enough to take about a second on lavapipe runs twice to the end (its
outputs checked against NumPy's stable sort, its duration measured), then again and again, each
time interrupted at another point: SIGINT or SIGTERM to mpirun (which sends every rank SIGCONT,
then SIGTERM a second later, then SIGKILL), once at the start, then spread over the time the ranks
hold their temporary files; and SIGTERM or SIGINT to one rank (a run that ended before its
signal, tried again with the signal earlier). After each run:
  - no temporary file ".gpusort-*" is left beside OUT, and after a signal to mpirun the temporary
    files were gone before the SIGTERM that follows the SIGCONT by a second (so before a SIGKILL
    could leave them);
  - either the exit status is nonzero and OUT and VOUT are as they were, or (a signal that came
    after the end) the status is 0 and OUT and VOUT are the sorted arrays: never new outputs with
    a failure status.
Most runs must have been interrupted (else nothing was tested). Exit status 0 when every check
passed.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np

GPUSORT = sys.argv[1]
MPIRUN = sys.argv[2:]
ELEMENTS = 400_000
failures = []


def check(ok, what, detail=""):
    print(f"{'PASS' if ok else 'FAIL'} {what}" + ("" if ok else f": {detail}"), flush=True)
    if not ok:
        failures.append(what)


def temporaries(directory):
    return [name for name in os.listdir(directory) if name.startswith(".gpusort-")]


def read(path):
    with open(path, "rb") as f:
        return f.read()


class Sort:
    """One `mpirun -np 2 gpusort sort` of the test's files, in its own session (no terminal
    signal reaches it but the test's)."""

    def __init__(self, directory):
        self.directory = directory
        self.out = os.path.join(directory, "out.bin")
        self.values_out = os.path.join(directory, "values_out.bin")
        args = [os.path.join(directory, "keys.bin"), self.out, "--type", "u32", "--values",
                os.path.join(directory, "values.bin"), "--value-type", "u32", "--values-out",
                self.values_out]
        self.started = time.monotonic()
        self.process = subprocess.Popen(MPIRUN + ["-np", "2", GPUSORT, "sort"] + args,
                                        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True,
                                        start_new_session=True)

    def wait_for_temporaries(self):
        """Seconds from the start until rank 0 has created its temporary files (None: never)."""
        while self.process.poll() is None:
            if temporaries(self.directory):
                return time.monotonic() - self.started
            time.sleep(0.002)
        return None

    def rank(self, wanted):
        """The process id of rank `wanted` (a child of mpirun). ProcessLookupError where the rank
        has exited already (the run ended first, which a loaded machine makes likelier)."""
        with open(f"/proc/{self.process.pid}/task/{self.process.pid}/children") as f:
            children = [int(pid) for pid in f.read().split()]
        for pid in children:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"OMPI_COMM_WORLD_RANK={wanted}".encode() in f.read().split(b"\0"):
                    return pid
        raise ProcessLookupError(f"rank {wanted} is not among mpirun's children {children}")

    def seconds_until_no_temporary(self, limit):
        """Seconds until no temporary file is left (or the run ended), at most `limit`."""
        start = time.monotonic()
        while temporaries(self.directory) and self.process.poll() is None:
            if time.monotonic() - start > limit:
                break
            time.sleep(0.002)
        return time.monotonic() - start

    def finish(self):
        output, _ = self.process.communicate(timeout=120)
        return self.process.returncode, output


def interrupted_run(directory, name, expected, send, delay, prompt):
    """Starts a sort over OUT and VOUT that hold other contents, lets `send(sort)` deliver the
    signal `delay` seconds after the temporary files appeared (None: at once, before), and checks
    the outcome; with `prompt`, that the temporary files were gone within 0.9 s of the signal.
    Returns whether the run was interrupted (nonzero status)."""
    previous = (b"previous keys", b"previous values")
    for path, contents in zip((os.path.join(directory, "out.bin"),
                               os.path.join(directory, "values_out.bin")), previous):
        with open(path, "wb") as f:
            f.write(contents)
    sort = Sort(directory)
    if delay is not None:
        sort.wait_for_temporaries()
        time.sleep(delay)
    try:
        send(sort)
    except (ProcessLookupError, FileNotFoundError):
        pass  # the run ended first: its outcome is checked as any other
    cleaned_after = sort.seconds_until_no_temporary(limit=5)
    status, output = sort.finish()
    outputs = (read(sort.out), read(sort.values_out))
    left = temporaries(directory)
    for leftover in left:
        os.unlink(os.path.join(directory, leftover))
    if left:
        check(False, name, f"temporary files left: {left}\n{output}")
    elif prompt and cleaned_after > 0.9:
        check(False, name, f"the temporary files were removed {cleaned_after:.2f} s after the "
                           "signal")
    elif status != 0 and outputs != previous:
        replaced = [which for which, new, old in zip(("OUT", "VOUT"), outputs, previous)
                    if new != old]
        check(False, name, f"status {status}, but {' and '.join(replaced)} replaced\n{output}")
    elif status == 0 and outputs != expected:
        check(False, name, f"status 0, but the outputs are not the sorted arrays\n{output}")
    else:
        outcome = "interrupted" if status else "completed before the signal"
        check(True, f"{name}: {outcome} (temporary files gone {cleaned_after:.2f} s after it)")
    return status != 0


def main():
    rng = np.random.default_rng(int(os.environ.get("GPUSORT_TEST_SEED", "4242")))
    with tempfile.TemporaryDirectory(prefix="gpusort_cli_interrupt_") as directory:
        keys = rng.integers(0, 2**32, ELEMENTS, dtype=np.uint32)
        keys.tofile(os.path.join(directory, "keys.bin"))
        np.arange(ELEMENTS, dtype=np.uint32).tofile(os.path.join(directory, "values.bin"))
        order = np.argsort(keys, kind="stable")
        expected = (keys[order].tobytes(), order.astype(np.uint32).tobytes())

        # Uninterrupted, twice: the sorted arrays, and how long the temporary files live (the
        # shorter time, so that the signals below land before the end).
        lifetime = None
        for _ in range(2):
            sort = Sort(directory)
            appeared = sort.wait_for_temporaries()
            status, output = sort.finish()
            ok = status == 0 and appeared is not None
            ok &= (read(sort.out), read(sort.values_out)) == expected
            if ok:
                lived = time.monotonic() - sort.started - appeared
                lifetime = lived if lifetime is None else min(lifetime, lived)
            check(ok, f"uninterrupted sort (temporary files for {lifetime or 0:.2f} s)", output)
            if not ok:
                return 1

        def to_mpirun(signal_number):
            return lambda sort: sort.process.send_signal(signal_number)

        def to_rank(rank, signal_number):
            return lambda sort: os.kill(sort.rank(rank), signal_number)

        # Signals spread over the first 70% of the temporary files' life: later ones could land
        # after the ranks ended, where mpirun reports an interruption of a job already done. Each
        # run: (what, send, the signal's delay as a fraction of that life or None, prompt).
        runs = [("SIGINT to mpirun at the start", to_mpirun(signal.SIGINT), None, True)]
        trials = 8
        for i in range(trials):
            name = "SIGINT" if i % 2 == 0 else "SIGTERM"
            runs.append((f"{name} to mpirun", to_mpirun(getattr(signal, name)),
                         0.7 * i / trials, True))
        # A rank's own handler removes the files: no SIGCONT, no second to race with.
        runs.append(("SIGTERM to rank 1", to_rank(1, signal.SIGTERM), 0.2, False))
        runs.append(("SIGINT to rank 0", to_rank(0, signal.SIGINT), 0.4, False))
        # A run that ended before its signal (the machine got faster than in the runs measured
        # above: its load changed) is checked as any other, then tried again with the signal
        # twice as early, up to twice more (a signal at the start or without delay, once).
        interrupted = 0
        for what, send, fraction, prompt in runs:
            for attempt in range(3 if fraction else 1):
                delay = None if fraction is None else fraction * lifetime / 2**attempt
                name = what if delay is None else f"{what} after {delay:.2f} s"
                if interrupted_run(directory, name, expected, send, delay, prompt):
                    interrupted += 1
                    break
        check(interrupted >= len(runs) - 2, f"{interrupted} of {len(runs)} runs interrupted")
    print(f"{len(failures)} check(s) failed" if failures else "every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
