"""`mpirun -np P gpusort sort IN OUT ...` against the single-process `gpusort sort`.

Usage: cli_collective_test.py GPUSORT MPIRUN [MPIRUN FLAGS...]

Every collective sort's outputs are compared byte for byte with what the single-process command
writes for the same arguments; the failure paths (a missing input, a bad size, one rank failing at
each step, a rank killed) must end with a nonzero status and, where a rank failed, the line
"gpusort: error: rank R: ...", leaving OUT as it was and no temporary file in its directory.
Exit status 0 when every check passed.
"""

import os
import subprocess
import sys
import tempfile

import numpy as np

GPUSORT = sys.argv[1]
MPIRUN = sys.argv[2:]
failures = []


def run(command, env=None, unset=()):
    full_env = dict(os.environ)
    full_env.update(env or {})
    for name in unset:
        full_env.pop(name, None)
    return subprocess.run(command, capture_output=True, text=True, env=full_env, timeout=120)


def mpirun(ranks, args, env=None, unset=()):
    exported = []
    for name in (env or {}):
        exported += ["-x", name]
    return run(MPIRUN + ["-np", str(ranks)] + exported + [GPUSORT, "sort"] + args, env, unset)


def check(ok, what, result=None):
    status = "PASS" if ok else "FAIL"
    print(f"{status} {what}", flush=True)
    if not ok:
        if result is not None:
            print(f"  status {result.returncode}\n  stdout: {result.stdout}\n  stderr: {result.stderr}")
        failures.append(what)


def temporaries(directory):
    return [name for name in os.listdir(directory) if name.startswith(".gpusort-")]


def read(path):
    with open(path, "rb") as f:
        return f.read()


def keys_for(dtype, n, rng, kind):
    dtype = np.dtype(dtype)
    if kind == "few":
        pool = rng.integers(0, 2**31, 5).astype(dtype)
        return pool[rng.integers(0, 5, n)]
    if kind == "equal":
        return np.full(n, 7, dtype=dtype)
    if dtype.kind == "f":
        specials = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 1.5, -2.5], dtype=dtype)
        out = rng.standard_normal(n).astype(dtype)
        pick = rng.random(n) < 0.2
        out[pick] = specials[rng.integers(0, len(specials), int(pick.sum()))]
        return out
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def same_as_single(directory, ranks, name, keys, values=None, options=(), npy=False, unset=(),
                   collective_options=()):
    """Writes the inputs, sorts them collectively and alone, compares every output byte."""
    suffix = ".npy" if npy else ".bin"
    k_in = os.path.join(directory, name + "_keys" + suffix)
    if npy:
        np.save(k_in, keys)
    else:
        keys.tofile(k_in)
    args = [k_in]
    outputs = {}
    for who in ("collective", "single"):
        k_out = os.path.join(directory, f"{name}_{who}_keys{suffix}")
        outputs.setdefault(who, []).append(k_out)
        extra = [] if npy else ["--type", keys.dtype.name.replace("uint", "u").replace("int", "i").replace("float", "f")]
        if values is not None:
            v_in = os.path.join(directory, name + "_values.bin")
            values.tofile(v_in)
            v_out = os.path.join(directory, f"{name}_{who}_values.bin")
            outputs[who].append(v_out)
            extra += ["--values", v_in, "--value-type", "u32" if values.dtype == np.uint32 else "u64",
                      "--values-out", v_out]
        command = args + [k_out] + extra + list(options)
        result = (mpirun(ranks, command + list(collective_options), unset=unset)
                  if who == "collective" else run([GPUSORT, "sort"] + command))
        if result.returncode != 0:
            check(False, f"{name} on {ranks} ranks ({who} sort)", result)
            return
    same = all(read(a) == read(b) for a, b in zip(outputs["collective"], outputs["single"]))
    check(same and not temporaries(directory), f"{name} on {ranks} ranks: the same bytes as one process")


def failure_case(directory, ranks, name, args, env=None, rank_message=None, whole=False):
    """rank_message: how every rank's error line goes on after "gpusort: error: " (with whole,
    the rest of the line)."""
    out = os.path.join(directory, "existing_out.bin")
    with open(out, "wb") as f:
        f.write(b"previous contents")
    result = mpirun(ranks, args + [out], env)
    ok = result.returncode != 0
    ok &= read(out) == b"previous contents"
    ok &= not temporaries(directory)
    if rank_message is not None:
        lines = [line for line in result.stderr.splitlines() if line.startswith("gpusort: error:")]
        # One line per rank, all naming the failing rank and its message.
        expected = "gpusort: error: " + rank_message
        ok &= len(lines) == ranks and all(line == expected if whole else line.startswith(expected)
                                          for line in lines)
    check(ok, f"failure: {name} on {ranks} ranks (status {result.returncode})", None if ok else result)


def main():
    rng = np.random.default_rng(int(os.environ.get("GPUSORT_TEST_SEED", "12345")))
    with tempfile.TemporaryDirectory(prefix="gpusort_cli_collective_") as directory:
        n = 3001
        # Every key type, raw, with values (their positions: stability shows) on 2, 3 or 4 ranks.
        for i, dtype in enumerate(["uint32", "int32", "float32", "uint64", "int64", "float64"]):
            keys = keys_for(dtype, n + 17 * i, rng, "few" if i % 2 else "uniform")
            values = np.arange(len(keys), dtype=np.uint32 if i % 3 else np.uint64)
            options = ["--descending"] if i in (1, 4) else []
            if i == 3:
                options += ["--begin-bit", "5", "--end-bit", "40"]
            same_as_single(directory, 2 + i % 3, f"{dtype}_values", keys, values, options)
        # Keys alone: a .npy of floats with NaN, -0, +-inf; all equal keys with values; a bit range.
        same_as_single(directory, 3, "float32_npy", keys_for("float32", n, rng, "uniform"), npy=True)
        same_as_single(directory, 4, "equal_keys", keys_for("uint32", n, rng, "equal"),
                       np.arange(n, dtype=np.uint32))
        same_as_single(directory, 2, "uint32_bits", keys_for("uint32", n, rng, "uniform"),
                       options=["--begin-bit", "4", "--end-bit", "12", "--descending"])
        # Fewer elements than ranks; no element at all.
        same_as_single(directory, 4, "two_elements", keys_for("int64", 2, rng, "uniform"),
                       np.arange(2, dtype=np.uint64))
        same_as_single(directory, 3, "empty", keys_for("uint32", 0, rng, "uniform"))
        # Each rank's default device (its node-local rank's), and --device, without GPUSORT_DEVICE.
        same_as_single(directory, 2, "default_device", keys_for("uint64", n, rng, "uniform"),
                       unset=["GPUSORT_DEVICE"])
        same_as_single(directory, 3, "device_option", keys_for("int32", n, rng, "uniform"),
                       unset=["GPUSORT_DEVICE"], collective_options=["--device", "llvmpipe"])
        # One rank alone sorts as the single process does.
        same_as_single(directory, 1, "one_rank", keys_for("float64", n, rng, "uniform"))

        k_in = os.path.join(directory, "keys.bin")
        keys_for("uint32", n, rng, "uniform").tofile(k_in)
        bad = os.path.join(directory, "bad_size.bin")
        with open(bad, "wb") as f:
            f.write(b"\0" * 10)
        failure_case(directory, 2, "a missing input", [os.path.join(directory, "missing.bin"), "--type", "u32"],
                     rank_message="rank 0: keys file")
        failure_case(directory, 3, "a bad size", [bad, "--type", "u32"],
                     rank_message="rank 0: keys file")
        for step, ranks, rank in (("read", 3, 1), ("sort", 2, 1), ("write", 4, 2)):
            failure_case(directory, ranks, f"rank {rank} failing at the {step} step", [k_in, "--type", "u32"],
                         {"GPUSORT_TEST_FAIL_RANK": str(rank), "GPUSORT_TEST_FAIL_STEP": step},
                         rank_message=f"rank {rank}: test failure injected at the {step} step")
        failure_case(directory, 3, "rank 1 killed (SIGKILL) after the sort", [k_in, "--type", "u32"],
                     {"GPUSORT_TEST_FAIL_RANK": "1", "GPUSORT_TEST_FAIL_STEP": "kill"})
        # --device is each rank's device: one that does not exist fails on every rank.
        failure_case(directory, 2, "--device naming no device", [k_in, "--type", "u32", "--device",
                                                               "no-such-device"],
                     rank_message="rank 0: ")
        # A FIFO as IN: every rank reads its own slice of a regular file, and standard input
        # ('-', what a single-process sort suggests for a FIFO) does not reach the ranks.
        fifo = os.path.join(directory, "keys.fifo")
        os.mkfifo(fifo)
        failure_case(directory, 2, "a FIFO as IN", [fifo, "--type", "u32"],
                     rank_message=f"rank 0: keys file '{fifo}': is a FIFO, not a regular file "
                                  "(under mpirun, inputs must be regular files: each rank reads "
                                  "its own slice)", whole=True)
        os.unlink(fifo)
        # Options the collective sort does not take are refused on every rank.
        failure_case(directory, 2, "--indices-out", [k_in, "--type", "u32", "--indices-out",
                                                     os.path.join(directory, "idx.bin")],
                     rank_message="rank 0: --indices-out is not available")
    print(f"{len(failures)} check(s) failed" if failures else "every check passed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
