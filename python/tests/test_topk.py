"""gpusort.topk against the first k of NumPy's stable sort: every key dtype, both directions,
NumPy's float order and totalOrder, values and indices, rows (2-D) and segments, refusals."""

import numpy as np
import pytest

import gpusort

KEY_DTYPES = [np.uint32, np.int32, np.float32, np.uint64, np.int64, np.float64]


def _keys(dtype, n, rng):
    if np.dtype(dtype).kind == "f":
        a = rng.integers(-20, 20, n).astype(dtype)
        a[rng.random(n) < 0.1] = np.nan
        a[rng.random(n) < 0.05] = -0.0
        a[rng.random(n) < 0.05] = np.inf
        negative = rng.random(n) < 0.03  # NaNs with the sign bit set: still NaN, still last
        a[negative] = -np.nan
        return a
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -50), min(info.max, 50), n, endpoint=True).astype(dtype)


def _order(a, largest, total_order=False):
    """The stable order gpusort sorts a in (NumPy's, or totalOrder on the bits)."""
    if total_order:
        return gpusort.argsort(a, descending=largest, total_order=True)
    if not largest:
        return np.argsort(a, kind="stable")
    # Descending, still stable: the reverse comparison (NaN the greatest, first).
    n = a.shape[0]
    if a.dtype.kind == "f":
        key = np.where(np.isnan(a), np.inf, a)
        rank = np.lexsort((np.arange(n), ~np.isnan(a), -key))
        return rank
    return np.argsort(-a.astype(np.float64) if a.dtype.kind != "u" else ~a, kind="stable")


def _same_bits(x, y):
    return x.dtype == y.dtype and np.array_equal(x.view(np.uint8), y.view(np.uint8))


@pytest.mark.parametrize("dtype", KEY_DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("largest", [False, True], ids=["smallest", "largest"])
@pytest.mark.parametrize("k", [0, 1, 100, 2049, 3000])
def test_topk_matches_numpy(dtype, largest, k, rng):
    a = _keys(dtype, 3000, rng)
    values = rng.integers(0, 2**31, a.shape[0]).astype(np.uint32)
    order = _order(a, largest)[:k]
    keys, got_values, indices = gpusort.topk(a, k, largest=largest, values=values,
                                             return_indices=True)
    assert np.array_equal(indices, order)
    assert indices.dtype == np.int64
    assert _same_bits(keys, a[order])
    assert np.array_equal(got_values, values[order])
    assert _same_bits(gpusort.topk(a, k, largest=largest), a[order])


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["float32", "float64"])
def test_topk_total_order(dtype, rng):
    a = _keys(dtype, 2000, rng)
    for largest in (False, True):
        order = _order(a, largest, total_order=True)[:300]
        keys, indices = gpusort.topk(a, 300, largest=largest, return_indices=True,
                                     total_order=True, dtype=np.uint32)
        assert indices.dtype == np.uint32
        assert np.array_equal(indices, order)
        assert _same_bits(keys, a[order])


def test_topk_rows(rng):
    a = _keys(np.float32, 64 * 100, rng).reshape(64, 100)
    values = np.arange(a.size, dtype=np.float64).reshape(a.shape)
    keys, got_values, indices = gpusort.topk(a, 7, values=values, return_indices=True)
    order = np.array([np.argsort(row, kind="stable")[:7] for row in a])
    assert keys.shape == (64, 7)
    assert np.array_equal(indices, order)
    assert _same_bits(keys, np.take_along_axis(a, order, 1))
    assert np.array_equal(got_values, np.take_along_axis(values, order, 1))
    # k beyond the rows' length: each row whole.
    assert gpusort.topk(a[:, :5], 9).shape == (64, 5)


def test_topk_segments(rng):
    a = _keys(np.int64, 500, rng)
    offsets = np.array([0, 0, 3, 3, 100, 101, 500], dtype=np.uint32)
    keys, indices = gpusort.topk(a, 4, segments=offsets, largest=True, return_indices=True)
    expected = []
    for s in range(len(offsets) - 1):
        segment = np.arange(offsets[s], offsets[s + 1])
        expected.extend(segment[np.argsort(-a[segment], kind="stable")][:4])
    assert np.array_equal(indices, expected)
    assert np.array_equal(keys, a[expected])


def test_topk_refusals():
    a = np.arange(5, dtype=np.uint32)
    with pytest.raises(ValueError, match="k = 6 is not within 0 to the 5 keys"):
        gpusort.topk(a, 6)
    with pytest.raises(ValueError, match="5 keys but 4 values"):
        gpusort.topk(a, 2, values=np.arange(4, dtype=np.uint32))
    with pytest.raises(TypeError, match="k must be an integer"):
        gpusort.topk(a, 2.0)
    with pytest.raises(gpusort.Error, match="segment offsets decrease at index 2"):
        gpusort.topk(a, 2, segments=np.array([0, 3, 2, 5], dtype=np.uint32))
    with pytest.raises(TypeError, match="unsupported array dtype"):
        gpusort.topk(np.arange(5, dtype=np.int16), 2)
    assert gpusort.topk(np.array([], dtype=np.float32), 0).shape == (0,)
