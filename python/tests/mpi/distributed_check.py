"""gpusort.distributed.sort under mpirun (python/CMakeLists.txt runs it on 3 ranks).

Each case gives every rank its own array (every dtype, values, both orders, NumPy's float order and
totalOrder, bit ranges, skewed distributions, empty and one-element ranks, uneven sizes); rank 0
gathers every rank's slice and compares the whole result with gpusort.sort / sort_by_key of the
concatenation and with NumPy's stable sort, bit for bit. Values are the positions in the
concatenation, so any instability shows. Prints PASS/FAIL per case; exit status 1 on any failure. GPUSORT_TEST_FILTER=TEXT runs the
cases whose name contains TEXT.
"""

import os
import sys

import numpy as np
from mpi4py import MPI

import gpusort
import gpusort.distributed as dist

comm = MPI.COMM_WORLD
rank, ranks = comm.rank, comm.size
failures = []
context = dist.default_context(comm)


def sizes_for(pattern):
    if pattern == "uneven":
        return [37 + 911 * r * r % 1500 for r in range(ranks)]
    if pattern == "empty_ranks":
        return [0 if r % 2 == 0 else 500 + 13 * r for r in range(ranks)]
    if pattern == "one_each":
        return [1] * ranks
    if pattern == "all_empty":
        return [0] * ranks
    return [600] * ranks


def keys_for(dtype, n, rng, kind):
    dtype = np.dtype(dtype)
    if kind == "equal":
        return np.full(n, 3, dtype=dtype)
    if kind == "skewed":
        out = rng.integers(0, 1000, n).astype(dtype)
        out[rng.random(n) < 0.99] = 5
        return out
    if kind == "few":
        return rng.integers(0, 4, n).astype(dtype)
    if dtype.kind == "f":
        out = rng.standard_normal(n).astype(dtype)
        specials = np.array([np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf], dtype=dtype)
        pick = rng.random(n) < 0.3
        out[pick] = specials[rng.integers(0, len(specials), int(pick.sum()))]
        return out
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)


def run_case(name, dtype, kind, pattern, seed, values=True, balanced=True, **options):
    if os.environ.get("GPUSORT_TEST_FILTER", "") not in name:
        return
    sizes = sizes_for(pattern)
    firsts = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
    # Every rank makes every rank's input (the same seeds), so rank 0 knows the concatenation.
    inputs = [keys_for(dtype, sizes[r], np.random.default_rng([seed, r]), kind) for r in range(ranks)]
    positions = [np.arange(firsts[r], firsts[r + 1], dtype=np.uint64) for r in range(ranks)]
    mine = inputs[rank]
    try:
        if values:
            out_keys, out_values = dist.sort(comm, mine, positions[rank], balanced=balanced,
                                             context=context, **options)
        else:
            out_keys, out_values = dist.sort(comm, mine, balanced=balanced, context=context,
                                             **options), None
        error = None
    except Exception as e:  # noqa: BLE001 - reported as the case's failure
        out_keys, out_values, error = None, None, str(e)
    gathered = comm.gather((error, out_keys, out_values), root=0)
    ok, why = True, ""
    if rank == 0:
        errors = [g[0] for g in gathered if g[0]]
        if errors:
            ok, why = False, errors[0]
        else:
            all_keys = np.concatenate([g[1] for g in gathered])
            concatenation = np.concatenate(inputs)
            reference_values = np.concatenate(positions)
            ref_keys, ref_values = gpusort.sort_by_key(concatenation, reference_values,
                                                       context=context, **options)
            counts = [len(g[1]) for g in gathered]
            total = len(concatenation)
            if balanced and counts != [total * (r + 1) // ranks - total * r // ranks
                                       for r in range(ranks)]:
                ok, why = False, f"counts {counts} are not balanced"
            elif all_keys.view(np.uint8).tobytes() != ref_keys.view(np.uint8).tobytes():
                ok, why = False, "keys differ from gpusort.sort of the concatenation"
            elif values and not np.array_equal(np.concatenate([g[2] for g in gathered]), ref_values):
                ok, why = False, "values differ (not stable)"
            elif (not options.get("total_order") and options.get("begin_bit") is None):
                # NumPy's stable sort too (its order: floats with NaNs last, zeros equal).
                numpy_order = np.argsort(concatenation, kind="stable")
                if options.get("descending"):
                    # Descending and stable: NumPy's stable sort of the reversed comparison.
                    numpy_order = np.lexsort((np.arange(total), ) + (-_rank_keys(concatenation), ))
                expected = concatenation[numpy_order]
                if not np.array_equal(all_keys.view(np.uint8), expected.view(np.uint8)):
                    ok, why = False, "keys differ from NumPy's stable sort"
            if ok and not balanced and total >= 200 * ranks and max(counts) > 1.5 * total / ranks + 16:
                ok, why = False, f"natural buckets unbalanced: {counts}"
    ok = comm.bcast(ok, root=0)
    if rank == 0:
        print(f"{'PASS' if ok else 'FAIL'} {name}" + ("" if ok else f": {why}"), flush=True)
        if not ok:
            failures.append(name)


def mismatch_case(name, expected, keys_dtype="uint32", values_dtype=None, **options):
    """Ranks called differently: every rank must raise ValueError with exactly `expected`."""
    if os.environ.get("GPUSORT_TEST_FILTER", "") not in name:
        return
    keys = np.arange(10, dtype=keys_dtype)
    values = None if values_dtype is None else np.arange(10, dtype=values_dtype)
    try:
        dist.sort(comm, keys, values, context=context, **options)
        got = "no error"
    except ValueError as e:
        got = str(e)
    wrong = [(r, g) for r, g in enumerate(comm.gather(got, root=0) or []) if g != expected]
    ok = comm.bcast(not wrong, root=0)
    if rank == 0:
        print(f"{'PASS' if ok else 'FAIL'} {name}" +
              ("" if ok else f": rank {wrong[0][0]} got '{wrong[0][1]}', expected '{expected}'"),
              flush=True)
        if not ok:
            failures.append(name)


def _rank_keys(a):
    """Dense ranks of a's values in NumPy's order (NaNs greatest and equal, zeros equal)."""
    order = np.argsort(a, kind="stable")
    sorted_a = a[order]
    same = np.empty(len(a), dtype=bool)
    if len(a):
        same[0] = False
        same[1:] = (sorted_a[1:] == sorted_a[:-1]) | (np.isnan(sorted_a[1:]) & np.isnan(sorted_a[:-1])
                                                      if a.dtype.kind == "f" else False)
    dense = np.cumsum(~same)
    out = np.empty(len(a), dtype=np.int64)
    out[order] = dense
    return out


def main():
    seed = 1000
    for dtype in ("uint32", "int32", "float32", "uint64", "int64", "float64"):
        for kind, pattern in (("uniform", "uneven"), ("equal", "empty_ranks"), ("skewed", "even")):
            seed += 1
            run_case(f"{dtype} {kind} {pattern}", dtype, kind, pattern, seed)
            seed += 1
            run_case(f"{dtype} {kind} {pattern} descending", dtype, kind, pattern, seed,
                     descending=True)
        seed += 1
        run_case(f"{dtype} keys alone, natural buckets", dtype, "uniform", "uneven", seed,
                 values=False, balanced=False)
        seed += 1
        width = np.dtype(dtype).itemsize * 8
        run_case(f"{dtype} bits 2..{width // 2}, total order", dtype, "uniform", "uneven", seed,
                 begin_bit=2, end_bit=width // 2, total_order=True)
    for pattern in ("one_each", "all_empty"):
        seed += 1
        run_case(f"float64 {pattern}", "float64", "uniform", pattern, seed)
    seed += 1
    run_case("float32 skewed, natural buckets", "float32", "skewed", "even", seed, balanced=False)
    # Ranks called differently: the first rank that differs from rank 0 and its first differing
    # argument or option are named, with both values.
    last = ranks - 1
    mismatch_case("mismatch: descending on the last rank",
                  f"gpusort: rank {last}'s descending=True differs from rank 0's False",
                  descending=rank == last)
    mismatch_case("mismatch: keys dtype and bits on every rank but 0",
                  "gpusort: rank 1's keys dtype=float32 differs from rank 0's uint32",
                  keys_dtype="float32" if rank else "uint32", end_bit=16 if rank else None)
    mismatch_case("mismatch: values on the last rank alone",
                  f"gpusort: rank {last}'s values dtype=uint64 differs from rank 0's None",
                  values_dtype="uint64" if rank == last else None)
    mismatch_case("mismatch: algorithm on the last rank",
                  f"gpusort: rank {last}'s algorithm='bitonic' differs from rank 0's 'automatic'",
                  algorithm="bitonic" if rank == last else "automatic")
    # The exchange in point-to-point rounds (messages past 2^31 bytes), with 24-byte messages.
    limit = dist._MESSAGE_LIMIT
    dist._MESSAGE_LIMIT = 24
    try:
        seed += 1
        run_case("int64 uniform uneven, exchange in rounds", "int64", "uniform", "uneven", seed)
        seed += 1
        run_case("float32 equal, natural buckets, exchange in rounds", "float32", "equal", "even",
                 seed, balanced=False)
    finally:
        dist._MESSAGE_LIMIT = limit
    if rank == 0:
        print(f"{len(failures)} case(s) failed" if failures else "every case passed")
    return 1 if comm.bcast(len(failures), root=0) else 0


if __name__ == "__main__":
    sys.exit(main())
