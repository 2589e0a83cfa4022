"""GPU arrays without a GPU: how gpusort reads DLPack capsules and __cuda_array_interface__, which
arrays it sends to the host path, and every refusal, through small fake producers (ctypes-made
DLPack capsules at made-up device addresses). None of these reaches a GPU: the checks come
before any sort (and the one test that reaches the driver runs only where there is none)."""

import ctypes

import numpy as np
import pytest

import gpusort
from gpusort import _core, _device


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_NAMES = {name: ctypes.create_string_buffer(name) for name in
          (b"dltensor", b"dltensor_versioned", b"used_dltensor")}

CUDA, CPU, CUDA_HOST, VULKAN, ROCM = 2, 1, 3, 7, 10
INT, UINT, FLOAT, BFLOAT, COMPLEX, BOOL = 0, 1, 2, 4, 5, 6
ADDRESS = 0x7f0000010000  # never dereferenced


class FakeDLPack:
    """A DLPack producer: a capsule (no deleter) describing memory at a made-up address."""

    def __init__(self, n=8, code=FLOAT, bits=32, lanes=1, device=(CUDA, 0), shape=None,
                 strides=None, byte_offset=0, versioned=True, read_only=False, major=1,
                 name=None, old_signature=False, data=ADDRESS):
        self.shape = (n,) if shape is None else shape
        self.kw = dict(code=code, bits=bits, lanes=lanes, device=device, strides=strides,
                       byte_offset=byte_offset, versioned=versioned, read_only=read_only,
                       major=major, name=name, data=data)
        self.calls = []
        self.old_signature = old_signature
        self.keep = []

    def __dlpack_device__(self):
        return self.kw["device"]

    def __dlpack__(self, stream=None, max_version=None, **kwargs):
        if self.old_signature and max_version is not None:
            raise TypeError("__dlpack__() got an unexpected keyword argument 'max_version'")
        self.calls.append(dict(stream=stream, max_version=max_version))
        k = self.kw
        shape = (ctypes.c_int64 * len(self.shape))(*self.shape)
        strides = None if k["strides"] is None else (ctypes.c_int64 * len(k["strides"]))(
            *k["strides"])
        tensor = DLTensor(k["data"], DLDevice(*k["device"]), len(self.shape),
                          DLDataType(k["code"], k["bits"], k["lanes"]), shape,
                          strides if strides is not None else None, k["byte_offset"])
        versioned = k["versioned"] and max_version is not None
        if versioned:
            managed = DLManagedTensorVersioned(DLPackVersion(k["major"], 0), None, None,
                                               1 if k["read_only"] else 0, tensor)
        else:
            managed = DLManagedTensor(tensor, None, None)
        self.keep += [shape, strides, managed]
        name = k["name"] or (b"dltensor_versioned" if versioned else b"dltensor")
        return _capsule_new(ctypes.addressof(managed), _NAMES[name], None)


class FakeInterface:
    """A __cuda_array_interface__ producer."""

    def __init__(self, n=8, typestr="<f4", strides=None, readonly=False, stream=None,
                 version=3, mask=None, shape=None):
        self.__cuda_array_interface__ = dict(
            shape=(n,) if shape is None else shape, typestr=typestr, data=(ADDRESS, readonly),
            strides=strides, version=version, mask=mask)
        if version >= 3:
            self.__cuda_array_interface__["stream"] = stream


class HostDLPack:
    """An array in host memory that offers DLPack (a CPU tensor, say) and __array__."""

    def __init__(self, array, device=(CPU, 0)):
        self.array = array
        self.device = device

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__()

    def __array__(self, dtype=None, copy=None):
        return self.array if dtype is None else self.array.astype(dtype)


# ---- reading ----

def test_dlpack_versioned_is_read_without_consuming():
    fake = FakeDLPack(n=1000, byte_offset=64)
    a = _device.read(fake)
    assert (a.ptr, a.n, a.dtype, a.stride, a.readonly, a.device, a.stream, a.lib, a.source) == (
        ADDRESS + 64, 1000, np.dtype(np.float32), 1, False, 0, 0, None, "dlpack")
    # The legacy default stream, DLPack's 1, and DLPack 1.0 asked for.
    assert fake.calls == [dict(stream=1, max_version=(1, 0))]
    assert a.contiguous and a.nbytes == 4000


@pytest.mark.parametrize("code,bits,dtype", [(INT, 32, np.int32), (UINT, 32, np.uint32),
                                             (FLOAT, 32, np.float32), (INT, 64, np.int64),
                                             (UINT, 64, np.uint64), (FLOAT, 64, np.float64)])
def test_dlpack_dtypes(code, bits, dtype):
    assert _device.read(FakeDLPack(code=code, bits=bits)).dtype == np.dtype(dtype)


def test_dlpack_unversioned_producer_and_old_signature():
    a = _device.read(FakeDLPack(versioned=False, n=5, strides=(3,)))
    assert (a.n, a.stride, a.contiguous) == (5, 3, False)
    old = FakeDLPack(old_signature=True)
    assert _device.read(old).ptr == ADDRESS
    assert old.calls == [dict(stream=1, max_version=None)]


def test_dlpack_read_only_flag():
    a = _device.read(FakeDLPack(read_only=True))
    assert a.readonly
    with pytest.raises(ValueError, match=r"read-only; sort\(\) returns a sorted copy"):
        gpusort.sort_(FakeDLPack(read_only=True))


def test_dlpack_refusals():
    with pytest.raises(TypeError, match=r"DLPack 2\.0 tensor"):
        _device.read(FakeDLPack(major=2))
    with pytest.raises(TypeError, match="capsule named 'used_dltensor'"):
        _device.read(FakeDLPack(name=b"used_dltensor"))
    with pytest.raises(TypeError, match="on DLPack device kDLROCM 1: gpusort sorts arrays in "
                                        "host memory and on CUDA devices"):
        gpusort.sort(FakeDLPack(device=(ROCM, 1)))
    with pytest.raises(TypeError, match="kDLVulkan"):
        gpusort.argsort(FakeDLPack(device=(VULKAN, 0)))
    with pytest.raises(ValueError, match="must be 1-D, not a 2-d"):
        gpusort.sort_(FakeDLPack(shape=(2, 4)))
    with pytest.raises(TypeError, match="a 0-d"):
        gpusort.sort_(FakeDLPack(shape=()))


@pytest.mark.parametrize("code,bits,lanes,name", [
    (FLOAT, 16, 1, "float16"), (BFLOAT, 16, 1, "bfloat16"), (BOOL, 8, 1, "bool"),
    (INT, 16, 1, "int16"), (FLOAT, 32, 2, "float32x2"), (COMPLEX, 64, 1, "complex64")])
def test_dlpack_unsupported_key_dtypes(code, bits, lanes, name):
    with pytest.raises(TypeError, match=f"unsupported array dtype {name} of a "):
        gpusort.sort_(FakeDLPack(code=code, bits=bits, lanes=lanes))


def test_interface_is_read():
    a = _device.read(FakeInterface(n=6, typestr="<i8", strides=(16,), stream=7))
    assert (a.ptr, a.n, a.dtype, a.stride, a.stream, a.source, a.lib) == (
        ADDRESS, 6, np.dtype(np.int64), 2, 7, "cuda_array_interface", None)
    # The interface's stream 1 is the legacy default stream; none (or version 2): the same.
    assert _device.read(FakeInterface(stream=1)).stream == 0
    assert _device.read(FakeInterface(stream=None)).stream == 0
    assert _device.read(FakeInterface(version=2)).stream == 0
    assert _device.read(FakeInterface(readonly=True)).readonly


def test_interface_refusals():
    with pytest.raises(ValueError, match="masked"):
        gpusort.sort_(FakeInterface(mask=object()))
    with pytest.raises(TypeError, match="unsupported array dtype >f4"):
        gpusort.sort_(FakeInterface(typestr=">f4"))
    with pytest.raises(TypeError, match="unsupported array dtype float16"):
        gpusort.sort_(FakeInterface(typestr="<f2"))
    with pytest.raises(ValueError, match="is read-only"):
        gpusort.sort_(FakeInterface(readonly=True))
    with pytest.raises(ValueError, match="stride that is not a whole number of elements"):
        gpusort.sort_(FakeInterface(strides=(6,)))
    with pytest.raises(ValueError, match="must be 1-D"):
        gpusort.sort_(FakeInterface(shape=(2, 3)))


# ---- routing ----

def test_host_arrays_take_the_host_path(rng):
    keys = rng.standard_normal(1000).astype(np.float32)
    assert _device.read(keys) is None
    for device in [(CPU, 0), (CUDA_HOST, 0)]:
        wrapped = HostDLPack(keys, device)
        assert _device.read(wrapped) is None
        np.testing.assert_array_equal(gpusort.sort(wrapped), np.sort(keys, kind="stable"))
        np.testing.assert_array_equal(gpusort.argsort(wrapped),
                                      np.argsort(keys, kind="stable"))
    # Lists and scalars as before.
    np.testing.assert_array_equal(gpusort.sort([3, 1, 2]), [1, 2, 3])


def test_sort_return_indices_on_the_host(rng):
    keys = rng.integers(0, 50, 3000).astype(np.int32)
    values, indices = gpusort.sort(keys, return_indices=True, descending=True)
    expected = np.argsort(-keys.astype(np.int64), kind="stable")
    np.testing.assert_array_equal(indices, expected)
    np.testing.assert_array_equal(values, keys[expected])
    assert indices.dtype == np.int64
    with pytest.raises(TypeError, match="out= and return_indices"):
        gpusort.sort(keys, out=np.empty_like(keys), return_indices=True)


def test_gpu_and_host_arrays_do_not_mix():
    with pytest.raises(TypeError, match="must both be GPU arrays or both host arrays"):
        gpusort.sort_by_key(FakeDLPack(), np.arange(8, dtype=np.int64))
    with pytest.raises(TypeError, match="must both be GPU arrays or both host arrays"):
        gpusort.sort_by_key_(np.zeros(8, np.float32), FakeInterface())
    with pytest.raises(TypeError, match="out must be a GPU array like a"):
        gpusort.sort(FakeDLPack(), out=np.zeros(8, np.float32))
    with pytest.raises(TypeError, match="out is a GPU array but a is a host array"):
        gpusort.sort(np.zeros(8, np.float32), out=FakeDLPack())


def test_gpu_argument_refusals():
    with pytest.raises(ValueError, match="algorithm='onesweep' applies to host arrays"):
        gpusort.sort_(FakeDLPack(), algorithm="onesweep")
    with pytest.raises(ValueError, match="select bits of IEEE totalOrder"):
        gpusort.sort_(FakeDLPack(), begin_bit=0, end_bit=16)
    with pytest.raises(ValueError, match=r"bits \[0, 40\) are not a range"):
        gpusort.sort_(FakeDLPack(code=INT), begin_bit=0, end_bit=40)
    with pytest.raises(TypeError, match="descending must be True or False"):
        gpusort.sort_(FakeDLPack(), descending=1)
    with pytest.raises(TypeError, match="argsort dtype must be int64, int32 or uint32"):
        gpusort.argsort(FakeDLPack(), dtype=np.float32)
    with pytest.raises(ValueError, match="8 keys but 7 values"):
        gpusort.sort_by_key_(FakeDLPack(), FakeDLPack(n=7, code=INT, bits=64, data=ADDRESS * 2))
    with pytest.raises(ValueError, match="share memory"):
        gpusort.sort_by_key_(FakeDLPack(), FakeDLPack(code=INT, bits=32, byte_offset=16))
    with pytest.raises(TypeError, match="unsupported values dtype float16"):
        gpusort.sort_by_key_(FakeDLPack(), FakeDLPack(bits=16, data=ADDRESS * 2))


def test_unknown_producers_are_sorted_in_place_only():
    for call in (gpusort.sort, gpusort.argsort):
        with pytest.raises(TypeError, match=r"needs arrays made by its library, which gpusort "
                                            r"does not know \(it knows torch, cupy and numba\)"):
            call(FakeDLPack())
    with pytest.raises(TypeError, match="needs arrays made by its library"):
        gpusort.sort_by_key(FakeDLPack(), FakeDLPack(code=INT, data=ADDRESS * 2))
    # A strided one needs a contiguous copy, which only its library can make.
    with pytest.raises(TypeError, match="needs arrays made by its library"):
        gpusort.sort_(FakeDLPack(strides=(2,)))


def test_jax_arrays_are_refused():
    JaxArray = type("ArrayImpl", (FakeDLPack,), {"__module__": "jaxlib.xla_extension"})
    with pytest.raises(TypeError, match="JAX arrays on the GPU are immutable"):
        gpusort.sort(JaxArray())


@pytest.mark.skipif(not _core.cuda_unavailable_why(), reason="a CUDA driver is present")
def test_no_driver_is_one_line():
    why = _core.cuda_unavailable_why()
    for call in (lambda: gpusort.sort_(FakeDLPack()), lambda: gpusort.sort_(FakeInterface()),
                 lambda: gpusort.sort_by_key_(FakeDLPack(),
                                              FakeDLPack(code=UINT, data=ADDRESS * 2))):
        with pytest.raises(gpusort.Error) as raised:
            call()
        message = str(raised.value)
        assert message.startswith("gpusort: cannot sort a ") and message.endswith(why)
        assert "\n" not in message
    # Empty arrays too: the driver is checked first.
    with pytest.raises(gpusort.Error, match="cannot sort a "):
        gpusort.sort_(FakeDLPack(n=0))


# ---- the PyTorch path, end to end, with a fake torch in host memory ----

class FakeDtype:
    def __init__(self, name):
        self.name = name

    def __str__(self):
        return f"torch.{self.name}"


class FakeDevice:
    type, index = "cuda", 0


class FakeTensor:
    """A torch.Tensor on "cuda" as gpusort reads it, its memory a NumPy array."""

    is_cuda = True

    def __init__(self, array):
        self.a = array
        self.device = FakeDevice()
        self.dtype = FakeTorch.dtypes[array.dtype.name]
        self.requires_grad = False

    @property
    def shape(self):
        return self.a.shape

    @property
    def ndim(self):
        return self.a.ndim

    def reshape(self, *shape):
        return FakeTensor(self.a.reshape(*shape))  # a view where NumPy's is, as torch's

    def stride(self, d):
        return self.a.strides[d] // self.a.itemsize

    def get_device(self):
        return self.device.index

    def data_ptr(self):
        return self.a.__array_interface__["data"][0]

    def is_inference(self):
        return False

    def clone(self, memory_format=None):
        return FakeTensor(np.array(self.a, order="C", copy=True))

    def copy_(self, source):
        self.a[...] = source.a
        return self


FakeTensor.__module__ = "faketorch"


class FakeTorch:
    dtypes = {name: FakeDtype(name) for name in
              ("uint32", "int32", "float32", "uint64", "int64", "float64", "uint8", "float16")}
    contiguous_format = None
    STREAM = 0x5EED

    written = []

    def __getattr__(self, name):
        try:
            return self.dtypes[name]
        except KeyError:
            raise AttributeError(name) from None

    class autograd:  # noqa: N801
        class graph:  # noqa: N801
            increment_version = staticmethod(lambda t: FakeTorch.written.append(t))

    def empty(self, n, dtype, device):
        return FakeTensor(np.empty(n, dtype=dtype.name))

    class cuda:  # noqa: N801
        current_device = staticmethod(lambda: 0)

    class _C:  # noqa: N801
        _cuda_getCurrentRawStream = staticmethod(lambda index: FakeTorch.STREAM)


def _host_view(address, n, dtype):
    dtype = np.dtype(dtype)
    return np.frombuffer((ctypes.c_char * (n * dtype.itemsize)).from_address(address), dtype)


@pytest.fixture
def fake_torch(monkeypatch):
    """The CUDA face replaced by gpusort's host sort of the same memory (on the default Vulkan
    device), every argument the package passes checked on the way."""
    monkeypatch.setitem(_device._libraries, "faketorch", _device._Torch(FakeTorch()))
    monkeypatch.setattr(_device, "_driver_why", "")
    scratch = {}
    key_dtypes = {v: k for k, v in _device._KEY_TYPES.items()}

    def take_scratch(address, nbytes, need):
        assert nbytes == need and (need == 0) == (address == 0)
        scratch["bytes"] = scratch.get("bytes", 0) + need

    def cuda_sort(key_type, keys, values, value_bytes, n, stream, descending, begin_bit, end_bit,
                  numpy_order, keys_in, address, nbytes):
        assert stream == FakeTorch.STREAM
        take_scratch(address, nbytes, _core.cuda_scratch_bytes(
            key_type, value_bytes, n, descending, begin_bit, end_bit, numpy_order, keys_in != 0))
        k = _host_view(keys, n, key_dtypes[key_type])
        if keys_in:
            assert not values
            k[...] = _host_view(keys_in, n, k.dtype)
        kw = dict(descending=descending, total_order=not numpy_order,
                  begin_bit=begin_bit if end_bit else None, end_bit=end_bit or None)
        if values:
            gpusort.sort_by_key_(k, _host_view(values, n, f"u{value_bytes}"), **kw)
        else:
            gpusort.sort_(k, **kw)

    def cuda_argsort(key_type, keys, indices, index_bytes, n, stream, descending, begin_bit,
                     end_bit, numpy_order, sorted_keys, address, nbytes):
        assert stream == FakeTorch.STREAM
        take_scratch(address, nbytes, _core.cuda_argsort_scratch_bytes(
            key_type, index_bytes, n, descending, begin_bit, end_bit, numpy_order,
            sorted_keys != 0))
        k = _host_view(keys, n, key_dtypes[key_type])
        order = gpusort.argsort(k, descending=descending, total_order=not numpy_order,
                                begin_bit=begin_bit if end_bit else None,
                                end_bit=end_bit or None)
        _host_view(indices, n, f"u{index_bytes}")[...] = order
        if sorted_keys:
            _host_view(sorted_keys, n, k.dtype)[...] = k[order]

    def cuda_topk(key_type, keys, n, k, keys_out, values, values_out, value_bytes, indices,
                  index_bytes, stream, descending, begin_bit, end_bit, numpy_order, address,
                  nbytes):
        assert stream == FakeTorch.STREAM and 0 < k <= n and keys_out
        assert (values == 0) == (values_out == 0) == (value_bytes == 0)
        assert index_bytes in (4, 8)
        take_scratch(address, nbytes, _core.cuda_topk_scratch_bytes(
            key_type, n, k, descending, begin_bit, end_bit, numpy_order))
        kd = _host_view(keys, n, key_dtypes[key_type])
        kw = dict(largest=descending, total_order=not numpy_order, return_indices=True,
                  begin_bit=begin_bit if end_bit else None, end_bit=end_bit or None)
        if values:
            r_keys, r_values, r_indices = gpusort.topk(
                kd, k, values=_host_view(values, n, f"u{value_bytes}"), **kw)
            _host_view(values_out, k, f"u{value_bytes}")[...] = r_values
        else:
            r_keys, r_indices = gpusort.topk(kd, k, **kw)
        _host_view(keys_out, k, kd.dtype)[...] = r_keys
        if indices:
            _host_view(indices, k, f"u{index_bytes}")[...] = r_indices
        fake_topk_calls.append(dict(k=k, indices=bool(indices), index_bytes=index_bytes))

    def cuda_topk_rows(key_type, keys, rows, length, k, keys_out, values, values_out,
                       value_bytes, indices, index_bytes, stream, descending, begin_bit, end_bit,
                       numpy_order, address, nbytes):
        assert stream == FakeTorch.STREAM and k > 0 and rows * length > 0 and keys_out
        assert (values == 0) == (values_out == 0) == (value_bytes == 0)
        take_scratch(address, nbytes, _core.cuda_topk_rows_scratch_bytes(
            key_type, rows, length, k, descending, begin_bit, end_bit, numpy_order))
        kd = _host_view(keys, rows * length, key_dtypes[key_type]).reshape(rows, length)
        kw = dict(largest=descending, total_order=not numpy_order, return_indices=True,
                  begin_bit=begin_bit if end_bit else None, end_bit=end_bit or None)
        results = rows * min(k, length)
        if values:
            r_keys, r_values, r_indices = gpusort.topk(
                kd, k, values=_host_view(values, rows * length, f"u{value_bytes}").reshape(
                    rows, length), **kw)
            _host_view(values_out, results, f"u{value_bytes}")[...] = r_values.reshape(-1)
        else:
            r_keys, r_indices = gpusort.topk(kd, k, **kw)
        _host_view(keys_out, results, kd.dtype)[...] = r_keys.reshape(-1)
        if indices:
            _host_view(indices, results, f"u{index_bytes}")[...] = r_indices.reshape(-1)
        fake_topk_calls.append(dict(k=k, rows=rows, indices=bool(indices)))

    def segmented_offsets(offsets, offset_bytes, segments):
        return _host_view(offsets, segments + 1, f"u{offset_bytes}").copy()

    def cuda_segmented_sort(key_type, keys, values, value_bytes, n, offsets, offset_bytes,
                            segments, stream, descending, begin_bit, end_bit, numpy_order,
                            address, nbytes):
        assert stream == FakeTorch.STREAM
        take_scratch(address, nbytes, _core.cuda_segmented_scratch_bytes(
            key_type, value_bytes, 0, n, segments, descending, begin_bit, end_bit, numpy_order))
        k = _host_view(keys, n, key_dtypes[key_type])
        kw = dict(descending=descending, total_order=not numpy_order,
                  begin_bit=begin_bit if end_bit else None, end_bit=end_bit or None,
                  segments=segmented_offsets(offsets, offset_bytes, segments))
        if values:
            gpusort.sort_by_key_(k, _host_view(values, n, f"u{value_bytes}"), **kw)
        else:
            gpusort.sort_(k, **kw)
        fake_segmented_calls.append(dict(segments=segments, offset_bytes=offset_bytes))

    def cuda_segmented_argsort(key_type, keys, indices, index_bytes, n, offsets, offset_bytes,
                               segments, stream, descending, begin_bit, end_bit, numpy_order,
                               address, nbytes):
        assert stream == FakeTorch.STREAM
        take_scratch(address, nbytes, _core.cuda_segmented_scratch_bytes(
            key_type, 0, index_bytes, n, segments, descending, begin_bit, end_bit, numpy_order))
        k = _host_view(keys, n, key_dtypes[key_type])
        _host_view(indices, n, f"u{index_bytes}")[...] = gpusort.argsort(
            k, descending=descending, total_order=not numpy_order,
            begin_bit=begin_bit if end_bit else None, end_bit=end_bit or None,
            segments=segmented_offsets(offsets, offset_bytes, segments))
        fake_segmented_calls.append(dict(segments=segments, offset_bytes=offset_bytes))

    fake_topk_calls.clear()
    fake_segmented_calls.clear()
    monkeypatch.setattr(_core, "cuda_segmented_sort", cuda_segmented_sort)
    monkeypatch.setattr(_core, "cuda_segmented_argsort", cuda_segmented_argsort)
    monkeypatch.setattr(_core, "cuda_sort", cuda_sort)
    monkeypatch.setattr(_core, "cuda_argsort", cuda_argsort)
    monkeypatch.setattr(_core, "cuda_topk", cuda_topk)
    monkeypatch.setattr(_core, "cuda_topk_rows", cuda_topk_rows)
    return scratch


fake_topk_calls = []
fake_segmented_calls = []


@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint32, np.float64])
def test_torch_path_end_to_end(fake_torch, rng, dtype):
    keys = (rng.standard_normal(5000) * 100).astype(dtype)
    if keys.dtype.kind == "f":
        keys[::7] = np.nan
        keys[::11] = -0.0
    order = np.argsort(keys, kind="stable")
    expected = keys[order]
    x = FakeTensor(keys.copy())
    result = gpusort.sort(x)
    assert isinstance(result, FakeTensor) and result.a is not x.a
    np.testing.assert_array_equal(result.a.view(f"u{keys.itemsize}"),
                                  expected.view(f"u{keys.itemsize}"))
    np.testing.assert_array_equal(x.a, keys)
    indices = gpusort.argsort(x)
    assert indices.a.dtype == np.int64
    np.testing.assert_array_equal(indices.a, order)
    np.testing.assert_array_equal(gpusort.argsort(x, dtype=FakeTorch.dtypes["int32"]).a, order)
    values, indices = gpusort.sort(x, return_indices=True, descending=True)
    down = np.argsort(-np.searchsorted(np.unique(keys), keys), kind="stable")
    np.testing.assert_array_equal(indices.a, down)
    np.testing.assert_array_equal(values.a, keys[down])
    payload = FakeTensor(np.arange(keys.size, dtype=np.int64))
    k, v = gpusort.sort_by_key(x, payload)
    np.testing.assert_array_equal(v.a, order)
    np.testing.assert_array_equal(payload.a, np.arange(keys.size))
    # Strided: sorted in a contiguous copy, written back through the view.
    base = FakeTensor(keys.copy())
    view = FakeTensor(base.a[::2])
    assert gpusort.sort_(view) is view
    np.testing.assert_array_equal(base.a[::2], np.sort(keys[::2], kind="stable"))
    np.testing.assert_array_equal(base.a[1::2], keys[1::2])
    out = FakeTensor(np.empty_like(keys))
    assert gpusort.sort(x, out=out) is out
    np.testing.assert_array_equal(out.a, expected)
    FakeTorch.written.clear()
    assert gpusort.sort_(x) is x
    np.testing.assert_array_equal(x.a, expected)
    assert FakeTorch.written == [x]  # autograd told, as by torch's own in-place operations
    assert fake_torch["bytes"] > 0  # scratch came from the tensor's library


def test_torch_path_bits_and_refusals(fake_torch, rng):
    keys = rng.integers(0, 1 << 20, 3000).astype(np.uint32)
    x = FakeTensor(keys.copy())
    low = keys & 0xFF
    np.testing.assert_array_equal(gpusort.argsort(x, begin_bit=0, end_bit=8).a,
                                  np.argsort(low, kind="stable"))
    with pytest.raises(TypeError, match="unsupported array dtype float16 of a faketorch"):
        gpusort.sort(FakeTensor(np.zeros(4, np.float16)))
    grad = FakeTensor(keys.copy())
    grad.requires_grad = True
    with pytest.raises(ValueError, match="requires grad"):
        gpusort.sort_(grad)
    with pytest.raises(ValueError, match="must be 1-D"):
        gpusort.sort(FakeTensor(np.zeros((2, 2), np.float32)))


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint64, np.float64])
def test_torch_topk_end_to_end(fake_torch, rng, dtype):
    keys = (rng.standard_normal(5000) * 100).astype(dtype)
    if keys.dtype.kind == "f":
        keys[::7] = np.nan
        keys[::11] = -0.0
    x = FakeTensor(keys.copy())
    order = np.argsort(keys, kind="stable")
    down = np.argsort(-np.searchsorted(np.unique(keys), keys), kind="stable")  # NaNs first
    for k in (1, 32, 1000, 5000):
        top = gpusort.topk(x, k)
        assert isinstance(top, FakeTensor) and top.a.dtype == keys.dtype
        np.testing.assert_array_equal(top.a.view(f"u{keys.itemsize}"),
                                      keys[order[:k]].view(f"u{keys.itemsize}"))
        top, indices = gpusort.topk(x, k, largest=True, return_indices=True)
        assert indices.a.dtype == np.int64  # as torch.topk's
        np.testing.assert_array_equal(indices.a, down[:k])
        np.testing.assert_array_equal(top.a.view(f"u{keys.itemsize}"),
                                      keys[down[:k]].view(f"u{keys.itemsize}"))
    assert fake_topk_calls[-1] == dict(k=5000, indices=True, index_bytes=8)
    payload = FakeTensor(np.arange(keys.size, dtype=np.float32) * 2)
    top, values, indices = gpusort.topk(x, 77, values=payload, return_indices=True,
                                        dtype=np.uint32)
    assert values.a.dtype == np.float32 and indices.a.dtype == np.uint32
    np.testing.assert_array_equal(indices.a, order[:77])
    np.testing.assert_array_equal(values.a, order[:77] * 2.0)
    np.testing.assert_array_equal(x.a.view(np.uint8), keys.view(np.uint8))  # left as it was
    # The library's dtypes name index dtypes too (torch.uint32).
    assert gpusort.topk(x, 3, return_indices=True,
                        dtype=FakeTorch.dtypes["uint32"])[1].a.dtype == np.uint32
    # k = 0: empty results of the tensor's library, no call.
    calls = len(fake_topk_calls)
    top, indices = gpusort.topk(x, 0, return_indices=True)
    assert isinstance(top, FakeTensor) and top.a.shape == (0,) and indices.a.shape == (0,)
    assert len(fake_topk_calls) == calls
    # Strided: the top-k of a contiguous copy; positions within the view.
    view = FakeTensor(keys[::3])
    np.testing.assert_array_equal(gpusort.topk(view, 10, return_indices=True)[1].a,
                                  np.argsort(keys[::3], kind="stable")[:10])
    assert fake_torch["bytes"] > 0  # scratch came from the tensor's library


def test_torch_topk_bits_and_refusals(fake_torch, rng):
    keys = rng.integers(0, 1 << 20, 3000).astype(np.uint32)
    x = FakeTensor(keys.copy())
    np.testing.assert_array_equal(
        gpusort.topk(x, 50, begin_bit=0, end_bit=8, return_indices=True)[1].a,
        np.argsort(keys & 0xFF, kind="stable")[:50])
    with pytest.raises(ValueError, match="k = 3001 is not within 0 to the 3000 keys"):
        gpusort.topk(x, 3001)
    with pytest.raises(ValueError, match="k = -1 is not within"):
        gpusort.topk(x, -1)
    with pytest.raises(TypeError, match="k must be an integer"):
        gpusort.topk(x, 2.0)
    with pytest.raises(TypeError, match="largest must be True or False"):
        gpusort.topk(x, 2, largest=1)
    with pytest.raises(TypeError, match="topk dtype must be int64 or uint32"):
        gpusort.topk(x, 2, return_indices=True, dtype=np.int32)
    with pytest.raises(ValueError, match="segments= takes host arrays"):
        gpusort.topk(x, 2, segments=np.array([0, 10, 3000]))
    with pytest.raises(TypeError, match="must both be GPU arrays or both host arrays"):
        gpusort.topk(x, 2, values=np.zeros(3000, np.float32))
    with pytest.raises(ValueError, match="3000 keys but 5 values"):
        gpusort.topk(x, 2, values=FakeTensor(np.zeros(5, np.float32)))
    with pytest.raises(ValueError, match="algorithm='onesweep' applies to host arrays"):
        gpusort.topk(x, 2, algorithm="onesweep")
    with pytest.raises(ValueError, match="select bits of IEEE totalOrder"):
        gpusort.topk(FakeTensor(np.zeros(8, np.float32)), 2, begin_bit=0, end_bit=16)
    with pytest.raises(ValueError, match="must be 1-D"):
        gpusort.topk(FakeTensor(np.zeros((2, 2, 2), np.float32)), 1)
    with pytest.raises(ValueError, match="values of shape \\(3, 4\\) for keys of shape \\(4, 3\\)"):
        gpusort.topk(FakeTensor(np.zeros((4, 3), np.float32)), 1,
                     values=FakeTensor(np.zeros((3, 4), np.float32)))
    with pytest.raises(ValueError, match="segments= takes a 1-D array"):
        gpusort.topk(FakeTensor(np.zeros((4, 3), np.float32)), 1, segments=np.array([0, 12]))
    assert fake_topk_calls == [dict(k=50, indices=True, index_bytes=8)]


@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_torch_topk_rows(fake_torch, rng, dtype):
    """A 2-D tensor: each row's top-k (as torch.topk along the last dimension), results of shape
    (rows, min(k, row length)), positions within the row, through the CUDA face's rows."""
    keys = (rng.standard_normal((50, 300)) * 100).astype(dtype)
    x = FakeTensor(keys.copy())
    for k in (1, 32, 300, 400):
        top, indices = gpusort.topk(x, k, largest=True, return_indices=True)
        want_keys, want_indices = gpusort.topk(keys, k, largest=True, return_indices=True)
        assert isinstance(top, FakeTensor) and top.shape == (50, min(k, 300))
        np.testing.assert_array_equal(top.a, want_keys)
        np.testing.assert_array_equal(indices.a, want_indices)
        assert fake_topk_calls[-1] == dict(k=k, rows=50, indices=True)
    payload = FakeTensor(np.arange(keys.size, dtype=np.float32).reshape(keys.shape))
    top, values = gpusort.topk(x, 7, values=payload)
    order = np.argsort(keys, axis=1, kind="stable")[:, :7]
    np.testing.assert_array_equal(values.a, np.take_along_axis(payload.a, order, 1))
    # A strided 2-D view: its rows of a contiguous copy.
    view = FakeTensor(keys[:, ::2])
    np.testing.assert_array_equal(gpusort.topk(view, 5).a, np.sort(keys[:, ::2], axis=1)[:, :5])
    # k = 0 and empty rows: no call.
    calls = len(fake_topk_calls)
    assert gpusort.topk(x, 0).shape == (50, 0)
    assert gpusort.topk(FakeTensor(np.zeros((3, 0), dtype)), 2).shape == (3, 0)
    assert len(fake_topk_calls) == calls


@pytest.mark.parametrize("offset_dtype", [np.int64, np.int32, np.uint32])
def test_torch_segments_end_to_end(fake_torch, rng, offset_dtype):
    """segments= of a tensor: the offsets a tensor too, passed to the CUDA face's segmented sort
    and argsort on the tensor's stream (here the host sort of the same memory), every form."""
    keys = rng.standard_normal(3000).astype(np.float32)
    keys[::7] = np.nan
    offsets = np.array([0, 0, 100, 100, 1500, 2999, 3000, 3000], dtype=offset_dtype)
    bounds = offsets.astype(np.int64)
    order = np.concatenate([bounds[s] + np.argsort(keys[bounds[s]:bounds[s + 1]], kind="stable")
                            for s in range(len(offsets) - 1)])
    x, o = FakeTensor(keys.copy()), FakeTensor(offsets.copy())
    values = np.arange(3000, dtype=np.uint32) * 7
    np.testing.assert_array_equal(gpusort.argsort(x, segments=o).a, order)
    np.testing.assert_array_equal(gpusort.sort(x, segments=o).a.view(np.uint32),
                                  keys[order].view(np.uint32))
    result, indices = gpusort.sort(x, segments=o, return_indices=True)
    np.testing.assert_array_equal(indices.a, order)
    np.testing.assert_array_equal(result.a.view(np.uint32), keys[order].view(np.uint32))
    k, v = gpusort.sort_by_key(x, FakeTensor(values.copy()), segments=o)
    np.testing.assert_array_equal(v.a, values[order])
    np.testing.assert_array_equal(x.a.view(np.uint32), keys.view(np.uint32))  # not modified
    y, w = FakeTensor(keys.copy()), FakeTensor(values.copy())
    assert gpusort.sort_by_key_(y, w, segments=o) == (y, w)
    np.testing.assert_array_equal(w.a, values[order])
    assert gpusort.sort_(x, segments=o) is x
    np.testing.assert_array_equal(x.a.view(np.uint32), keys[order].view(np.uint32))
    width = np.dtype(offset_dtype).itemsize
    assert fake_segmented_calls == [dict(segments=7, offset_bytes=width)] * 7


def test_torch_segments_refusals(fake_torch):
    x = FakeTensor(np.arange(10, dtype=np.float32))
    with pytest.raises(TypeError, match="must be a GPU array of offsets on its device"):
        gpusort.sort(x, segments=np.array([0, 10]))
    with pytest.raises(TypeError, match="segments must be offsets of 4- or 8-byte integers"):
        gpusort.sort(x, segments=FakeTensor(np.array([0.0, 10.0], np.float32)))
    with pytest.raises(ValueError, match="segments= holds no offsets"):
        gpusort.argsort(x, segments=FakeTensor(np.zeros(0, np.int64)))
    with pytest.raises(ValueError, match="must be 1-D"):
        gpusort.sort(x, segments=FakeTensor(np.zeros((2, 2), np.int64)))
    assert fake_segmented_calls == []
    np.testing.assert_array_equal(x.a, np.arange(10, dtype=np.float32))


def test_topk_of_unknown_producers_needs_their_library():
    with pytest.raises(TypeError, match="topk\\(\\) of a .* needs arrays made by its library"):
        gpusort.topk(FakeDLPack(), 2)


@pytest.mark.skipif(not _core.cuda_unavailable_why(), reason="a CUDA driver is present")
def test_topk_without_driver_is_one_line(monkeypatch):
    monkeypatch.setitem(_device._libraries, "faketorch", _device._Torch(FakeTorch()))
    why = _core.cuda_unavailable_why()
    with pytest.raises(gpusort.Error) as raised:
        gpusort.topk(FakeTensor(np.zeros(8, np.float32)), 2)
    message = str(raised.value)
    assert message.startswith("gpusort: cannot sort a ") and message.endswith(why)
    assert "\n" not in message
