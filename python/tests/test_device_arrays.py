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
