"""What the GPU-array tests (test_gpu_torch.py, test_gpu_cupy.py) share: the key dtypes, sizes and
distributions, keys made on the host, and the order gpusort promises, from NumPy's stable sort."""

import numpy as np

DTYPES = [np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64]
SIZES = [0, 1, 2, 3, 100, 1000, 4096, 4097, 70_000, (1 << 17) + 3, 1 << 20]
DISTRIBUTIONS = ["uniform", "few", "sorted", "reversed", "equal", "special"]
UNSIGNED = {np.dtype(np.float32): np.uint32, np.dtype(np.float64): np.uint64}


def make_keys(rng, dtype, n, distribution):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        keys = rng.standard_normal(n).astype(dtype)
        if distribution == "special" and n:
            bits = keys.view(UNSIGNED[dtype])
            width = dtype.itemsize * 8
            sign = 1 << (width - 1)
            quiet = 0x7FC00000 if width == 32 else 0x7FF8000000000000
            inf = 0x7F800000 if width == 32 else 0x7FF0000000000000
            specials = np.array([0, sign, quiet, quiet | sign, quiet | 5, inf | 1, inf,
                                 inf | sign, 1, sign | 1], dtype=bits.dtype)
            where = rng.integers(0, n, max(1, n // 4))
            bits[where] = specials[rng.integers(0, specials.size, where.size)]
    else:
        info = np.iinfo(dtype)
        keys = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        if distribution == "special" and n:
            keys[rng.integers(0, n, max(1, n // 4))] = rng.choice(
                np.array([info.min, info.max, 0, 1], dtype=dtype), max(1, n // 4))
    if distribution == "few":
        keys = rng.choice(keys[:8] if n else keys, n) if n else keys
    elif distribution == "sorted":
        keys = np.sort(keys, kind="stable")
    elif distribution == "reversed":
        keys = np.sort(keys, kind="stable")[::-1].copy()
    elif distribution == "equal" and n:
        keys = np.full(n, keys[0], dtype=dtype)
    return np.ascontiguousarray(keys)


def radix_order(keys):
    """The keys' bits in the library's radix order (IEEE totalOrder for floats), as unsigned."""
    dtype = keys.dtype
    width = dtype.itemsize * 8
    u = keys.view(np.uint32 if width == 32 else np.uint64)
    sign = (np.uint32 if width == 32 else np.uint64)(1 << (width - 1))
    if dtype.kind == "u":
        return u.copy()
    if dtype.kind == "i":
        return u ^ sign
    negative = (u & sign) != 0
    return np.where(negative, ~u, u | sign)


def expected_order(keys, descending=False, total_order=False, bits=None):
    """np.argsort(kind="stable") of the keys in the order gpusort promises: NumPy's for floats
    (or totalOrder), by the bits [begin, end) of the radix order, descending the reverse
    comparison with equal keys still in input order."""
    if bits is not None or total_order:
        ordered = radix_order(keys)
        if bits is not None:
            begin, end = bits
            mask = (1 << (end - begin)) - 1
            ordered = (ordered >> ordered.dtype.type(begin)) & ordered.dtype.type(mask)
        keys = ordered
    if not descending:
        return np.argsort(keys, kind="stable")
    # Dense ranks (np.unique and searchsorted take -0.0 == +0.0 and NaNs as one, the greatest).
    rank = np.searchsorted(np.unique(keys), keys)
    return np.argsort(-rank.astype(np.int64), kind="stable")


def assert_bits_equal(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    width = {4: np.uint32, 8: np.uint64}[expected.dtype.itemsize]
    np.testing.assert_array_equal(actual.view(width), expected.view(width))


def topk_ks(n):
    """The k a top-k test takes for n keys: the ends, around the 2048-key tile, the middle."""
    return sorted({k for k in (0, 1, 32, 1024, 2047, 2048, 2049, n // 2, n - 1, n) if 0 <= k <= n})
