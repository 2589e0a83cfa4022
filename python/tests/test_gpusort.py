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


def assert_fresh(result, *inputs):
    """result is a new 1-D array laid out as NumPy lays out its own: strides (itemsize,) (pybind11
    before 2.12 made (0,) on NumPy 2; NumPy's own empty arrays have (0,)), C-contiguous, aligned,
    writable, its memory its own (or an owning base's) and shared with none of the inputs."""
    assert isinstance(result, np.ndarray) and result.ndim == 1
    assert result.strides == np.empty(result.shape, result.dtype).strides
    if result.size > 1:
        assert result.strides == (result.dtype.itemsize,)
    assert result.nbytes == result.size * result.dtype.itemsize
    assert result.flags.c_contiguous and result.flags.aligned and result.flags.writeable
    owner = result
    while not owner.flags.owndata:
        owner = owner.base
        assert isinstance(owner, np.ndarray)
    for x in inputs:
        assert not np.shares_memory(result, x)


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

    # Every returned array in full, and laid out as NumPy's own (strides, flags, memory).
    result = gpusort.sort(a, descending=descending)
    assert_same(result, expected)
    assert_fresh(result, a)
    for index_dtype in [np.int64, np.uint32]:
        indices = gpusort.argsort(a, descending=descending, dtype=index_dtype)
        assert_same(indices, order.astype(index_dtype))
        assert_fresh(indices, a)
    values = rng.integers(0, 2**63, n, dtype=np.int64).view(np.float64)  # any 8-byte payload
    keys_out, values_out = gpusort.sort_by_key(a, values, descending=descending)
    assert_same(keys_out, expected)
    assert_same(values_out, values[order])
    assert_fresh(keys_out, a, values)
    assert_fresh(values_out, a, values, keys_out)
    assert_same(a, original)  # none of these modify their input

    small_values = np.arange(n, dtype=np.int32)
    returned = gpusort.sort_by_key_(a, small_values, descending=descending)
    assert returned[0] is a and returned[1] is small_values
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
        result, indices = gpusort.sort(a), gpusort.argsort(a, dtype=np.uint32)
        assert_same(result, np.sort(a, kind="stable"))
        assert_same(indices, np.argsort(a, kind="stable").astype(np.uint32))
        assert_fresh(result, base)
        assert_fresh(indices, base)
        values = np.arange(2 * a.size, dtype=np.int64)[::-2]  # strided and reversed too
        keys_out, values_out = gpusort.sort_by_key(a, values)
        assert_same(keys_out, np.sort(a, kind="stable"))
        assert_same(values_out, values[np.argsort(a, kind="stable")])
        assert_fresh(keys_out, base)
        assert_fresh(values_out, values)
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
    assert_fresh(result, a)
    indices = gpusort.argsort(a)
    assert_same(indices, np.argsort(a, kind="stable"))
    assert_fresh(indices, a)
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


# ---- NumPy's array layout (pybind11 before 2.12 on NumPy 2) ----

def test_fresh_check_catches_zero_strides():
    # What py::array_t<T>(n) of pybind11 2.10 made on NumPy 2: the right memory, strides (0,),
    # every element reading as the first. assert_fresh, used on every result above, refuses it.
    good = np.arange(5, dtype=np.int64)
    assert_fresh(good)
    with pytest.raises(AssertionError):
        assert_fresh(np.lib.stride_tricks.as_strided(good, strides=(0,)))


def test_import_check_passes():
    gpusort._check_numpy_layout()  # what importing gpusort ran


@pytest.mark.parametrize("field", ["data", "ndim", "shape", "strides", "flags"])
def test_import_check_refuses_a_misreading_module(monkeypatch, field):
    # A module that read arrays wrongly (as one built on NumPy 1's dtype layout made them on
    # NumPy 2: strides (0,)) is refused with ImportError instead of returning wrong results.
    real = gpusort._core.array_layout

    def misread(a):
        layout = dict(zip(["data", "ndim", "shape", "strides", "flags"], real(a)))
        layout[field] = {"data": layout["data"] + 8, "ndim": 2, "shape": (0,) * a.ndim,
                         "strides": (0,) * a.ndim, "flags": layout["flags"] ^ 0x400}[field]
        return tuple(layout.values())

    monkeypatch.setattr(gpusort._core, "array_layout", misread)
    with pytest.raises(ImportError, match="misreads NumPy"):
        gpusort._check_numpy_layout()


def test_import_fails_with_a_misreading_module():
    # The same at `import gpusort`: the compiled module loaded first, its reading patched.
    script = f"""
import importlib.util, sys
spec = importlib.util.spec_from_file_location("gpusort._core", {gpusort._core.__file__!r})
core = importlib.util.module_from_spec(spec)
spec.loader.exec_module(core)
real = core.array_layout
core.array_layout = lambda a: real(a)[:3] + ((0,) * a.ndim,) + real(a)[4:]
sys.modules["gpusort._core"] = core
try:
    import gpusort
except ImportError as e:
    print("ImportError:", e)
"""
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            timeout=120, env=os.environ)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("ImportError: gpusort: the compiled module"), result.stdout
    assert "misreads NumPy" in result.stdout and "(0,)" in result.stdout


def test_core_refuses_bad_arrays():
    # The compiled module writes only into 1-D, C-contiguous, aligned, writable arrays whose
    # stride is their itemsize (so never into a (0,)-strided one), of the size and dtype expected.
    core = gpusort._core
    opts = dict(context=gpusort.default_context()._impl, descending=False, algorithm="automatic",
                begin_bit=0, end_bit=0, numpy_order=True)
    keys = np.arange(5, dtype=np.uint32)[::-1].copy()
    zero_strides = np.lib.stride_tricks.as_strided(np.zeros(5, np.int64), strides=(0,))
    read_only = np.zeros(5, np.int64)
    read_only.flags.writeable = False
    for indices, error, match in [
            (zero_strides, ValueError, "indices must be C-contiguous"),
            (np.zeros(10, np.int64)[::2], ValueError, "indices must be C-contiguous"),
            (read_only, ValueError, "indices must be writable"),
            (np.zeros(4, np.int64), ValueError, "5 keys but 4 indices"),
            (np.zeros(5, np.int32), TypeError, "uint32 or int64"),
            (np.zeros((5, 1), np.int64), ValueError, "indices must be 1-D"),
            ([0] * 5, TypeError, "indices must be a numpy.ndarray")]:
        with pytest.raises(error, match=re.escape(match)):
            core.argsort(keys=keys, indices=indices, **opts)
    with pytest.raises(TypeError, match="keys must be a numpy.ndarray"):
        core.sort_inplace(keys=[3, 1, 2], values=None, **opts)
    with pytest.raises(ValueError, match="destination must be C-contiguous"):
        core.sort_copy(source=keys, destination=np.lib.stride_tricks.as_strided(
            np.zeros(5, np.uint32), strides=(0,)), **opts)
    indices = np.zeros(5, np.int64)
    core.argsort(keys=keys, indices=indices, **opts)
    assert_same(indices, np.arange(5)[::-1])


# ---- masked arrays ----

def make_masked(dtype, n, rng):
    keys = make_keys(dtype, n, rng)
    return np.ma.MaskedArray(keys, mask=rng.random(n) < 0.3, fill_value=keys[0] if n else None)


def masked_order(a, descending=False):
    """gpusort's order of a masked array: the unmasked elements sorted, then the masked ones in
    input order (ascending like np.ma.sort(a, kind="stable"), endwith=True)."""
    mask = np.ma.getmaskarray(a)
    unmasked = np.flatnonzero(~mask)
    return np.concatenate([unmasked[reference_order(np.ma.getdata(a)[unmasked], descending)],
                           np.flatnonzero(mask)]).astype(np.int64)


def assert_same_masked(actual, expected):
    assert type(actual) is type(expected) is np.ma.MaskedArray
    assert_same(actual.data, expected.data)  # masked elements' data too
    assert np.array_equal(np.ma.getmaskarray(actual), np.ma.getmaskarray(expected))
    assert_same(np.array([actual.fill_value], actual.dtype),
                np.array([expected.fill_value], expected.dtype))


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("n", [0, 1, 31, 1000])
@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_masked(dtype, n, descending, rng):
    a = make_masked(dtype, n, rng)
    original = a.copy()
    order = masked_order(a, descending)
    expected = a[order]
    kw = dict(descending=descending)

    result = gpusort.sort(a, **kw)
    assert_same_masked(result, expected)
    assert_fresh(result, a)
    for index_dtype in [np.int64, np.uint32]:
        indices = gpusort.argsort(a, dtype=index_dtype, **kw)
        assert type(indices) is np.ndarray  # like np.ma.argsort
        assert_same(indices, order.astype(index_dtype))
        assert_fresh(indices, a)
    values = rng.integers(0, 2**31, n).astype(np.float32)
    masked_values = np.ma.MaskedArray(values, mask=rng.random(n) < 0.5)
    plain_order = reference_order(a.data, descending)
    for keys, vals, key_order in [(a, values, order), (a.data, masked_values, plain_order),
                                  (a, masked_values, order)]:
        keys_out, values_out = gpusort.sort_by_key(keys, vals, **kw)
        for out, x in [(keys_out, keys), (values_out, vals)]:
            if isinstance(x, np.ma.MaskedArray):
                assert_same_masked(out, x[key_order])
            else:
                assert type(out) is np.ndarray
                assert_same(out, x[key_order])
            assert_fresh(out, keys, vals)
    assert_same_masked(a, original)  # none of these modify their input

    b = original.copy()
    assert gpusort.sort_(b, **kw) is b
    assert_same_masked(b, expected)
    b, b_values = original.copy(), masked_values.copy()
    returned = gpusort.sort_by_key_(b, b_values, **kw)
    assert returned[0] is b and returned[1] is b_values
    assert_same_masked(b, expected)
    assert_same_masked(b_values, masked_values[order])
    b, b_values = original.data.copy(), masked_values.copy()
    gpusort.sort_by_key_(b, b_values, **kw)
    assert_same(b, original.data[plain_order])
    assert_same_masked(b_values, masked_values[plain_order])

    if not descending:
        # np.ma sorts masked elements as a fill value (the dtype's maximum, or NaN): the same
        # where no unmasked key ties with it.
        fill = np.nan if a.dtype.kind == "f" else np.iinfo(a.dtype).max
        unmasked = a.compressed()
        if not (np.isnan(unmasked).any() if np.isnan(fill) else (unmasked == fill).any()):
            assert_same_masked(gpusort.sort(a), np.ma.sort(a, kind="stable"))
            assert_same(gpusort.argsort(a), np.ma.argsort(a, kind="stable"))


def test_masked_special_cases(rng):
    keys = make_keys(np.int32, 500, rng)
    order = reference_order(keys)
    for a in [np.ma.MaskedArray(keys), np.ma.MaskedArray(keys, mask=np.zeros(500, bool))]:
        # Nothing masked: sorted on the device in place, still a MaskedArray with its mask.
        result = gpusort.sort(a)
        assert_same_masked(result, a[order])
        assert_same(gpusort.argsort(a), order)
        b = a.copy()
        assert gpusort.sort_(b) is b
        assert_same_masked(b, a[order])
    everything = np.ma.MaskedArray(keys, mask=np.ones(500, bool))
    assert_same_masked(gpusort.sort(everything), everything)
    assert_same(gpusort.argsort(everything, descending=True), np.arange(500))

    # In place on a view with a shared mask: as the masked array's own sort() does it.
    base = np.ma.MaskedArray(rng.integers(-5, 5, 1000).astype(np.int64),
                             mask=rng.random(1000) < 0.3)
    ours, theirs = base.copy(), base.copy()
    ours_view, theirs_view = ours[::3], theirs[::3]
    gpusort.sort_(ours_view)
    theirs_view.sort(kind="stable")
    assert_same_masked(ours_view, theirs_view)
    assert_same_masked(ours, theirs)

    # A hard mask does not move: refused in place (np.ma's own sort() scrambles it), fine copied.
    hard = np.ma.MaskedArray(keys, mask=rng.random(500) < 0.3, hard_mask=True)
    before = hard.copy()
    with pytest.raises(ValueError, match="hard mask"):
        gpusort.sort_(hard)
    with pytest.raises(ValueError, match="hard mask"):
        gpusort.sort_by_key_(hard, np.zeros(500, np.float32))
    with pytest.raises(ValueError, match="hard mask"):
        gpusort.sort_by_key_(keys.copy(), np.ma.MaskedArray(keys.astype(np.float32),
                                                            mask=hard.mask, hard_mask=True))
    assert_same_masked(hard, before)
    result = gpusort.sort(hard)
    assert_same_masked(result, hard[masked_order(hard)])
    assert result.hardmask

    # out= has no room for a mask.
    with pytest.raises(TypeError, match="masked"):
        gpusort.sort(hard, out=np.empty(500, np.int32))
    with pytest.raises(TypeError, match="masked"):
        gpusort.sort(keys, out=np.ma.MaskedArray(np.empty(500, np.int32)))
    # The masked path checks its arguments as the plain one does.
    with pytest.raises(TypeError, match="float16"):
        gpusort.sort(np.ma.MaskedArray(np.zeros(4, np.float16), mask=[1, 0, 0, 0]))
    with pytest.raises(ValueError, match="4 keys but 3 values"):
        gpusort.sort_by_key(np.ma.MaskedArray(np.zeros(4, np.int32)), np.zeros(3, np.int32))
    with pytest.raises(ValueError, match="read-only"):
        read_only = np.ma.MaskedArray(keys, mask=keys > 0)
        read_only.flags.writeable = False
        gpusort.sort_(read_only)


# ---- integer and flag arguments ----

def all_calls(keys):
    """Each public function on keys (copies where they sort in place), taking keyword arguments."""
    values = np.arange(keys.size, dtype=np.uint32)
    masked = np.ma.MaskedArray(keys, mask=np.arange(keys.size) % 3 == 0)
    return {"sort": lambda **kw: gpusort.sort(keys, **kw),
            "sort_": lambda **kw: gpusort.sort_(keys.copy(), **kw),
            "argsort": lambda **kw: gpusort.argsort(keys, **kw),
            "sort_by_key": lambda **kw: gpusort.sort_by_key(keys, values, **kw),
            "sort_by_key_": lambda **kw: gpusort.sort_by_key_(keys.copy(), values.copy(), **kw),
            "sort masked": lambda **kw: gpusort.sort(masked, **kw),
            "sort_ masked": lambda **kw: gpusort.sort_(masked.copy(), **kw),
            "argsort masked": lambda **kw: gpusort.argsort(masked, **kw)}


class Index:
    """Not an int, but an integer all the same (operator.index)."""

    def __init__(self, value):
        self.value = value

    def __index__(self):
        return self.value


@pytest.mark.parametrize("name", ["begin_bit", "end_bit"])
@pytest.mark.parametrize("bad", [1.5, 3.0, np.float64(3), np.float32(1.5), "3", b"3", True,
                                 np.bool_(False), [3], 3 + 0j],
                         ids=lambda v: f"{type(v).__name__}({v!r})")
def test_bits_must_be_integers(name, bad):
    keys = np.arange(40, dtype=np.uint32)[::-1].copy()
    for call_name, call in all_calls(keys).items():
        with pytest.raises(TypeError, match=f"{name} must be an integer"):
            call(**{name: bad})
    assert_same(keys, np.arange(40, dtype=np.uint32)[::-1])


def test_bits_take_any_integer(rng):
    keys = make_keys(np.uint32, 1000, rng)
    digit = (keys >> np.uint32(3)) & np.uint32(2**17 - 1)  # bits [3, 20)
    order = np.argsort(digit, kind="stable")
    masked_keys = np.ma.MaskedArray(keys, mask=np.arange(keys.size) % 3 == 0)
    for begin, end in [(3, 20), (np.int64(3), np.uint8(20)), (Index(3), np.int32(20))]:
        calls = all_calls(keys)
        assert_same(calls["argsort"](begin_bit=begin, end_bit=end), order)
        assert_same(calls["sort"](begin_bit=begin, end_bit=end), keys[order])
        assert_same(calls["sort_"](begin_bit=begin, end_bit=end), keys[order])
        assert_same(calls["sort_by_key"](begin_bit=begin, end_bit=end)[1], order.astype(np.uint32))
        assert_same(calls["sort_by_key_"](begin_bit=begin, end_bit=end)[1], order.astype(np.uint32))
        assert_same(calls["argsort masked"](begin_bit=begin, end_bit=end),
                    gpusort.argsort(masked_keys, begin_bit=3, end_bit=20))
    with pytest.raises(ValueError, match="range"):
        gpusort.sort(keys, begin_bit=np.int64(20), end_bit=np.int64(3))


@pytest.mark.parametrize("name", ["descending", "total_order"])
@pytest.mark.parametrize("bad", [1, 0, np.int64(1), 1.0, "yes", "", None, [True]],
                         ids=lambda v: f"{type(v).__name__}({v!r})")
def test_flags_must_be_bools(name, bad):
    keys = np.arange(40, dtype=np.float32)
    for call_name, call in all_calls(keys).items():
        with pytest.raises(TypeError, match=f"{name} must be True or False"):
            call(**{name: bad})


def test_flags_take_numpy_bools():
    keys = np.array([2.0, -0.0, 0.0, 1.0], np.float32)
    assert_same(gpusort.sort(keys, descending=np.bool_(True), total_order=np.bool_(True)),
                np.array([2.0, 1.0, 0.0, -0.0], np.float32))


def test_context_arguments():
    for bad in [1.5, True, np.float64(0), b"llvmpipe", ["llvmpipe"]]:
        with pytest.raises(TypeError, match="device must be an index or a name"):
            gpusort.Context(device=bad)
    for bad in [1, "yes", None]:
        with pytest.raises(TypeError, match="validation must be True or False"):
            gpusort.Context(validation=bad)


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
    # The device the suite runs on (conftest.py: llvmpipe unless GPUSORT_DEVICE names another).
    wanted = os.environ["GPUSORT_DEVICE"]
    context = gpusort.Context(device=wanted)
    assert context.device.name == gpusort.default_context().device.name
    assert context.device.name in repr(context)
    if wanted == "llvmpipe":
        assert "llvmpipe" in context.device.name and context.device.type == "cpu"
    by_index = gpusort.Context(device=np.int64(context.device.index))  # an index, any integer
    assert by_index.device.name == context.device.name
    a = make_keys(np.int32, 1000, rng)
    for c in [context, context, by_index]:
        assert_same(gpusort.sort(a, context=c), np.sort(a, kind="stable"))
    assert gpusort.default_context() is gpusort.default_context()


def test_gil_released_during_sort(rng):
    # A sort long enough that this thread gets many turns while it runs: on a fast GPU a sort of
    # 2^20 keys ends in about a millisecond, so the array grows until one sort takes 40 ms.
    n = 1 << 20
    gpusort.sort(make_keys(np.uint32, n, rng))  # pipelines compiled before the timed calls
    while True:
        a = make_keys(np.uint32, n, rng)
        start = time.perf_counter()
        gpusort.sort(a)
        if time.perf_counter() - start >= 0.04 or n >= 1 << 26:
            break
        n *= 4
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
