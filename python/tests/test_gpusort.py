"""gpusort's Python package against NumPy's stable sort, bit for bit, on lavapipe."""
import os
import re
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import gpusort

KEY_DTYPES = [np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64]
SIZES = [0, 1, 2, 3, 31, 1000, 4099]
UINT = {4: np.uint32, 8: np.uint64}


def bits(a):
    """The array's bit patterns as unsigned integers (so NaN payloads and -0.0 compare)."""
    a = np.ascontiguousarray(a)
    return a.view(UINT[a.dtype.itemsize]) if a.dtype.itemsize in UINT else a


def assert_same(actual, expected):
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    assert np.array_equal(bits(actual), bits(expected))


def special_floats(dtype):
    """Every kind of float NumPy and totalOrder treat differently, payloads included."""
    u = UINT[np.dtype(dtype).itemsize]
    width = np.dtype(dtype).itemsize * 8
    sign = u(1) << u(width - 1)
    quiet = np.array([np.nan], dtype).view(u)[0]
    nans = [quiet, quiet | sign, quiet | u(1), quiet | sign | u(5), (quiet >> u(1)) | quiet]
    tiny = np.finfo(dtype).smallest_subnormal
    finite = np.array([0.0, -0.0, np.inf, -np.inf, 1.0, -1.0, tiny, -tiny,
                       np.finfo(dtype).max, np.finfo(dtype).min], dtype)
    return np.concatenate([finite, np.array(nans, u).view(dtype)])


def make_keys(dtype, n, rng):
    """Random keys with many duplicates; floats mixed with zeros of both signs, infinities, NaNs."""
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        keys = rng.standard_normal(n)
        if rng.random() < 0.5:
            keys = np.round(keys * 4)  # duplicates, and -0.0 from small negatives
        keys = keys.astype(dtype)
        specials = special_floats(dtype)
        mask = rng.random(n) < 0.3
        keys[mask] = rng.choice(specials, mask.sum())
        return keys
    info = np.iinfo(dtype)
    if rng.random() < 0.5:
        return rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
    return rng.integers(-3 if info.min else 0, 4, n).astype(dtype)


def reference_order(a, descending=False, total_order=False):
    """np.argsort(kind="stable") of a in gpusort's order, built from NumPy alone."""
    if a.dtype.kind == "f" and total_order:
        u = bits(a)
        sign = u.dtype.type(1) << u.dtype.type(u.dtype.itemsize * 8 - 1)
        radix = np.where(u & sign, ~u, u | sign)  # totalOrder as unsigned order
        return np.argsort(~radix if descending else radix, kind="stable")
    if not descending:
        return np.argsort(a, kind="stable")
    if a.dtype.kind == "f":
        # Descending: NaNs first, then by -a; lexsort is stable, its last key the primary one.
        nan = np.isnan(a)
        return np.lexsort((np.where(nan, 0, -a), ~nan))
    return np.argsort(~a, kind="stable")  # ~ reverses signed and unsigned order alike


# ---- results against NumPy ----

@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_matches_numpy(dtype, n, descending, rng):
    a = make_keys(dtype, n, rng)
    original = a.copy()
    order = reference_order(a, descending)
    expected = a[order]
    if not descending:
        assert_same(expected, np.sort(a, kind="stable"))

    assert_same(gpusort.sort(a, descending=descending), expected)
    assert_same(gpusort.argsort(a, descending=descending), order.astype(np.int64))
    assert_same(gpusort.argsort(a, descending=descending, dtype=np.uint32), order.astype(np.uint32))
    values = rng.integers(0, 2**63, n, dtype=np.int64).view(np.float64)  # any 8-byte payload
    keys_out, values_out = gpusort.sort_by_key(a, values, descending=descending)
    assert_same(keys_out, expected)
    assert_same(values_out, values[order])
    assert_same(a, original)  # none of these modify their input

    small_values = np.arange(n, dtype=np.int32)
    gpusort.sort_by_key_(a, small_values, descending=descending)
    assert_same(a, expected)
    assert_same(small_values, order.astype(np.int32))

    b = original.copy()
    assert gpusort.sort_(b, descending=descending) is b
    assert_same(b, expected)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
@pytest.mark.parametrize("total_order", [False, True], ids=["numpy_order", "total_order"])
def test_special_floats(dtype, descending, total_order, rng):
    specials = special_floats(dtype)
    for a in [specials, specials[::-1].copy(), np.tile(specials, 3), rng.permutation(np.tile(specials, 40)),
              np.array([-0.0, 0.0, -0.0], dtype), np.array([np.nan, 0.0], dtype)]:
        order = reference_order(a, descending, total_order)
        kw = dict(descending=descending, total_order=total_order)
        assert_same(gpusort.sort(a, **kw), a[order])
        assert_same(gpusort.argsort(a, **kw), order)
        assert_same(gpusort.sort_by_key(a, np.arange(a.size, dtype=np.uint32), **kw)[1],
                    order.astype(np.uint32))


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_floats_without_specials(dtype, rng):
    # The fast path: nothing to canonicalize (no -0.0, only the default NaN), no host writes.
    a = rng.standard_normal(3000).astype(dtype)
    a[::7] = 0.0
    a[::11] = np.nan
    assert_same(gpusort.sort(a), np.sort(a, kind="stable"))
    assert_same(gpusort.sort(a, descending=True), a[reference_order(a, True)])


def test_total_order_matches_library_order():
    a = np.array([np.nan, -np.nan, -0.0, 0.0, -np.inf, np.inf, 1.0], np.float32)
    expected = np.array([-np.nan, -np.inf, -0.0, 0.0, 1.0, np.inf, np.nan], np.float32)
    assert_same(gpusort.sort(a, total_order=True), expected)
    numpy_order = gpusort.sort(a)
    assert_same(numpy_order, np.sort(a, kind="stable"))
    assert_same(numpy_order[-2:], a[[0, 1]])  # NaNs last, in input order, signs kept


@pytest.mark.parametrize("dtype", [np.uint32, np.int32, np.int64, np.float32],
                         ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_bit_range(dtype, descending, rng):
    a = make_keys(dtype, 2000, rng)
    width = a.dtype.itemsize * 8
    u = bits(a).astype(np.uint64)
    if a.dtype.kind == "i":
        u ^= np.uint64(1) << np.uint64(width - 1)
    elif a.dtype.kind == "f":
        sign = np.uint64(1) << np.uint64(width - 1)
        u = np.where(u & sign, ~u & np.uint64(2**width - 1), u | sign)
    begin, end = 3, width - 5
    digit = (u >> np.uint64(begin)) & np.uint64(2 ** (end - begin) - 1)
    order = np.argsort(~digit if descending else digit, kind="stable")
    kw = dict(begin_bit=begin, end_bit=end, descending=descending, total_order=True)
    assert_same(gpusort.argsort(a, **kw), order)
    assert_same(gpusort.sort(a, **kw), a[order])


@pytest.mark.parametrize("algorithm", gpusort.ALGORITHMS)
@pytest.mark.parametrize("dtype", [np.int32, np.float64], ids=["int32", "float64"])
def test_algorithms(algorithm, dtype, rng):
    a = make_keys(dtype, 1000, rng)
    expected = np.sort(a, kind="stable")
    assert_same(gpusort.sort(a, algorithm=algorithm), expected)
    values = np.arange(a.size, dtype=np.uint32)
    keys_out, values_out = gpusort.sort_by_key(a, values, algorithm=algorithm)
    order = gpusort.argsort(a, algorithm=algorithm)
    if algorithm == "bitonic":
        # Not stable: equal keys (zeros of both signs, NaNs) in any order, keys with their values.
        assert np.array_equal(keys_out, expected, equal_nan=True)
        assert_same(a[values_out], keys_out)
        assert_same(np.sort(order), np.arange(a.size))
        assert np.array_equal(a[order], expected, equal_nan=True)
    else:
        assert_same(keys_out, expected)
        assert_same(order, np.argsort(a, kind="stable"))
        assert_same(values_out, order.astype(np.uint32))


# ---- layouts ----

def test_strided_and_reversed(rng):
    base = make_keys(np.float32, 3001, rng)
    for a in [base[::2], base[::-1], base[5:2000:3]]:
        assert_same(gpusort.sort(a), np.sort(a, kind="stable"))
        assert_same(gpusort.argsort(a), np.argsort(a, kind="stable"))
    view_base = base.copy()
    view = view_base[::3]
    expected = np.sort(view, kind="stable")
    untouched = view_base[1::3].copy()
    gpusort.sort_(view)
    assert_same(view, expected)
    assert_same(view_base[1::3], untouched)


@pytest.mark.parametrize("dtype", [">u4", ">i8", ">f4", ">f8"])
def test_byte_swapped(dtype, rng):
    a = make_keys(np.dtype(dtype).newbyteorder("="), 500, rng).astype(dtype)
    result = gpusort.sort(a)
    assert result.dtype == a.dtype  # like np.sort: the input's byte order
    assert_same(result, np.sort(a, kind="stable"))
    assert_same(gpusort.argsort(a), np.argsort(a, kind="stable"))
    b = a.copy()
    gpusort.sort_(b, descending=True)
    assert_same(b, a[reference_order(a, True)])
    # Values are moved as raw bytes, whatever their byte order.
    values = np.arange(a.size, dtype=">u8")
    keys_out, values_out = gpusort.sort_by_key(a, values)
    assert_same(values_out, np.argsort(a, kind="stable").astype(">u8"))


def test_misaligned(rng):
    a = make_keys(np.float64, 300, rng)
    buffer = np.zeros(a.nbytes + 1, np.uint8)
    misaligned = buffer[1:].view(np.float64)
    misaligned[:] = a
    assert not misaligned.flags.aligned
    assert_same(gpusort.sort(misaligned), np.sort(a, kind="stable"))
    gpusort.sort_(misaligned)
    assert_same(misaligned, np.sort(a, kind="stable"))


def test_read_only(rng):
    a = make_keys(np.int64, 100, rng)
    a.flags.writeable = False
    assert_same(gpusort.sort(a), np.sort(a, kind="stable"))
    assert_same(gpusort.argsort(a), np.argsort(a, kind="stable"))
    with pytest.raises(ValueError, match="read-only"):
        gpusort.sort_(a)
    with pytest.raises(ValueError, match="read-only"):
        gpusort.sort_by_key_(a, np.arange(100, dtype=np.uint32))


def test_out(rng):
    a = make_keys(np.float32, 1000, rng)
    expected = np.sort(a, kind="stable")
    out = np.empty_like(a)
    assert gpusort.sort(a, out=out) is out
    assert_same(out, expected)
    strided_out = np.empty(2000, np.float32)[::2]
    gpusort.sort(a, out=strided_out)
    assert_same(strided_out, expected)
    same = a.copy()
    gpusort.sort(same, out=same)
    assert_same(same, expected)
    with pytest.raises(ValueError, match="dtype"):
        gpusort.sort(a, out=np.empty(1000, np.float64))
    with pytest.raises(ValueError, match="shape"):
        gpusort.sort(a, out=np.empty(999, np.float32))


def test_sequences_and_strided_values(rng):
    assert_same(gpusort.sort([3, 1, 2]), np.array([1, 2, 3]))
    keys = make_keys(np.uint64, 500, rng)
    records = np.zeros(500, dtype=[("key", np.uint64), ("value", np.float32), ("pad", np.int32)])
    records["key"] = keys
    records["value"] = np.arange(500)
    k, v = records["key"], records["value"]  # strided views of one buffer, not overlapping
    gpusort.sort_by_key_(k, v)
    order = np.argsort(keys, kind="stable")
    assert_same(records["key"], keys[order])
    assert_same(records["value"], order.astype(np.float32))


# ---- errors ----

@pytest.mark.parametrize("dtype", [np.float16, np.bool_, np.complex64, np.int16, np.uint8, "U3", "M8[s]"])
def test_unsupported_key_dtypes(dtype):
    a = np.zeros(4, dtype)
    with pytest.raises(TypeError, match=re.escape(str(np.dtype(dtype)))):
        gpusort.sort(a)
    with pytest.raises(TypeError, match=re.escape(str(np.dtype(dtype)))):
        gpusort.argsort(a)


def test_errors():
    with pytest.raises(TypeError, match="object"):
        gpusort.sort(np.array([1, "a"], dtype=object))
    with pytest.raises(TypeError, match="0-d.*float32"):
        gpusort.sort(np.float32(1.0))
    with pytest.raises(TypeError, match="0-d"):
        gpusort.sort_(np.array(1, np.int32))
    with pytest.raises(ValueError, match="1-D"):
        gpusort.sort(np.zeros((2, 3), np.int32))
    with pytest.raises(TypeError, match="ndarray"):
        gpusort.sort_([3, 2, 1])
    keys = np.arange(4, dtype=np.uint32)
    with pytest.raises(TypeError, match="object"):
        gpusort.sort_by_key(keys, np.array([None] * 4, dtype=object))
    with pytest.raises(TypeError, match="int16"):
        gpusort.sort_by_key(keys, np.zeros(4, np.int16))
    with pytest.raises(ValueError, match="4 keys but 3 values"):
        gpusort.sort_by_key(keys, np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="share memory"):
        gpusort.sort_by_key_(keys, keys.view(np.int32))
    with pytest.raises(ValueError, match="unknown algorithm"):
        gpusort.sort(keys, algorithm="quick")
    with pytest.raises(ValueError, match="range"):
        gpusort.sort(keys, begin_bit=8, end_bit=40)
    with pytest.raises(ValueError, match="total_order"):
        gpusort.sort(np.zeros(4, np.float32), begin_bit=8)
    with pytest.raises(TypeError, match="int64 or uint32"):
        gpusort.argsort(keys, dtype=np.int32)
    with pytest.raises(TypeError, match="Context"):
        gpusort.sort(keys, context="llvmpipe")
    with pytest.raises(gpusort.Error):
        gpusort.Context(device="no such device")


def test_failed_sort_leaves_array_unchanged(rng):
    # odd_even refuses an array beyond one workgroup only inside the library, after the
    # host pass replaced -0.0 and NaNs: they must be put back.
    a = make_keys(np.float32, 100000, rng)
    original = a.copy()
    with pytest.raises(gpusort.Error, match="odd_even"):
        gpusort.sort_(a, algorithm="odd_even")
    assert_same(a, original)


# ---- contexts, devices, threads, signals ----

def test_context_and_devices(rng):
    infos = gpusort.devices()
    assert any(info.usable for info in infos)
    context = gpusort.Context(device="llvmpipe")
    assert "llvmpipe" in context.device.name and context.device.type == "cpu"
    assert "llvmpipe" in repr(context)
    a = make_keys(np.int32, 1000, rng)
    for _ in range(2):
        assert_same(gpusort.sort(a, context=context), np.sort(a, kind="stable"))
    assert gpusort.default_context() is gpusort.default_context()


def test_gil_released_during_sort(rng):
    a = make_keys(np.uint32, 1 << 20, rng)
    gpusort.sort(a)  # pipelines compiled before the timed call
    in_sort = threading.Event()
    done = threading.Event()

    def worker():
        in_sort.set()
        gpusort.sort(a)
        done.set()

    thread = threading.Thread(target=worker)
    thread.start()
    in_sort.wait()
    spins = 0
    while not done.is_set():
        spins += 1
        time.sleep(0)
    thread.join()
    # With the GIL held for the whole sort, this thread could not run until it ended.
    assert spins > 50


def test_ctrl_c_raises_keyboard_interrupt_after_the_sort():
    script = """
import os, signal, threading, numpy as np, gpusort
a = np.random.default_rng(1).random(1 << 20).astype(np.float32)
expected = np.sort(a, kind="stable")
gpusort.sort(a)
threading.Timer(0.05, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    for _ in range(1000):
        gpusort.sort_(a.copy())
    print("no interrupt")
except KeyboardInterrupt:
    print("interrupted")
assert np.array_equal(gpusort.sort(a), expected)
print("sorting after")
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=300, env=os.environ)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["interrupted", "sorting", "after"], result.stdout
    assert "gpusort validation" not in result.stderr, result.stderr
