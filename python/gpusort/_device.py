"""gpusort on GPU arrays: where they are, on their stream, through the library's CUDA face.

An array that is not a NumPy array and lives on a CUDA device is read for its device address,
dtype, length, stride and stream:

- a PyTorch tensor (on "cuda") through its own attributes, on torch.cuda.current_stream();
- a CuPy array through its own attributes, on cupy.cuda.get_current_stream();
- anything else with __dlpack__ / __dlpack_device__ (DLPack on device kDLCUDA or kDLCUDAManaged):
  gpusort sorts on the legacy default stream and asks __dlpack__(stream=1) to order the array's
  pending work before it, and the capsule is read without being consumed;
- anything with __cuda_array_interface__ (version 2 or 3; Numba's arrays): its "stream" is the
  one gpusort sorts on (none: the legacy default stream).

The sort is enqueued on that stream and nothing waits for it (to sort on another stream, make it
the library's current one: `with torch.cuda.stream(s):`). Results are
made by the input's own library (PyTorch, CuPy, Numba), which gpusort finds through the input's
type and never imports itself; producers gpusort does not know are sorted in place only.
Arrays on host memory (NumPy, CPU tensors, DLPack kDLCPU / kDLCUDAHost) take the host path.
"""

import contextlib
import sys

import numpy as np

from . import _core

# DLPack's device types (dlpack.h, DLDeviceType).
_DL_CPU, _DL_CUDA, _DL_CUDA_HOST, _DL_CUDA_MANAGED, _DL_ROCM_HOST = 1, 2, 3, 13, 11
_DL_DEVICE_NAMES = {1: "kDLCPU", 2: "kDLCUDA", 3: "kDLCUDAHost", 4: "kDLOpenCL", 7: "kDLVulkan",
                    8: "kDLMetal", 9: "kDLVPI", 10: "kDLROCM", 11: "kDLROCMHost", 12: "kDLExtDev",
                    13: "kDLCUDAManaged", 14: "kDLOneAPI", 15: "kDLWebGPU", 16: "kDLHexagon",
                    17: "kDLMAIA"}
_DL_HOST_DEVICES = (_DL_CPU, _DL_CUDA_HOST, _DL_ROCM_HOST)
_DL_CUDA_DEVICES = (_DL_CUDA, _DL_CUDA_MANAGED)
# DLPack's dtype codes (DLDataTypeCode) as NumPy kinds; bfloat16 (4), opaque handles (3) have none.
_DL_KINDS = {0: "i", 1: "u", 2: "f", 5: "c", 6: "b"}
_DL_CODE_NAMES = {0: "int", 1: "uint", 2: "float", 3: "opaque handle", 4: "bfloat", 5: "complex",
                  6: "bool"}

# The key dtypes and the CUDA face's names for them.
_KEY_TYPES = {np.dtype(np.uint32): "u32", np.dtype(np.int32): "i32", np.dtype(np.float32): "f32",
              np.dtype(np.uint64): "u64", np.dtype(np.int64): "i64", np.dtype(np.float64): "f64"}


class DeviceArray:
    """What gpusort reads of a 1-D GPU array: its device address, length, dtype, element
    stride, whether it may be written, its CUDA device, the stream to sort on, and the library
    that makes arrays like it (None: one gpusort does not know)."""

    __slots__ = ("obj", "ptr", "n", "dtype", "stride", "readonly", "device", "stream", "lib",
                 "keep", "source")

    def __init__(self, obj, ptr, n, dtype, stride, readonly, device, stream, lib, keep, source):
        self.obj, self.ptr, self.n, self.dtype, self.stride = obj, ptr, n, dtype, stride
        self.readonly, self.device, self.stream, self.lib = readonly, device, stream, lib
        self.keep, self.source = keep, source  # the capsule or interface read; "torch", ...

    @property
    def contiguous(self):
        return self.n <= 1 or self.stride == 1

    @property
    def nbytes(self):
        return self.n * self.dtype.itemsize

    def __repr__(self):
        return (f"DeviceArray({type(self.obj).__name__} via {self.source}: 0x{self.ptr:x}, "
                f"n={self.n}, {self.dtype}, stride {self.stride}, device {self.device}, stream "
                f"0x{self.stream:x}{', read-only' if self.readonly else ''})")


def _type_name(obj):
    t = type(obj)
    return f"{t.__module__}.{t.__qualname__}"


def _legacy(handle):
    """The CUstream for a protocol's stream number: DLPack and the interface call the legacy
    default stream 1 (and the per-thread one 2, which the driver takes as it is)."""
    return 0 if handle == 1 else handle


# ---- the libraries that make arrays ----

_NO_GUARD = contextlib.nullcontext()  # reusable

class _Torch:
    name = "torch"

    def __init__(self, torch):
        self.torch = torch
        self.dtypes = {}  # torch dtype -> NumPy's
        self.torch_dtypes = {}  # NumPy dtype -> torch's (np.dtype(...).name costs microseconds)

    def np_dtype(self, tdtype):
        d = self.dtypes.get(tdtype)
        if d is None:
            name = str(tdtype).replace("torch.", "")
            try:
                d = np.dtype(name)
            except TypeError:
                d = name  # bfloat16, float8 ...: no NumPy dtype
            self.dtypes[tdtype] = d
        return d

    def current_stream(self, index):
        raw = getattr(self.torch._C, "_cuda_getCurrentRawStream", None)  # the handle, no object
        if raw is not None:
            return raw(index)
        return self.torch.cuda.current_stream(index).cuda_stream

    def dtype(self, np_dtype):
        t = self.torch_dtypes.get(np_dtype)
        if t is None:
            t = self.torch_dtypes[np_dtype] = getattr(self.torch, np.dtype(np_dtype).name)
        return t

    def read(self, t, stream):
        if not t.is_cuda:
            return None
        ndim = t.ndim
        if ndim != 1:
            _check_shape(t, ndim)
        index = t.get_device()
        if stream is None:
            stream = self.current_stream(index)
        return DeviceArray(t, t.data_ptr(), t.shape[0], self.np_dtype(t.dtype), t.stride(0), False,
                           index, stream, self, None, "torch")

    def empty(self, like, n, dtype):
        return self.torch.empty(n, dtype=self.dtype(dtype), device=like.device)

    def clone(self, a):
        return a.obj.clone(memory_format=self.torch.contiguous_format)

    def copy_into(self, destination, source):
        destination.obj.copy_(source)

    def ptr(self, t):
        return t.data_ptr()

    def guard(self, a):
        current = getattr(self.torch._C, "_cuda_getDevice", None)  # without current_device()'s checks
        if a.device == (current() if current is not None else self.torch.cuda.current_device()):
            return _NO_GUARD
        return self.torch.cuda.device(a.device)

    def writable_why(self, a):
        if a.obj.requires_grad:
            return "requires grad (sort it under torch.no_grad() or sort a detached copy)"
        return None

    def written(self, a):
        """Tells autograd that a tensor was written in place (its version counter), as PyTorch's
        own in-place operations do, so that a use saved for backward sees the change."""
        increment = getattr(getattr(self.torch.autograd, "graph", None), "increment_version", None)
        if increment is not None and not a.obj.is_inference():  # those have no counter
            increment(a.obj)


class _CuPy:
    name = "cupy"

    def __init__(self, cupy):
        self.cupy = cupy

    def read(self, x, stream):
        _check_shape(x, x.ndim)
        n = x.shape[0]
        itemsize = x.dtype.itemsize
        stride = x.strides[0] // itemsize if x.strides[0] % itemsize == 0 else None
        if stream is None:
            stream = self.cupy.cuda.get_current_stream().ptr
        return DeviceArray(x, x.data.ptr, n, x.dtype, stride, False, x.device.id, stream, self,
                           None, "cupy")

    def empty(self, like, n, dtype):
        with like.obj.device:
            return self.cupy.empty(n, dtype=dtype)

    def clone(self, a):
        with a.obj.device:
            return a.obj.copy(order="C")

    def copy_into(self, destination, source):
        destination.obj[...] = source

    def ptr(self, x):
        return x.data.ptr

    def guard(self, a):
        return a.obj.device

    def writable_why(self, a):
        return None


class _Numba:
    name = "numba"

    def __init__(self, numba_cuda):
        self.cuda = numba_cuda

    def empty(self, like, n, dtype):
        return self.cuda.device_array(n, dtype=dtype)

    def clone(self, a):
        if not a.contiguous:
            raise ValueError("gpusort: a strided Numba array is not copied on the GPU; pass "
                             "a contiguous one (numba.cuda.device_array, then copy_to_device)")
        result = self.cuda.device_array(a.n, dtype=a.dtype)
        result.copy_to_device(a.obj)
        return result

    def copy_into(self, destination, source):
        destination.obj.copy_to_device(source)

    def ptr(self, x):
        return x.__cuda_array_interface__["data"][0]

    def guard(self, a):
        return _NO_GUARD

    def writable_why(self, a):
        return None


_libraries = {}


def _library(obj):
    """The adapter of the library obj's type comes from (already imported, since obj exists)."""
    top = type(obj).__module__.partition(".")[0]
    lib = _libraries.get(top, False)
    if lib is False:
        module = sys.modules.get(top)
        lib = None
        if module is not None:
            if top == "torch" and hasattr(module, "Tensor") and isinstance(obj, module.Tensor):
                lib = _Torch(module)
            elif top == "cupy" and hasattr(module, "ndarray") and isinstance(obj, module.ndarray):
                lib = _CuPy(module)
            elif top == "numba":
                import importlib
                lib = _Numba(importlib.import_module("numba.cuda"))  # numba is imported already
        if lib is None and top in ("jax", "jaxlib"):
            lib = "jax"
        _libraries[top] = lib
    return lib


# ---- reading arrays ----

def _check_shape(obj, ndim, what="array"):
    if ndim == 0:
        raise TypeError(f"gpusort: unsupported {what}: a 0-d {_type_name(obj)} "
                        "(1-D arrays only)")
    if ndim != 1:
        raise ValueError(f"gpusort: {what} must be 1-D, not a {ndim}-d {_type_name(obj)} "
                         "(sort a flattened view, or each row)")


def _dlpack_dtype(code, bits, lanes):
    """The NumPy dtype of a DLPack dtype, or its name where NumPy has none (bfloat16, vectors)."""
    kind = _DL_KINDS.get(code)
    name = f"{_DL_CODE_NAMES.get(code, f'code {code}')}{bits}" + (f"x{lanes}" if lanes != 1 else "")
    if kind is None or lanes != 1 or bits % 8:
        return name
    try:
        return np.dtype(f"{kind}{bits // 8}") if kind != "b" else np.dtype(np.bool_)
    except TypeError:
        return name


def _from_dlpack(obj, device_type, device_id, stream, lib):
    handle = 0 if stream is None else stream
    dl_stream = 1 if handle == 0 else handle  # DLPack names the legacy default stream 1
    try:
        capsule = obj.__dlpack__(stream=dl_stream, max_version=(1, 0))
    except TypeError:  # a producer of DLPack before 1.0: no max_version
        capsule = obj.__dlpack__(stream=dl_stream)
    (ptr, dev_type, dev_id, code, bits, lanes, shape, strides, readonly,
     _version) = _core.dlpack_info(capsule)
    if (dev_type, dev_id) != (device_type, device_id):
        raise ValueError(f"gpusort: {_type_name(obj)}'s __dlpack__ says device "
                         f"({dev_type}, {dev_id}) but __dlpack_device__ ({device_type}, "
                         f"{device_id})")
    _check_shape(obj, len(shape))
    n = shape[0]
    stride = 1 if strides is None else strides[0]
    return DeviceArray(obj, ptr, n, _dlpack_dtype(code, bits, lanes), stride, readonly, dev_id,
                       handle, lib, capsule, "dlpack")


def _from_interface(obj, cai, stream, lib):
    if not isinstance(cai, dict):
        raise TypeError(f"gpusort: {_type_name(obj)}.__cuda_array_interface__ is not a dict")
    try:
        shape, typestr, (ptr, readonly) = tuple(cai["shape"]), cai["typestr"], cai["data"]
    except (KeyError, TypeError, ValueError) as e:
        raise TypeError(f"gpusort: {_type_name(obj)}.__cuda_array_interface__ lacks shape, "
                        f"typestr or data (ptr, readonly): {e!r}") from None
    if cai.get("mask") is not None:
        raise ValueError("gpusort: masked __cuda_array_interface__ arrays are not sorted")
    _check_shape(obj, len(shape))
    n = int(shape[0])
    try:
        dtype = np.dtype(typestr)
    except TypeError:
        dtype = str(typestr)
    if isinstance(dtype, np.dtype) and not dtype.isnative and dtype.itemsize > 1:
        dtype = f"{typestr} (byte-swapped)"
    strides = cai.get("strides")
    stride = 1
    if strides is not None and n > 1 and isinstance(dtype, np.dtype):
        stride = strides[0] // dtype.itemsize if strides[0] % dtype.itemsize == 0 else None
    if stream is None:
        s = cai.get("stream")
        stream = 0 if s is None else _legacy(int(s))
    if ptr is None:
        ptr = 0
    device = _device_of_interface(obj)
    return DeviceArray(obj, int(ptr), n, dtype, stride, bool(readonly), device, stream, lib,
                       cai, "cuda_array_interface")


def _device_of_interface(obj):
    """The device of an interface array where its producer says (the interface does not)."""
    dev = getattr(obj, "__dlpack_device__", None)
    if dev is not None:
        return int(dev()[1])
    return None


def read(obj, what="array"):
    """The DeviceArray of a GPU array, or None for the host path (NumPy and what it takes)."""
    if isinstance(obj, np.ndarray) or obj is None:
        return None
    handle = None
    lib = _library(obj)
    if isinstance(lib, (_Torch, _CuPy)):
        return lib.read(obj, handle)
    if lib == "jax" and hasattr(obj, "__dlpack_device__"):
        dev_type, _ = obj.__dlpack_device__()
        if int(dev_type) in _DL_CUDA_DEVICES:
            raise TypeError("gpusort: JAX arrays on the GPU are immutable and JAX orders its "
                            "work on its own streams: convert them (e.g. torch.from_dlpack(x)) "
                            "and sort that, or jax.numpy.sort")
    dl_device = getattr(obj, "__dlpack_device__", None)
    if dl_device is not None and hasattr(obj, "__dlpack__"):
        device_type, device_id = (int(v) for v in dl_device())
        if device_type in _DL_HOST_DEVICES:
            return None
        if device_type not in _DL_CUDA_DEVICES:
            raise TypeError(f"gpusort: {what} is a {_type_name(obj)} on DLPack device "
                            f"{_DL_DEVICE_NAMES.get(device_type, device_type)} {device_id}: "
                            "gpusort sorts arrays in host memory and on CUDA devices")
        return _from_dlpack(obj, device_type, device_id, handle, lib)
    try:
        cai = obj.__cuda_array_interface__
    except AttributeError:
        return None
    return _from_interface(obj, cai, handle, lib)


# ---- checks ----

_driver_why = None


def _check_driver(a):
    global _driver_why
    if _driver_why is None:
        _driver_why = _core.cuda_unavailable_why()
    if _driver_why:
        raise _core.Error(f"gpusort: cannot sort a {_type_name(a.obj)} on CUDA device "
                          f"{a.device}: {_driver_why}")


def check_keys(a, what="array"):
    if not isinstance(a.dtype, np.dtype) or a.dtype not in _KEY_TYPES:
        raise TypeError(f"gpusort: unsupported {what} dtype {a.dtype} of a "
                        f"{_type_name(a.obj)} (uint32, int32, float32, uint64, int64 or "
                        "float64)")


def check_values(v, n):
    if not isinstance(v.dtype, np.dtype) or v.dtype.itemsize not in (4, 8):
        raise TypeError(f"gpusort: unsupported values dtype {v.dtype} of a "
                        f"{_type_name(v.obj)} (values are 1-D, any dtype 4 or 8 bytes wide)")
    if v.n != n:
        raise ValueError(f"gpusort: {n} keys but {v.n} values")


def _check_strided(a, what):
    if a.stride is None:
        raise ValueError(f"gpusort: {what} ({_type_name(a.obj)}) has a stride that is not a "
                         "whole number of elements")


def _check_writable(a, what):
    why = "is read-only" if a.readonly else (a.lib.writable_why(a) if a.lib else None)
    if why:
        raise ValueError(f"gpusort: {what} ({_type_name(a.obj)}) {why}; sort() returns a "
                         "sorted copy")


def _need_lib(a, what, call):
    if a.lib is None:
        raise TypeError(f"gpusort: {call} of a {_type_name(a.obj)} needs arrays made by its "
                        "library, which gpusort does not know (it knows torch, cupy and numba): "
                        f"sort a contiguous {what} of it in place (sort_, sort_by_key_)")
    return a.lib


def _same_device(a, b):
    if a.device is not None and b.device is not None and a.device != b.device:
        raise ValueError(f"gpusort: keys are on CUDA device {a.device}, values on {b.device}")


def check_algorithm(algorithm):
    if algorithm not in (None, "automatic"):
        raise ValueError(f"gpusort: algorithm={algorithm!r} applies to host arrays; GPU arrays "
                         "are sorted by the CUDA face, which chooses its own kernels "
                         "(algorithm='automatic')")


# ---- the sorts ----

def _scratch(a, nbytes):
    """(array holding it, address): scratch from PyTorch's or CuPy's caching allocator, whose
    blocks are reused in the order of the current stream, the one the sort runs on; else (None, 0):
    the CUDA face allocates on the stream (cuMemAllocAsync) and frees it there."""
    if nbytes == 0 or not isinstance(a.lib, (_Torch, _CuPy)):
        return None, 0
    buffer = a.lib.empty(a, nbytes, np.uint8)
    return buffer, a.lib.ptr(buffer)


def _contiguous(a, what, call):
    """a itself where contiguous, else a contiguous copy made by its library (a DeviceArray)."""
    _check_strided(a, what)
    if a.contiguous:
        return a
    copy = _need_lib(a, what, call).clone(a)
    return _wrap(a, copy)


def _wrap(like, obj):
    """A DeviceArray for an array the library just made on like's device and stream."""
    lib = like.lib
    return DeviceArray(obj, lib.ptr(obj), obj.shape[0],
                       np.dtype(obj.dtype) if lib.name != "torch" else lib.np_dtype(obj.dtype),
                       1, False, like.device, like.stream, lib, None, like.source)


def _written(a):
    """An array written in place by the sort (not through its library)."""
    if isinstance(a.lib, _Torch):
        a.lib.written(a)


_OFFSET_BYTES = {np.dtype(np.int32): 4, np.dtype(np.uint32): 4, np.dtype(np.int64): 8,
                 np.dtype(np.uint64): 8}


def _segment_offsets(a, segments):
    """(offsets, S, their bytes) of segments= for the GPU array a: S + 1 offsets of 4- or 8-byte
    integers, a GPU array on a's device, read on a's stream and not read back (so not checked:
    offsets that are not CSR give an unspecified order, never an access outside the arrays)."""
    o = read(segments, "segments")
    if o is None:
        raise TypeError("gpusort: segments= of a GPU array must be a GPU array of offsets on its "
                        f"device, not a {_type_name(segments)}")
    if a.device is not None and o.device is not None and a.device != o.device:
        raise ValueError(f"gpusort: keys are on CUDA device {a.device}, segments on {o.device}")
    offset_bytes = _OFFSET_BYTES.get(o.dtype) if isinstance(o.dtype, np.dtype) else None
    if offset_bytes is None:
        raise TypeError(f"gpusort: segments must be offsets of 4- or 8-byte integers, not "
                        f"{o.dtype}")
    if o.n == 0:
        raise ValueError("gpusort: segments= holds no offsets (S + 1 of them for S segments)")
    return _contiguous(o, "segments", "segments="), o.n - 1, offset_bytes


_scratch_sizes = {}


def _scratch_bytes(function, *args):
    """function(*args), a scratch size of the CUDA face (which depends on its arguments alone),
    remembered: a repeated call then costs a lookup, not a call into the module."""
    key = (function, args)
    nbytes = _scratch_sizes.get(key)
    if nbytes is None:
        nbytes = function(*args)
        if len(_scratch_sizes) >= 4096:
            _scratch_sizes.clear()
        _scratch_sizes[key] = nbytes
    return nbytes


def _sort_in_place(k, v, opts, keys_in=0, segments=None):
    """Enqueues the sort of contiguous k (and v) on k's stream; keys_in: the address of the
    keys to sort into k instead (a sorted copy); segments: each segment on its own."""
    offsets = _segment_offsets(k, segments) if segments is not None else None
    _check_driver(k)
    if k.n == 0:
        return
    key_type = _KEY_TYPES[k.dtype]
    value_bytes = v.dtype.itemsize if v is not None else 0
    d, b, e, numpy_order = opts
    if offsets is None:
        nbytes = _scratch_bytes(_core.cuda_scratch_bytes, key_type, value_bytes, k.n, d, b, e,
                                numpy_order, keys_in != 0)
    else:
        nbytes = _scratch_bytes(_core.cuda_segmented_scratch_bytes, key_type, value_bytes, 0, k.n,
                                offsets[1], d, b, e, numpy_order)
    with k.lib.guard(k) if k.lib else _NO_GUARD:
        buffer, scratch = _scratch(k, nbytes)
        if offsets is None:
            _core.cuda_sort(key_type, k.ptr, v.ptr if v is not None else 0, value_bytes, k.n,
                            k.stream, d, b, e, numpy_order, keys_in, scratch, nbytes)
        else:
            o, count, offset_bytes = offsets
            _core.cuda_segmented_sort(key_type, k.ptr, v.ptr if v is not None else 0,
                                      value_bytes, k.n, o.ptr, offset_bytes, count, k.stream, d,
                                      b, e, numpy_order, scratch, nbytes)
        del buffer


def sort_(a, opts, segments=None):
    _check_writable(a, "array")
    check_keys(a)
    _check_strided(a, "array")
    if a.contiguous:
        _sort_in_place(a, None, opts, segments=segments)
        _written(a)
        return a.obj
    work = _contiguous(a, "array", "sort_()")
    _sort_in_place(work, None, opts, segments=segments)
    a.lib.copy_into(a, work.obj)
    return a.obj


def sort(a, opts, out=None, return_indices=False, segments=None):
    check_keys(a)
    _check_strided(a, "array")
    lib = _need_lib(a, "array", "sort()")
    if segments is not None:
        if out is not None:
            _need_lib(out, "out", "sort(out=)").copy_into(out, a.obj)
            return sort_(out, opts, segments)
        with lib.guard(a):
            result = _wrap(a, lib.clone(a))
        _sort_in_place(result, None, opts, segments=segments)
        if not return_indices:
            return result.obj
        # The permutation from a second sort, the argsort (both stable: the same order).
        return result.obj, argsort(a, opts, np.int64, segments=segments)
    if return_indices:
        keys = _contiguous(a, "array", "sort()")
        values = lib.empty(a, a.n, a.dtype)
        indices = argsort(keys, opts, np.int64, sorted_keys=values)
        return values, indices
    if out is not None:
        if out.dtype != a.dtype or out.n != a.n:
            raise ValueError(f"gpusort: out has length {out.n} and dtype {out.dtype}; expected "
                             f"{a.n} and {a.dtype}")
        _check_writable(out, "out")
        if out.ptr != a.ptr or out.stride != a.stride:
            _need_lib(out, "out", "sort(out=)").copy_into(out, a.obj)
        sort_(out, opts)
        return out.obj
    with lib.guard(a):
        if a.contiguous:  # sorted from a into a new array: no copy of its own
            result = _wrap(a, lib.empty(a, a.n, a.dtype))
            _sort_in_place(result, None, opts, keys_in=a.ptr)
            return result.obj
        result = _wrap(a, lib.clone(a))
    _sort_in_place(result, None, opts)
    return result.obj


def argsort(a, opts, index_dtype, sorted_keys=None, segments=None):
    check_keys(a)
    index_dtype = np.dtype(index_dtype)
    index_bytes = {np.dtype(np.int64): 8, np.dtype(np.uint64): 8, np.dtype(np.uint32): 4,
                   np.dtype(np.int32): 4}.get(index_dtype)
    if index_bytes is None:
        raise TypeError(f"gpusort: argsort dtype must be int64, int32 or uint32, not {index_dtype}")
    if index_bytes == 4 and a.n > (2**31 - 1 if index_dtype.kind == "i" else 2**32 - 1):
        raise ValueError(f"gpusort: {a.n} elements do not fit {index_dtype} indices")
    lib = _need_lib(a, "array", "argsort()")
    keys = _contiguous(a, "array", "argsort()")
    offsets = _segment_offsets(keys, segments) if segments is not None else None
    _check_driver(keys)
    with lib.guard(keys):
        indices = lib.empty(keys, keys.n, index_dtype)
        if keys.n == 0:
            return indices
        key_type = _KEY_TYPES[keys.dtype]
        d, b, e, numpy_order = opts
        if offsets is None:
            nbytes = _scratch_bytes(_core.cuda_argsort_scratch_bytes, key_type, index_bytes,
                                    keys.n, d, b, e, numpy_order, sorted_keys is not None)
        else:
            nbytes = _scratch_bytes(_core.cuda_segmented_scratch_bytes, key_type, 0,
                                    index_bytes, keys.n, offsets[1], d, b, e, numpy_order)
        buffer, scratch = _scratch(keys, nbytes)
        if offsets is None:
            _core.cuda_argsort(key_type, keys.ptr, lib.ptr(indices), index_bytes, keys.n,
                               keys.stream, d, b, e, numpy_order,
                               0 if sorted_keys is None else lib.ptr(sorted_keys), scratch,
                               nbytes)
        else:
            o, count, offset_bytes = offsets
            _core.cuda_segmented_argsort(key_type, keys.ptr, lib.ptr(indices), index_bytes,
                                         keys.n, o.ptr, offset_bytes, count, keys.stream, d, b,
                                         e, numpy_order, scratch, nbytes)
        del buffer
    return indices


def sort_by_key_(k, v, opts, segments=None):
    _check_writable(k, "keys")
    _check_writable(v, "values")
    check_keys(k, "keys")
    check_values(v, k.n)
    _same_device(k, v)
    _check_strided(k, "keys")
    _check_strided(v, "values")
    if k.n and not (k.ptr + k.nbytes <= v.ptr or v.ptr + v.nbytes <= k.ptr):
        raise ValueError("gpusort: keys and values share memory")
    work_k = _contiguous(k, "keys", "sort_by_key_()")
    work_v = _contiguous(v, "values", "sort_by_key_()")
    work_v.stream = work_k.stream
    _sort_in_place(work_k, work_v, opts, segments=segments)
    for array, work in ((k, work_k), (v, work_v)):
        if work is not array:
            array.lib.copy_into(array, work.obj)
        else:
            _written(array)
    return k.obj, v.obj


def sort_by_key(k, v, opts, segments=None):
    check_keys(k, "keys")
    check_values(v, k.n)
    _same_device(k, v)
    klib = _need_lib(k, "keys", "sort_by_key()")
    vlib = _need_lib(v, "values", "sort_by_key()")
    _check_strided(k, "keys")
    _check_strided(v, "values")
    with klib.guard(k):
        keys = _wrap(k, klib.clone(k))
        values = _wrap(v, vlib.clone(v))
    values.stream = keys.stream
    _sort_in_place(keys, values, opts, segments=segments)
    return keys.obj, values.obj


# ---- top-k ----

_TOPK_INDEX_BYTES = {np.dtype(np.int64): 8, np.dtype(np.uint32): 4}


def rows_of(obj):
    """(a 1-D view of it, or a contiguous copy, rows, row length) of a 2-D GPU array of a library
    gpusort knows (torch, cupy, numba), or None for anything else."""
    if isinstance(obj, np.ndarray) or getattr(obj, "ndim", None) != 2:
        return None
    lib = _library(obj)
    if not isinstance(lib, (_Torch, _CuPy, _Numba)):
        return None
    if isinstance(lib, _Torch) and obj.device.type != "cuda":
        return None
    rows, length = (int(v) for v in obj.shape)
    return obj.reshape(-1), rows, length


def topk(a, k, values, return_indices, index_dtype, opts, rows=None):
    """The k smallest (opts' descending: largest) keys of the 1-D GPU array a, sorted, ties by
    position, made by a's library: keys, then values_out (values given) and indices
    (return_indices), as a tuple where more than the keys. rows: (rows, row length) of a (a 2-D
    array's, flattened): each row's, results of shape (rows, min(k, row length)), positions
    within the row."""
    check_keys(a)
    lib = _need_lib(a, "array", "topk()")
    index_dtype = np.dtype(index_dtype)
    index_bytes = _TOPK_INDEX_BYTES.get(index_dtype)
    if index_bytes is None:
        raise TypeError(f"gpusort: topk dtype must be int64 or uint32, not {index_dtype}")
    if k < 0 or (rows is None and k > a.n):
        raise ValueError(f"gpusort: k = {k} is not within 0 to the {a.n} keys")
    shape = k if rows is None else (rows[0], min(k, rows[1]))
    keys = _contiguous(a, "array", "topk()")
    v = None
    if values is not None:
        check_values(values, a.n)
        _same_device(a, values)
        _need_lib(values, "values", "topk()")
        v = _contiguous(values, "values", "topk()")
    _check_driver(keys)
    with lib.guard(keys):
        keys_out = lib.empty(keys, shape, keys.dtype)
        values_out = v.lib.empty(v, shape, v.dtype) if v is not None else None
        indices = lib.empty(keys, shape, index_dtype) if return_indices else None
        if k > 0 and keys.n > 0:
            d, b, e, numpy_order = opts
            key_type = _KEY_TYPES[keys.dtype]
            outputs = (lib.ptr(keys_out), 0 if v is None else v.ptr,
                       0 if v is None else v.lib.ptr(values_out),
                       0 if v is None else v.dtype.itemsize,
                       0 if indices is None else lib.ptr(indices), index_bytes, keys.stream,
                       d, b, e, numpy_order)
            if rows is None:
                nbytes = _scratch_bytes(_core.cuda_topk_scratch_bytes, key_type, keys.n, k, d, b,
                                        e, numpy_order)
                buffer, scratch = _scratch(keys, nbytes)
                _core.cuda_topk(key_type, keys.ptr, keys.n, k, *outputs, scratch, nbytes)
            else:
                nbytes = _scratch_bytes(_core.cuda_topk_rows_scratch_bytes, key_type, rows[0],
                                        rows[1], k, d, b, e, numpy_order)
                buffer, scratch = _scratch(keys, nbytes)
                _core.cuda_topk_rows(key_type, keys.ptr, rows[0], rows[1], k, *outputs, scratch,
                                     nbytes)
            del buffer
    result = (keys_out,)
    if values_out is not None:
        result += (values_out,)
    if indices is not None:
        result += (indices,)
    return result[0] if len(result) == 1 else result
