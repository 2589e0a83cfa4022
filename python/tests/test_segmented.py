"""segments= of sort, sort_, argsort, sort_by_key and sort_by_key_ on host arrays: each segment of
the CSR offsets sorted on its own, against NumPy's stable argsort of each segment (the order
gpusort promises: gpu_reference.expected_order), every dtype, both orders, totalOrder, bit ranges,
empty and one-key segments, u32/u64/i64 offsets; and the refusals."""

import numpy as np
import pytest

import gpusort
from gpu_reference import DTYPES, assert_bits_equal, expected_order, make_keys


def random_offsets(rng, n, dtype=np.uint32):
    """CSR offsets of n keys: random lengths, an empty segment first, some between and last."""
    cuts = np.sort(rng.integers(0, n + 1, rng.integers(0, max(2, n // 50) + 1)))
    offsets = np.concatenate([[0, 0], cuts, [n, n]])
    return offsets.astype(dtype)


def segmented_order(keys, offsets, **kw):
    """Per segment: the segment's start plus its expected_order."""
    parts = [offsets[s] + expected_order(keys[offsets[s]:offsets[s + 1]], **kw)
             for s in range(len(offsets) - 1)]
    return np.concatenate(parts).astype(np.int64) if parts else np.zeros(0, np.int64)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_every_form_sorts_each_segment(rng, dtype):
    for n in [0, 1, 7, 1000, 20_000]:
        for distribution in ["uniform", "few", "special"]:
            keys = make_keys(rng, dtype, n, distribution)
            offsets = random_offsets(rng, n, [np.uint32, np.uint64, np.int64][n % 3])
            descending = bool(rng.integers(0, 2))
            order = segmented_order(keys, offsets.astype(np.int64), descending=descending)
            where = f"n={n} {distribution} descending={descending}"
            got = gpusort.argsort(keys, segments=offsets, descending=descending)
            np.testing.assert_array_equal(got, order, err_msg=where)
            assert got.dtype == np.int64
            got32 = gpusort.argsort(keys, segments=offsets, descending=descending, dtype=np.uint32)
            assert got32.dtype == np.uint32
            np.testing.assert_array_equal(got32, order, err_msg=where)
            assert_bits_equal(gpusort.sort(keys, segments=offsets, descending=descending),
                              keys[order])
            result, indices = gpusort.sort(keys, segments=offsets, descending=descending,
                                           return_indices=True)
            assert_bits_equal(result, keys[order])
            np.testing.assert_array_equal(indices, order, err_msg=where)
            out = np.empty_like(keys)
            assert gpusort.sort(keys, segments=offsets, descending=descending, out=out) is out
            assert_bits_equal(out, keys[order])
            values = np.arange(n, dtype=np.float64) * 3
            sorted_keys, sorted_values = gpusort.sort_by_key(keys, values, segments=offsets,
                                                             descending=descending)
            assert_bits_equal(sorted_keys, keys[order])
            np.testing.assert_array_equal(sorted_values, values[order], err_msg=where)
            in_place, in_place_values = keys.copy(), values.copy()
            result = gpusort.sort_by_key_(in_place, in_place_values, segments=offsets,
                                          descending=descending)
            assert result[0] is in_place and result[1] is in_place_values
            assert_bits_equal(in_place, keys[order])
            np.testing.assert_array_equal(in_place_values, values[order], err_msg=where)
            in_place = keys.copy()
            assert gpusort.sort_(in_place, segments=offsets, descending=descending) is in_place
            assert_bits_equal(in_place, keys[order])


def test_total_order_and_bits(rng):
    keys = make_keys(rng, np.float32, 5000, "special")
    offsets = random_offsets(rng, 5000)
    bounds = offsets.astype(np.int64)
    np.testing.assert_array_equal(gpusort.argsort(keys, segments=offsets, total_order=True),
                                  segmented_order(keys, bounds, total_order=True))
    ints = make_keys(rng, np.uint64, 5000, "uniform")
    for begin, end in [(0, 12), (8, 56), (40, 64)]:
        np.testing.assert_array_equal(
            gpusort.argsort(ints, segments=offsets, begin_bit=begin, end_bit=end,
                            descending=True),
            segmented_order(ints, bounds, bits=(begin, end), descending=True))


def test_one_segment_is_the_sort(rng):
    keys = make_keys(rng, np.int32, 3000, "few")
    np.testing.assert_array_equal(
        gpusort.argsort(keys, segments=np.array([0, 3000], dtype=np.uint64)),
        np.argsort(keys, kind="stable"))
    # A key per segment: nothing moves.
    np.testing.assert_array_equal(
        gpusort.argsort(keys, segments=np.arange(3001, dtype=np.uint32)), np.arange(3000))


def test_refusals():
    a = np.array([3, 1, 2, 0, 5], dtype=np.uint32)
    with pytest.raises(gpusort.Error, match="segment offsets decrease at index 2"):
        gpusort.sort(a, segments=np.array([0, 3, 2, 5], dtype=np.uint32))
    with pytest.raises(gpusort.Error):
        gpusort.argsort(a, segments=np.array([0, 3, 4], dtype=np.uint32))  # last is not n
    with pytest.raises(gpusort.Error):
        gpusort.argsort(a, segments=np.array([1, 5], dtype=np.uint32))  # first is not 0
    with pytest.raises(ValueError, match="segment offsets must not be negative"):
        gpusort.sort(a, segments=np.array([0, -1, 5]))
    with pytest.raises(TypeError, match="segments must be 1-D offsets"):
        gpusort.sort(a, segments=np.array([0.0, 5.0]))
    with pytest.raises(TypeError, match="segments must be 1-D offsets"):
        gpusort.sort(a, segments=np.array([[0, 5]]))
    with pytest.raises(TypeError, match="does not take a masked array"):
        gpusort.sort(np.ma.masked_array(a, mask=[0, 1, 0, 0, 0]), segments=[0, 5])
    with pytest.raises(gpusort.Error, match="bitonic"):
        gpusort.argsort(a, segments=np.array([0, 2, 5], dtype=np.uint32), algorithm="bitonic")
    with pytest.raises(ValueError, match="5 keys but 4 values"):
        gpusort.sort_by_key(a, np.arange(4, dtype=np.uint32), segments=[0, 5])
    frozen = a.copy()
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gpusort.sort_(frozen, segments=[0, 5])
    # Nothing was sorted by a refused call.
    np.testing.assert_array_equal(a, [3, 1, 2, 0, 5])
