"""GPU arrays on a CUDA GPU with PyTorch: every key dtype, sizes from 0, distributions, both
orders, bit ranges, values, argsort, in place and not, strided tensors, other producers (DLPack
and __cuda_array_interface__ wrappers), and the stream order (work queued before and after on a
non-default stream). Skipped, saying why, where PyTorch or a CUDA device is missing; every result
is compared with NumPy's stable sort of the same keys, bit for bit."""

import numpy as np
import pytest

import gpusort
from gpusort import _core
from gpu_reference import (DISTRIBUTIONS, DTYPES, SIZES, assert_bits_equal, expected_order,
                           make_keys, topk_ks)

torch = pytest.importorskip("torch", reason="PyTorch is not installed")
if not torch.cuda.is_available():
    pytest.skip("torch.cuda has no CUDA device", allow_module_level=True)
if _core.cuda_unavailable_why():
    pytest.skip(f"the CUDA face cannot run: {_core.cuda_unavailable_why()}",
                allow_module_level=True)


@pytest.fixture(autouse=True)
def no_validation_messages():
    """These tests make no Vulkan context (conftest's check would make one)."""
    yield


SIGNED = {np.dtype(np.uint32): (np.int32, "uint32"), np.dtype(np.uint64): (np.int64, "uint64")}


def to_gpu(a):
    """A CUDA tensor of a's dtype (unsigned ones made through their signed twins, which every
    PyTorch moves between NumPy and the GPU)."""
    a = np.ascontiguousarray(a)
    if a.dtype in SIGNED:
        signed, name = SIGNED[a.dtype]
        return torch.from_numpy(a.view(signed)).cuda().view(getattr(torch, name))
    return torch.from_numpy(a).cuda()


def to_host(t):
    torch.cuda.synchronize()
    if t.dtype in (getattr(torch, "uint32", None), getattr(torch, "uint64", None)):
        signed = torch.int32 if t.dtype == torch.uint32 else torch.int64
        return t.view(signed).cpu().numpy().view(np.uint32 if signed == torch.int32 else np.uint64)
    return t.cpu().numpy()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("descending", [False, True], ids=["ascending", "descending"])
def test_sort_argsort_sort_by_key(rng, dtype, descending):
    for n in SIZES:
        for distribution in DISTRIBUTIONS if n < (1 << 20) else ["uniform", "special"]:
            keys = make_keys(rng, dtype, n, distribution)
            order = expected_order(keys, descending)
            expected = keys[order]
            x = to_gpu(keys)
            where = f"n={n} {distribution}"
            result = gpusort.sort(x, descending=descending)
            assert isinstance(result, torch.Tensor) and result.device == x.device, where
            assert_bits_equal(to_host(result), expected)
            assert_bits_equal(to_host(x), keys)  # the input is left as it was
            indices = gpusort.argsort(x, descending=descending)
            assert indices.dtype == torch.int64, where
            np.testing.assert_array_equal(to_host(indices), order, err_msg=where)
            values, indices = gpusort.sort(x, descending=descending, return_indices=True)
            assert_bits_equal(to_host(values), expected)
            np.testing.assert_array_equal(to_host(indices), order, err_msg=where)
            payload = to_gpu(np.arange(n, dtype=np.int64) * 3)
            sorted_keys, sorted_values = gpusort.sort_by_key(x, payload, descending=descending)
            assert_bits_equal(to_host(sorted_keys), expected)
            np.testing.assert_array_equal(to_host(sorted_values), order * 3, err_msg=where)
            gpusort.sort_(x, descending=descending)
            assert_bits_equal(to_host(x), expected)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_segments(rng, dtype):
    """segments= with the offsets a tensor: the CUDA face's segmented sort and argsort against
    NumPy's stable argsort of each segment, layouts of few large, many small and empty segments."""
    for n in [0, 1, 1000, 70_000, (1 << 20) + 7]:
        for layout in ["few", "many", "single keys"]:
            keys = make_keys(rng, dtype, n, "special" if n % 2 else "uniform")
            if layout == "few":
                cuts = np.sort(rng.integers(0, n + 1, 5))
            elif layout == "many":
                cuts = np.sort(rng.integers(0, n + 1, max(1, n // 16)))
            else:
                cuts = np.arange(n + 1)
            offsets = np.concatenate([[0, 0], cuts, [n, n]]).astype(np.int64)
            descending = layout == "many"
            order = np.concatenate(
                [offsets[s] + expected_order(keys[offsets[s]:offsets[s + 1]], descending)
                 for s in range(len(offsets) - 1)]).astype(np.int64)
            x, o = to_gpu(keys), to_gpu(offsets)
            where = f"n={n} {layout}"
            np.testing.assert_array_equal(
                to_host(gpusort.argsort(x, segments=o, descending=descending)), order,
                err_msg=where)
            assert_bits_equal(to_host(gpusort.sort(x, segments=o, descending=descending)),
                              keys[order])
            payload = to_gpu(np.arange(n, dtype=np.int32))
            _, values = gpusort.sort_by_key(x, payload, segments=o, descending=descending)
            np.testing.assert_array_equal(to_host(values), order, err_msg=where)
            gpusort.sort_(x, segments=o.to(torch.int32), descending=descending)
            assert_bits_equal(to_host(x), keys[order])


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_total_order(rng, dtype):
    for n in [5, 4097, 300_000]:
        keys = make_keys(rng, dtype, n, "special")
        for descending in (False, True):
            order = expected_order(keys, descending, total_order=True)
            x = to_gpu(keys)
            assert_bits_equal(to_host(gpusort.sort(x, total_order=True, descending=descending)),
                              keys[order])
            np.testing.assert_array_equal(
                to_host(gpusort.argsort(x, total_order=True, descending=descending)), order)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_bit_ranges(rng, dtype):
    width = np.dtype(dtype).itemsize * 8
    for n in [1000, 200_000]:
        keys = make_keys(rng, dtype, n, "uniform")
        for bits in [(0, 8), (4, 13), (width - 8, width), (3, width - 2)]:
            order = expected_order(keys, bits=bits)
            x = to_gpu(keys)
            assert_bits_equal(to_host(gpusort.sort(x, begin_bit=bits[0], end_bit=bits[1],
                                                   total_order=True)), keys[order])
            np.testing.assert_array_equal(
                to_host(gpusort.argsort(x, begin_bit=bits[0], end_bit=bits[1],
                                        total_order=True)), order)


def test_index_dtypes_and_values(rng):
    keys = make_keys(rng, np.float32, 100_000, "special")
    order = expected_order(keys)
    x = to_gpu(keys)
    for dtype in (np.int64, np.int32, torch.int32, torch.int64):
        indices = gpusort.argsort(x, dtype=dtype)
        assert str(indices.dtype) == "torch." + gpusort._index_dtype(dtype).name
        np.testing.assert_array_equal(to_host(indices).astype(np.int64), order)
    # Values of 4 and 8 bytes, any dtype.
    for values in (rng.standard_normal(keys.size).astype(np.float32),
                   rng.integers(0, 1 << 40, keys.size), np.arange(keys.size, dtype=np.int32)):
        k, v = gpusort.sort_by_key(x, to_gpu(values))
        np.testing.assert_array_equal(to_host(v), values[order])
        k2, v2 = to_gpu(keys), to_gpu(values)
        result = gpusort.sort_by_key_(k2, v2)
        assert result[0] is k2 and result[1] is v2
        assert_bits_equal(to_host(k2), keys[order])
        np.testing.assert_array_equal(to_host(v2), values[order])


def test_strided_tensors(rng):
    keys = make_keys(rng, np.int64, 50_001, "uniform")
    base = to_gpu(keys)
    view = base[::3]
    strided = keys[::3]
    order = expected_order(strided)
    assert_bits_equal(to_host(gpusort.sort(view)), strided[order])
    np.testing.assert_array_equal(to_host(gpusort.argsort(view)), order)
    gpusort.sort_(view)  # sorted in a copy, written back through the view
    host = keys.copy()
    host[::3] = strided[order]
    assert_bits_equal(to_host(base), host)
    out = torch.empty_like(view, memory_format=torch.contiguous_format)
    assert gpusort.sort(base[::3], out=out) is out
    assert_bits_equal(to_host(out), host[::3])


def test_other_producers(rng):
    """DLPack and __cuda_array_interface__ producers gpusort does not know: sorted in place on
    the legacy default stream (PyTorch's default stream)."""

    class DLPackOnly:
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kwargs):
            return self.t.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    class InterfaceOnly:
        def __init__(self, t):
            self.__cuda_array_interface__ = t.__cuda_array_interface__

    for wrap in (DLPackOnly, InterfaceOnly):
        keys = make_keys(rng, np.float32, 300_000, "special")
        x = to_gpu(keys)
        torch.cuda.synchronize()
        gpusort.sort_(wrap(x))
        assert_bits_equal(to_host(x), keys[expected_order(keys)])
        k, v = to_gpu(keys), to_gpu(np.arange(keys.size, dtype=np.int64))
        torch.cuda.synchronize()
        gpusort.sort_by_key_(wrap(k), wrap(v))
        np.testing.assert_array_equal(to_host(v), expected_order(keys))


def test_stream_order():
    """Work queued before the sort on a non-default stream (a long sleep, then the copy that
    fills the keys) and after it (a clone) runs in order: sorted on another stream, the sort
    would read the keys before the copy and the clone would miss it. And the call does not wait
    for the stream: it is still busy when the call returns."""
    n = 1 << 22
    source = torch.randn(n, device="cuda")
    expected = np.sort(source.cpu().numpy(), kind="stable")
    gpusort.sort(source)  # the context's kernels loaded (the first sort's host work) beforehand
    torch.cuda.synchronize()
    for call in ("sort_", "sort", "argsort", "sort_by_key_"):
        x = torch.zeros(n, device="cuda")
        values = torch.arange(n, device="cuda")
        torch.cuda.synchronize()
        stream = torch.cuda.Stream()
        with torch.cuda.stream(stream):
            torch.cuda._sleep(1_000_000_000)  # ~0.5 s of GPU time on this stream
            x.copy_(source)
            if call == "sort_":
                gpusort.sort_(x)
            elif call == "sort":
                sorted_x = gpusort.sort(x)
            elif call == "argsort":
                order = gpusort.argsort(x)
            else:
                gpusort.sort_by_key_(x, values)
            # Asked before the work queued after the call: PyTorch's advanced indexing (x[order])
            # may wait for the stream itself.
            busy = not stream.query()
            if call == "sort_":
                result = x.clone()
            elif call == "sort":
                result = sorted_x.clone()
            elif call == "argsort":
                result = x[order]
            else:
                result = source[values]
        stream.synchronize()
        np.testing.assert_array_equal(result.cpu().numpy(), expected, err_msg=call)
        assert busy, f"{call} waited for its stream"


def test_sizes_below_the_block_limit_and_empty():
    for dtype in (torch.float32, torch.int64):
        x = torch.empty(0, dtype=dtype, device="cuda")
        assert gpusort.sort(x).numel() == 0 and gpusort.argsort(x).numel() == 0
        assert gpusort.sort_(x) is x


def test_autograd_sees_in_place_sorts():
    x = torch.randn(1000, device="cuda")
    version = x._version
    gpusort.sort_(x)
    assert x._version > version
    with torch.inference_mode():
        y = torch.randn(1000, device="cuda")
        gpusort.sort_(y)  # inference tensors have no version counter
    assert bool((y[1:] >= y[:-1]).all())


def test_refusals_on_gpu_tensors():
    x = torch.randn(10, device="cuda")
    with pytest.raises(TypeError, match="unsupported array dtype float16"):
        gpusort.sort(x.half())
    with pytest.raises(TypeError, match="unsupported array dtype bfloat16"):
        gpusort.sort(x.bfloat16())
    with pytest.raises(ValueError, match="must be 1-D"):
        gpusort.sort(x.reshape(2, 5))
    with pytest.raises(ValueError, match="requires grad"):
        gpusort.sort_(x.clone().requires_grad_())
    with pytest.raises(TypeError, match="must both be GPU arrays or both host arrays"):
        gpusort.sort_by_key(x, torch.arange(10))


# ---- top-k ----

TORCH_SORTS = {np.dtype(np.int32), np.dtype(np.int64), np.dtype(np.float32),
               np.dtype(np.float64)}


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("largest", [False, True], ids=["smallest", "largest"])
def test_topk(rng, dtype, largest):
    """gpusort.topk of a tensor: the first k of the stable sort (NumPy's, and torch.sort's with
    stable=True where torch sorts the dtype), keys bit for bit, int64 indices."""
    for n in [0, 1, 3, 100, 4097, 70_000, 1 << 20]:
        for distribution in DISTRIBUTIONS if n < (1 << 20) else ["uniform", "special"]:
            keys = make_keys(rng, dtype, n, distribution)
            order = expected_order(keys, largest)
            x = to_gpu(keys)
            torch_order = None
            # torch.sort's own order of NaNs of either sign is not promised: compared with it
            # on the other keys.
            if np.dtype(dtype) in TORCH_SORTS and (distribution != "special"
                                                   or np.dtype(dtype).kind != "f"):
                torch_order = to_host(torch.sort(x, descending=largest, stable=True)[1])
                np.testing.assert_array_equal(torch_order, order)  # the reference agrees
            for k in topk_ks(n):
                where = f"n={n} k={k} {distribution}"
                top, indices = gpusort.topk(x, k, largest=largest, return_indices=True)
                assert isinstance(top, torch.Tensor) and top.device == x.device, where
                assert indices.dtype == torch.int64 and indices.shape == (k,), where
                assert_bits_equal(to_host(top), keys[order[:k]])
                np.testing.assert_array_equal(to_host(indices), order[:k], err_msg=where)
                if torch_order is not None:
                    np.testing.assert_array_equal(to_host(indices), torch_order[:k],
                                                  err_msg=where)
                assert_bits_equal(to_host(gpusort.topk(x, k, largest=largest)), keys[order[:k]])
            assert_bits_equal(to_host(x), keys)  # the input is left as it was


def test_topk_values_index_dtypes_orders_and_bits(rng):
    keys = make_keys(rng, np.float32, 300_000, "special")
    x = to_gpu(keys)
    for largest in (False, True):
        order = expected_order(keys, largest)
        for values in (rng.standard_normal(keys.size).astype(np.float32),
                       rng.integers(0, 1 << 40, keys.size)):
            top, v, i = gpusort.topk(x, 5000, largest=largest, values=to_gpu(values),
                                     return_indices=True, dtype=torch.uint32)
            assert i.dtype == torch.uint32
            assert_bits_equal(to_host(top), keys[order[:5000]])
            np.testing.assert_array_equal(to_host(v), values[order[:5000]])
            np.testing.assert_array_equal(to_host(i).astype(np.int64), order[:5000])
        total = expected_order(keys, largest, total_order=True)
        assert_bits_equal(to_host(gpusort.topk(x, 777, largest=largest, total_order=True)),
                          keys[total[:777]])
    ints = make_keys(rng, np.int64, 200_000, "uniform")
    for bits in [(0, 8), (4, 13), (50, 64)]:
        order = expected_order(ints, bits=bits)
        _, i = gpusort.topk(to_gpu(ints), 3000, begin_bit=bits[0], end_bit=bits[1],
                            return_indices=True)
        np.testing.assert_array_equal(to_host(i), order[:3000])
    # Strided: the top-k of the view, positions in it.
    base = to_gpu(ints)
    np.testing.assert_array_equal(to_host(gpusort.topk(base[::3], 100, return_indices=True)[1]),
                                  np.argsort(ints[::3], kind="stable")[:100])


def test_topk_stream_order():
    """Work queued before the top-k on a non-default stream and after it runs in order, and the
    call does not wait for the stream."""
    n = 1 << 22
    source = torch.randn(n, device="cuda")
    expected = np.sort(source.cpu().numpy(), kind="stable")[::-1][:1000]
    gpusort.topk(source, 1000)  # the context's kernels loaded beforehand
    torch.cuda.synchronize()
    x = torch.zeros(n, device="cuda")
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        torch.cuda._sleep(1_000_000_000)
        x.copy_(source)
        top, indices = gpusort.topk(x, 1000, largest=True, return_indices=True)
        busy = not stream.query()
        result = top.clone()
    stream.synchronize()
    np.testing.assert_array_equal(result.cpu().numpy(), expected)
    assert busy, "topk waited for its stream"


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int64, np.float64])
def test_topk_rows(rng, dtype):
    """A 2-D tensor: each row's top-k, as torch.topk along the last dimension and as the host's
    rows (NumPy's stable sort per row), positions within the row; values of the same shape.
    Rows of up to 16384 keys take the shared-memory select, longer ones the block's radix select
    (k up to 1024) or the segmented argsort."""
    for rows, length in ((1, 1000), (300, 100), (32768 // 64, 64), (3, 40000)):
        keys = make_keys(rng, dtype, rows * length, "uniform").reshape(rows, length)
        x = to_gpu(keys)
        order = np.argsort(keys, axis=1, kind="stable")
        for k in (1, 7, length, length + 3):
            top, indices = gpusort.topk(x, k, return_indices=True)
            assert top.shape == (rows, min(k, length)) and indices.dtype == torch.int64
            np.testing.assert_array_equal(indices.cpu().numpy(), order[:, :k])
            assert_bits_equal(to_host(top), np.take_along_axis(keys, order[:, :k], 1))
        payload = np.arange(rows * length, dtype=np.float64).reshape(rows, length)
        top, values = gpusort.topk(x, 5, largest=True, values=to_gpu(payload))
        want_top, want_values = gpusort.topk(keys, 5, largest=True, values=payload)  # the host's
        assert_bits_equal(to_host(top), want_top)
        np.testing.assert_array_equal(values.cpu().numpy(), want_values)


def test_topk_refusals_on_gpu_tensors():
    x = torch.randn(10, device="cuda")
    with pytest.raises(ValueError, match="k = 11 is not within 0 to the 10 keys"):
        gpusort.topk(x, 11)
    with pytest.raises(ValueError, match="must be 1-D"):
        gpusort.topk(x.reshape(1, 2, 5), 1)
    with pytest.raises(TypeError, match="must both be GPU arrays or both host arrays"):
        gpusort.topk(x, 2, values=np.arange(10))
