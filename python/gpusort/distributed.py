"""gpusort.distributed: one sort over the ranks of an MPI communicator (mpi4py), a GPU each.

    # mpirun -np 4 python3 script.py
    from mpi4py import MPI
    import numpy as np, gpusort.distributed
    local = np.random.default_rng(MPI.COMM_WORLD.rank).random(1_000_000)
    part = gpusort.distributed.sort(MPI.COMM_WORLD, local)

Every rank passes its own 1-D array; together they sort the concatenation (rank 0's array, then
rank 1's, ...) stably, and each rank gets back a contiguous slice of the result: by default equal
counts (+-1; rank r holds elements [r*N/P, (r+1)*N/P) of the N in all), with balanced=False the
natural bucket sizes of a sample sort. The slices are exactly what one gpusort.sort (or
np.sort(kind="stable")) of the concatenation gives: equal keys are ordered, and split across
ranks, by their position in the concatenation. Dtypes and options are gpusort.sort's (NumPy's float
order by default, total_order=True for IEEE totalOrder, begin_bit/end_bit, descending).

Steps (docs/distributed.md): gpusort sorts each rank's array on its GPU; the split points come
from a distributed binary search of the key order (exact) or from gathered regular samples
(natural); one all-to-all exchange (comm.Alltoallv, or point-to-point rounds for messages past
2^31 bytes) sends each rank its part; gpusort sorts the received runs again, which (stable, the
runs in rank order) merges them. Every rank must call with the same dtypes and options (else
every rank raises ValueError naming the first rank and option that differ from rank 0's). A failure
on any rank (a bad argument, out of memory) raises RuntimeError "gpusort: rank R: ..." on every
rank, so that no rank is left waiting.
"""

import numpy as np

import gpusort

try:
    from mpi4py import MPI
except ImportError as e:  # pragma: no cover - reported when used
    raise ImportError("gpusort.distributed needs mpi4py (Debian: python3-mpi4py)") from e

# The largest message (bytes) of the exchange; larger ones go in point-to-point rounds.
_MESSAGE_LIMIT = 2**31 - 1


def _agree(comm, step):
    """Runs step() on every rank; if it raised anywhere, raises the lowest failing rank's error
    on every rank."""
    error = None
    result = None
    try:
        result = step()
    except Exception as e:  # noqa: BLE001 - every failure is shared with the other ranks
        error = f"{type(e).__name__}: {e}"
    errors = comm.allgather(error)
    for rank, message in enumerate(errors):
        if message is not None:
            raise RuntimeError(f"gpusort: rank {rank}: {message}")
    return result


def _check_same_call(comm, arguments):
    """Raises ValueError on every rank when a rank's arguments (name -> value, in the order they
    are compared) differ from rank 0's, naming the first such rank, argument and both values."""
    every = comm.allgather(arguments)

    def show(value):
        return str(value) if isinstance(value, np.dtype) else repr(value)

    for rank, theirs in enumerate(every[1:], start=1):
        for name, value in theirs.items():
            if value != every[0][name]:
                raise ValueError(f"gpusort: rank {rank}'s {name}={show(value)} differs from rank "
                                 f"0's {show(every[0][name])}")


def _order(keys, descending, begin_bit, end_bit, total_order):
    """The sort's order of each key as uint64: the radix order (floats by totalOrder, or NumPy's
    order: zeros equal, NaNs equal and greatest), bits [begin_bit, end_bit), inverted when
    descending. gpusort's sorted arrays are non-decreasing in it."""
    width = keys.dtype.itemsize * 8
    unsigned = np.dtype(f"u{keys.dtype.itemsize}")
    sign = np.array(1 << (width - 1), dtype=unsigned)
    if keys.dtype.kind == "f":
        if not total_order:
            keys = np.where(keys == 0, np.zeros(1, keys.dtype), keys)
            keys = np.where(np.isnan(keys), np.array(np.nan, keys.dtype), keys)
        bits = np.ascontiguousarray(keys).view(unsigned)
        bits = np.where(bits & sign, ~bits, bits | sign)
    elif keys.dtype.kind == "i":
        bits = np.ascontiguousarray(keys).view(unsigned) ^ sign
    else:
        bits = keys
    bits = bits.astype(np.uint64)
    begin = 0 if begin_bit is None else begin_bit
    end = width if end_bit is None else end_bit
    mask = np.uint64((1 << (end - begin)) - 1)
    order = (bits >> np.uint64(begin)) & mask
    if descending:
        order = ~order & mask
    return order, int(mask)


def _exact_splits(comm, order, top, total):
    """For each rank d > 0: how many of this rank's sorted elements come before global position
    d*N/P (binary search of the key order, then equal keys split by rank)."""
    ranks = comm.size
    goal = np.array([total * d // ranks for d in range(1, ranks)], dtype=np.uint64)
    if total == 0 or ranks == 1:
        return np.zeros(ranks - 1, dtype=np.int64)
    lo = np.zeros(ranks - 1, dtype=np.uint64)
    hi = np.full(ranks - 1, top, dtype=np.uint64)
    while True:
        open_ = lo < hi
        if not open_.any():
            break
        mid = lo + (hi - lo) // np.uint64(2)
        counts = np.where(open_, np.searchsorted(order, mid, side="right"), 0).astype(np.uint64)
        comm.Allreduce(MPI.IN_PLACE, counts, op=MPI.SUM)
        above = counts > goal
        hi = np.where(open_ & above, mid, hi)
        lo = np.where(open_ & ~above, mid + np.uint64(1), lo)
    below = np.searchsorted(order, lo, side="left").astype(np.uint64)
    equal = np.searchsorted(order, lo, side="right").astype(np.uint64) - below
    below_total = below.copy()
    comm.Allreduce(MPI.IN_PLACE, below_total, op=MPI.SUM)
    equal_before = np.zeros_like(equal)
    comm.Exscan(equal, equal_before, op=MPI.SUM)
    if comm.rank == 0:
        equal_before[:] = 0
    wanted = goal - below_total
    take = np.where(wanted <= equal_before, np.uint64(0),
                    np.minimum(equal, wanted - np.minimum(wanted, equal_before)))
    return (below + take).astype(np.int64)


def _sampled_splits(comm, order, total, first, per_rank):
    """Natural buckets: regular samples of the global order (key order, rank, position), gathered;
    splitters evenly spaced among them; ties with a splitter resolved by (rank, position)."""
    ranks, rank = comm.size, comm.rank
    step = max(1, total // max(1, per_rank * ranks))
    start = (step - first % step) % step
    positions = np.arange(start, len(order), step, dtype=np.int64)
    mine = np.stack([order[positions], np.full(len(positions), rank, np.uint64),
                     positions.astype(np.uint64)], axis=1)
    samples = np.concatenate([s for s in comm.allgather(mine) if len(s)] or
                             [np.zeros((0, 3), np.uint64)])
    splits = np.zeros(ranks - 1, dtype=np.int64)
    if len(samples) == 0:
        return splits
    samples = samples[np.lexsort((samples[:, 2], samples[:, 1], samples[:, 0]))]
    for i in range(ranks - 1):
        value, owner, position = samples[(i + 1) * len(samples) // ranks]
        if rank < owner:
            splits[i] = np.searchsorted(order, value, side="right")
        elif rank == owner:
            splits[i] = position
        else:
            splits[i] = np.searchsorted(order, value, side="left")
    return splits


def _exchange(comm, send, send_counts, recv_counts):
    """All-to-all of the bytes of `send` (sorted, cut by send_counts elements per rank)."""
    item = send.dtype.itemsize
    send_bytes = send_counts * item
    recv_bytes = recv_counts * item
    send_offsets = np.concatenate([[0], np.cumsum(send_bytes)[:-1]]).astype(np.int64)
    recv_offsets = np.concatenate([[0], np.cumsum(recv_bytes)[:-1]]).astype(np.int64)
    recv = np.empty(int(recv_counts.sum()), dtype=send.dtype)
    send_u8 = np.ascontiguousarray(send).view(np.uint8)
    recv_u8 = recv.view(np.uint8)
    small = max(send_bytes.max(initial=0), recv_bytes.max(initial=0), send_offsets.max(initial=0),
                recv_offsets.max(initial=0)) <= _MESSAGE_LIMIT
    if comm.allreduce(bool(small), op=MPI.LAND):
        comm.Alltoallv([send_u8, (send_bytes.tolist(), send_offsets.tolist()), MPI.BYTE],
                       [recv_u8, (recv_bytes.tolist(), recv_offsets.tolist()), MPI.BYTE])
        return recv
    requests = []
    for peer in range(comm.size):
        for done in range(0, int(recv_bytes[peer]), _MESSAGE_LIMIT):
            end = min(int(recv_bytes[peer]), done + _MESSAGE_LIMIT)
            base = int(recv_offsets[peer])
            requests.append(comm.Irecv([recv_u8[base + done:base + end], MPI.BYTE], source=peer))
    for peer in range(comm.size):
        for done in range(0, int(send_bytes[peer]), _MESSAGE_LIMIT):
            end = min(int(send_bytes[peer]), done + _MESSAGE_LIMIT)
            base = int(send_offsets[peer])
            requests.append(comm.Isend([send_u8[base + done:base + end], MPI.BYTE], dest=peer))
    MPI.Request.Waitall(requests)
    return recv


def sort(comm, keys, values=None, *, descending=False, algorithm="automatic", begin_bit=None,
         end_bit=None, total_order=False, balanced=True, samples_per_rank=None, context=None):
    """Sorts the union of every rank's keys (and values) and returns this rank's slice: the sorted
    keys, or (keys, values) when values are given. Collective over comm.

    keys: a 1-D array of uint32, int32, float32, uint64, int64 or float64 (the same dtype on every
    rank); values: None or a 1-D array as long, 4 or 8 bytes per element. Neither is modified.
    balanced: equal counts (+-1) per rank (True) or the natural bucket sizes (False).
    context: the gpusort.Context of this rank's device (default: gpusort.default_context(), which
    GPUSORT_DEVICE picks; give each rank its own GPU with gpusort.Context(device=...)).
    """
    kw = dict(descending=descending, algorithm=algorithm, begin_bit=begin_bit, end_bit=end_bit,
              total_order=total_order, context=context)
    with_values = values is not None
    _check_same_call(comm, {
        "keys dtype": np.asarray(keys).dtype,
        "values dtype": None if values is None else np.asarray(values).dtype,
        "descending": descending, "algorithm": algorithm, "begin_bit": begin_bit,
        "end_bit": end_bit, "total_order": total_order, "balanced": balanced})

    def local_sort():
        a = np.asarray(keys)
        a = a.astype(a.dtype.newbyteorder("="), copy=False)  # native: its bits are read below
        if with_values:
            return gpusort.sort_by_key(a, np.asarray(values), **kw)
        return gpusort.sort(a, **kw), None

    sorted_keys, sorted_values = _agree(comm, local_sort)
    n = len(sorted_keys)
    order, top = _agree(comm, lambda: _order(sorted_keys, descending, begin_bit, end_bit,
                                             total_order))
    total = comm.allreduce(n, op=MPI.SUM)
    first = comm.exscan(n, op=MPI.SUM) or 0
    if balanced:
        splits = _exact_splits(comm, order, top, total)
    else:
        per_rank = samples_per_rank or 256
        splits = _sampled_splits(comm, order, total, first, per_rank)
    bounds = np.concatenate([[0], splits, [n]]).astype(np.int64)
    send_counts = np.diff(bounds)
    recv_counts = np.empty_like(send_counts)
    comm.Alltoall(send_counts, recv_counts)
    received_keys = _exchange(comm, sorted_keys, send_counts, recv_counts)
    received_values = (_exchange(comm, sorted_values, send_counts, recv_counts)
                       if with_values else None)

    # The runs arrive in rank order: a stable sort of them merges them in the global order.
    def merge():
        if with_values:
            return gpusort.sort_by_key_(received_keys, received_values, **kw)
        return gpusort.sort_(received_keys, **kw), None

    out_keys, out_values = _agree(comm, merge)
    if with_values:
        return out_keys.astype(np.asarray(keys).dtype, copy=False), out_values
    return out_keys.astype(np.asarray(keys).dtype, copy=False)


def node_local_rank(comm):
    """This process's rank among the ranks of its node."""
    node = comm.Split_type(MPI.COMM_TYPE_SHARED)
    try:
        return node.rank
    finally:
        node.Free()


def default_context(comm):
    """A gpusort.Context on this rank's GPU: the (node-local rank)-th device of the best type
    present (discrete GPUs first), or GPUSORT_DEVICE's device when it is set. Collective."""
    import os
    local = node_local_rank(comm)
    if os.environ.get("GPUSORT_DEVICE"):
        return gpusort.Context()
    kinds = ("discrete", "integrated", "virtual", "cpu")
    devices = [d for d in gpusort.devices() if getattr(d, "usable", True)]

    def rank_of(d):
        kind = str(getattr(d, "type", "")).lower()
        return next((i for i, k in enumerate(kinds) if k in kind), len(kinds))

    if not devices:
        return gpusort.Context()
    best = min(rank_of(d) for d in devices)
    candidates = [d for d in devices if rank_of(d) == best]
    return gpusort.Context(device=str(candidates[local % len(candidates)].index))
