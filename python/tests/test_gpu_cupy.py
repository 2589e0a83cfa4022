"""GPU arrays on a CUDA GPU with CuPy: every key dtype, sizes from 0, distributions, both orders,
values, argsort, in place and not, top-k; results made by CuPy on the array's device; the stream
order on a non-default CuPy stream (work queued before and after it). Skipped, saying why, where
CuPy or a CUDA device is missing; every result is compared with NumPy's stable sort of the same
keys, bit for bit."""

import numpy as np
import pytest

import gpusort
from gpusort import _core
from gpu_reference import (DISTRIBUTIONS, DTYPES, SIZES, assert_bits_equal, expected_order,
                           make_keys, topk_ks)

cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
try:
    _devices = cupy.cuda.runtime.getDeviceCount()
except cupy.cuda.runtime.CUDARuntimeError:
    _devices = 0
if _devices == 0:
    pytest.skip("CuPy sees no CUDA device", allow_module_level=True)
if _core.cuda_unavailable_why():
    pytest.skip(f"the CUDA face cannot run: {_core.cuda_unavailable_why()}",
                allow_module_level=True)


@pytest.fixture(autouse=True)
def no_validation_messages():
    """These tests make no Vulkan context (conftest's check would make one)."""
    yield


def to_host(a):
    cupy.cuda.get_current_stream().synchronize()
    return cupy.asnumpy(a)


def assert_cupy(result, like, where):
    assert isinstance(result, cupy.ndarray), where
    assert result.device == like.device, where


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_sort_argsort_sort_by_key(rng, dtype, descending):
    for n in SIZES:
        for distribution in DISTRIBUTIONS if n < (1 << 20) else ["uniform", "special"]:
            keys = make_keys(rng, dtype, n, distribution)
            order = expected_order(keys, descending)
            expected = keys[order]
            x = cupy.asarray(keys)
            where = f"n={n} {distribution}"
            result = gpusort.sort(x, descending=descending)
            assert_cupy(result, x, where)
            assert_bits_equal(to_host(result), expected)
            assert_bits_equal(to_host(x), keys)  # the input is left as it was
            indices = gpusort.argsort(x, descending=descending)
            assert_cupy(indices, x, where)
            assert indices.dtype == np.int64, where
            np.testing.assert_array_equal(to_host(indices), order, err_msg=where)
            values, indices = gpusort.sort(x, descending=descending, return_indices=True)
            assert_bits_equal(to_host(values), expected)
            np.testing.assert_array_equal(to_host(indices), order, err_msg=where)
            payload = cupy.asarray(np.arange(n, dtype=np.int64) * 3)
            sorted_keys, sorted_values = gpusort.sort_by_key(x, payload, descending=descending)
            assert_cupy(sorted_values, x, where)
            assert_bits_equal(to_host(sorted_keys), expected)
            np.testing.assert_array_equal(to_host(sorted_values), order * 3, err_msg=where)
            assert gpusort.sort_(x, descending=descending) is x
            assert_bits_equal(to_host(x), expected)


def test_strided_and_values_in_place(rng):
    keys = make_keys(rng, np.float32, 100_001, "special")
    strided = cupy.asarray(np.repeat(keys, 2))[::2]
    order = expected_order(keys)
    assert_bits_equal(to_host(gpusort.sort(strided)), keys[order])
    values = rng.standard_normal(keys.size).astype(np.float64)
    k, v = cupy.asarray(keys), cupy.asarray(values)
    result = gpusort.sort_by_key_(k, v)
    assert result[0] is k and result[1] is v
    assert_bits_equal(to_host(k), keys[order])
    np.testing.assert_array_equal(to_host(v), values[order])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint64])
def test_topk(rng, dtype):
    for n in [0, 5, 4097, 300_000]:
        keys = make_keys(rng, dtype, n, "special")
        x = cupy.asarray(keys)
        for largest in (False, True):
            order = expected_order(keys, largest)
            for k in topk_ks(n):
                where = f"n={n} k={k} largest={largest}"
                top, indices = gpusort.topk(x, k, largest=largest, return_indices=True)
                assert_cupy(top, x, where)
                assert indices.dtype == np.int64 and indices.shape == (k,), where
                assert_bits_equal(to_host(top), keys[order[:k]])
                np.testing.assert_array_equal(to_host(indices), order[:k], err_msg=where)


_SPIN = r"""
extern "C" __global__ void spin(long long cycles) {
  const long long start = clock64();
  while (clock64() - start < cycles) {
  }
}
"""


def test_stream_order():
    """Work queued before the call on a non-default, non-blocking CuPy stream (a long spin, then
    the copy that fills the keys) and after it (a copy of the result) runs in order: on another
    stream the sort would read the keys before the copy. And the call does not wait for the
    stream: it is still busy when the call returns."""
    spin = cupy.RawKernel(_SPIN, "spin")
    n = 1 << 22
    host = np.random.default_rng(7).standard_normal(n).astype(np.float32)
    source = cupy.asarray(host)
    expected = np.sort(host, kind="stable")
    gpusort.sort(source)  # the kernels loaded (the first sort's host work) beforehand
    cupy.cuda.Device().synchronize()
    for call in ("sort_", "sort", "argsort", "topk"):
        x = cupy.zeros(n, dtype=cupy.float32)
        cupy.cuda.Device().synchronize()
        stream = cupy.cuda.Stream(non_blocking=True)
        with stream:
            spin((1,), (1,), (np.int64(1_000_000_000),))  # ~0.5 s of GPU time on this stream
            x[...] = source
            if call == "sort_":
                gpusort.sort_(x)
                out = x
            elif call == "sort":
                out = gpusort.sort(x)
            elif call == "argsort":
                out = gpusort.argsort(x)
            else:
                out = gpusort.topk(x, 1000)
            busy = not stream.done
            result = out.copy() if call != "argsort" else x[out]
        stream.synchronize()
        want = expected[:1000] if call == "topk" else expected
        np.testing.assert_array_equal(cupy.asnumpy(result), want, err_msg=call)
        assert busy, f"{call} waited for its stream"
