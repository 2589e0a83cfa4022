"""gpusort: sort NumPy arrays on the GPU through Vulkan compute, and GPU arrays where they are.

    >>> import numpy as np, gpusort
    >>> gpusort.sort(np.array([3.0, -1.0, np.nan, 2.0], dtype=np.float32))
    array([-1.,  2.,  3., nan], dtype=float32)

Functions: sort (a sorted copy, or into out), sort_ (in place), argsort (the stable permutation),
sort_by_key / sort_by_key_ (keys with values carried along), topk (the k smallest or largest),
devices(). Every function takes
context=: a Context picks the device and is reused across calls; without one, a default Context
is created on first use (the best device, or the one GPUSORT_DEVICE names).

Masked arrays (numpy.ma) are sorted like np.ma.sort with endwith=True: the unmasked elements in
order, then the masked ones, in their input order (in either direction); sort returns a
MaskedArray, argsort the permutation, sort_by_key carries a masked array's mask along with it.

Keys are 1-D arrays of uint32, int32, float32, uint64, int64 or float64; values any dtype 4 or 8
bytes wide (not object). C-contiguous, aligned, native-byte-order arrays go to the device as they
are; other layouts are copied (strided, byte-swapped, misaligned), and in-place functions write
the result back. Results equal NumPy's stable sort: np.sort(a, kind="stable") and
np.argsort(a, kind="stable"), bit for bit (see sort() for floats). The GIL is released while the
GPU works; a Ctrl-C meanwhile raises KeyboardInterrupt once the GPU call has returned.

GPU arrays (a torch.Tensor on "cuda", a CuPy array, anything with __dlpack__ on a CUDA device or
__cuda_array_interface__) are sorted on their device by the library's CUDA face, enqueued on
their stream (PyTorch's and CuPy's current one; the legacy default stream for other DLPack
producers; the interface's "stream"), with no host copy and nothing waited for; results are
arrays of the input's library (a tensor for a tensor). The same orders and options, but for
algorithm= and context=, which apply to host arrays.
"""

import operator
import threading

import numpy as np

from . import _core
from . import _device


# ---- NumPy's arrays, as the compiled module reads them ----

_NPY_FLAGS = {"c_contiguous": 0x1, "aligned": 0x100, "writeable": 0x400}


def _check_numpy_layout():
    """Raises ImportError where the compiled module would misread this NumPy's arrays.

    pybind11 before 2.12 reads dtypes in NumPy 1's struct layout, and on NumPy 2 the arrays it
    made came out with strides (0,): the module now reads dtypes through Python, arrays only
    through fields NumPy 2 kept, and makes no arrays. This checks both halves: arrays allocated
    as the package allocates results (their strides, size and flags), and the module's reading
    of those and of strided, reversed and read-only arrays against NumPy's own.
    """
    problems = []
    base = np.arange(12, dtype=np.float64)
    read_only = np.arange(3, dtype=np.int32)
    read_only.flags.writeable = False
    made = [np.empty(5, np.uint32), np.empty(5, np.int64), np.empty_like(base, order="C")]
    for a in made:
        if (a.strides != (a.dtype.itemsize,) or a.nbytes != a.size * a.dtype.itemsize
                or not all(getattr(a.flags, name) for name in _NPY_FLAGS) or not a.flags.owndata):
            problems.append(f"numpy.empty({a.size}, {a.dtype}) has strides {a.strides}, nbytes "
                            f"{a.nbytes}, flags {dict(a.flags)}")
    for a in made + [base[::3], base[::-1], read_only]:
        data, ndim, shape, strides, flags = _core.array_layout(a)
        seen = (data, ndim, shape, strides, {name: bool(flags & bit)
                                            for name, bit in _NPY_FLAGS.items()})
        actual = (a.__array_interface__["data"][0], a.ndim, a.shape, a.strides,
                  {name: getattr(a.flags, name) for name in _NPY_FLAGS})
        if seen != actual:
            problems.append(f"a {a.dtype} array (data, ndim, shape, strides, flags) {actual} "
                            f"reads as {seen}")
    if problems:
        raise ImportError(
            f"gpusort: the compiled module (pybind11 {_core.pybind11_version}) misreads NumPy "
            f"{np.__version__}'s arrays, so its results would be wrong: {'; '.join(problems)}. "
            "Rebuild gpusort against this NumPy and a pybind11 that supports it.")


_check_numpy_layout()

__all__ = ["Context", "DeviceInfo", "Error", "argsort", "default_context", "devices", "sort",
           "sort_", "sort_by_key", "sort_by_key_", "topk", "ALGORITHMS"]

Error = _core.Error
DeviceInfo = _core.DeviceInfo

#: The algorithm names that algorithm= takes. "automatic" picks a stable one by size; "bitonic"
#: is not stable; "odd_even" sorts only arrays that fit one workgroup (a few thousand keys).
#: The list comes from the library (its algorithm registry), in its enumerator order.
ALGORITHMS = tuple(_core.algorithm_names())

_KEY_KINDS = "uif"


class Context:
    """A Vulkan device to sort on, reused across calls (creating one takes a while).

    device: an index into devices() or a case-insensitive substring of a device name; None picks
    GPUSORT_DEVICE, else the best device (discrete GPU, then integrated, virtual, CPU such as
    lavapipe). validation=True enables the Khronos validation layer (also GPUSORT_VALIDATION=1).
    """

    def __init__(self, device=None, *, validation=False):
        if device is None:
            device = ""
        elif not isinstance(device, str):
            device = str(_integer("device", device, "an index or a name"))
        self._impl = _core.Context(device, _flag("validation", validation))

    @property
    def device(self):
        """The DeviceInfo of the device this context sorts on."""
        return self._impl.device

    @property
    def validation_messages(self):
        """Validation-layer messages seen so far (0 when validation is off)."""
        return self._impl.validation_messages

    def __repr__(self):
        return f"gpusort.Context({self.device.name!r})"


_default_context = None
_default_context_lock = threading.Lock()


def default_context():
    """The Context used when none is given, created on first use."""
    global _default_context
    with _default_context_lock:
        if _default_context is None:
            _default_context = Context()
        return _default_context


def devices():
    """The Vulkan devices present, usable by gpusort or not (DeviceInfo.usable says)."""
    return _core.devices()


# ---- argument checks ----

def _integer(name, value, what="an integer"):
    """value as an int, if it is one (operator.index: int, NumPy integers; not bool, float, str)."""
    if not isinstance(value, (bool, np.bool_)):
        try:
            return operator.index(value)
        except TypeError:
            pass
    raise TypeError(f"gpusort: {name} must be {what}, not {type(value).__name__} {value!r}")


def _flag(name, value):
    """value as a bool, if it is one (bool, np.bool_; not 0/1, strings or None)."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise TypeError(f"gpusort: {name} must be True or False, not {type(value).__name__} {value!r}")


def _masked(a):
    return isinstance(a, np.ma.MaskedArray)


def _dtype_name(a):
    return "object" if a.dtype.hasobject else str(a.dtype)


def _check_keys(a, name="keys"):
    if a.dtype.hasobject or a.ndim == 0:
        what = "a 0-d array" if a.ndim == 0 else "dtype"
        raise TypeError(f"gpusort: unsupported {name}: {what} {_dtype_name(a)} "
                        "(1-D uint32, int32, float32, uint64, int64 or float64 arrays)")
    if a.dtype.kind not in _KEY_KINDS or a.dtype.itemsize not in (4, 8):
        raise TypeError(f"gpusort: unsupported {name} dtype {a.dtype} "
                        "(uint32, int32, float32, uint64, int64 or float64)")
    if a.ndim != 1:
        raise ValueError(f"gpusort: {name} must be 1-D, not of shape {a.shape} "
                         "(sort a.ravel(), or each row)")


def _check_values(v, n):
    if v.dtype.hasobject or v.ndim == 0 or v.dtype.itemsize not in (4, 8):
        what = "a 0-d array of dtype" if v.ndim == 0 else "dtype"
        raise TypeError(f"gpusort: unsupported values: {what} {_dtype_name(v)} "
                        "(values are 1-D, any dtype 4 or 8 bytes wide but object)")
    if v.ndim != 1:
        raise ValueError(f"gpusort: values must be 1-D, not of shape {v.shape}")
    if v.shape[0] != n:
        raise ValueError(f"gpusort: {n} keys but {v.shape[0]} values")


def _check_writable(a, name):
    if not isinstance(a, np.ndarray):
        raise TypeError(f"gpusort: {name} must be a numpy.ndarray to be sorted in place, "
                        f"not {type(a).__name__}")
    if not a.flags.writeable:
        raise ValueError(f"gpusort: {name} is read-only; sort() returns a sorted copy")


def _direct(a, native=True):
    """Whether the array's memory can go to the device as it is."""
    return (a.flags.c_contiguous and a.flags.aligned and (a.dtype.isnative or not native))


def _native_copy(a):
    """A C-contiguous, aligned, native-byte-order copy of a key array."""
    return np.array(a, dtype=a.dtype.newbyteorder("="), order="C", copy=True)


def _bits(dtype, begin_bit, end_bit, total_order):
    """The bit range [begin, end) checked for a key dtype; (0, 0) for the whole key."""
    width = dtype.itemsize * 8
    if begin_bit is None and end_bit is None:
        begin, end = 0, 0
    else:
        begin = 0 if begin_bit is None else _integer("begin_bit", begin_bit)
        end = width if end_bit is None else _integer("end_bit", end_bit)
        if not 0 <= begin < end <= width:
            raise ValueError(f"gpusort: bits [{begin}, {end}) are not a range within the "
                             f"{width}-bit key")
        if dtype.kind == "f" and not total_order and (begin, end) != (0, width):
            raise ValueError("gpusort: begin_bit/end_bit of float keys select bits of IEEE "
                             "totalOrder; pass total_order=True")
    return begin, end


def _gpu_options(d, descending, algorithm, begin_bit, end_bit, total_order):
    """(descending, begin_bit, end_bit, numpy_order) for the CUDA face, for the GPU array d."""
    _device.check_keys(d)
    _device.check_algorithm(algorithm)
    descending = _flag("descending", descending)
    total_order = _flag("total_order", total_order)
    begin, end = _bits(d.dtype, begin_bit, end_bit, total_order)
    return descending, begin, end, not total_order


def _gpu_pair(keys, values):
    """The DeviceArrays of keys and values, or None where both are host arrays."""
    k, v = _device.read(keys, "keys"), _device.read(values, "values")
    if (k is None) != (v is None):
        raise TypeError(f"gpusort: keys ({type(keys).__name__}) and values "
                        f"({type(values).__name__}) must both be GPU arrays or both host arrays")
    return None if k is None else (k, v)


def _options(a, descending, algorithm, begin_bit, end_bit, total_order, context):
    if algorithm is None:
        algorithm = "automatic"
    if algorithm not in ALGORITHMS:
        raise ValueError(f"gpusort: unknown algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")
    descending = _flag("descending", descending)
    total_order = _flag("total_order", total_order)
    begin, end = _bits(a.dtype, begin_bit, end_bit, total_order)
    context = default_context() if context is None else context
    if not isinstance(context, Context):
        raise TypeError(f"gpusort: context must be a gpusort.Context, not {type(context).__name__}")
    return dict(context=context._impl, descending=descending, algorithm=algorithm,
                begin_bit=begin, end_bit=end, numpy_order=not total_order)


_ORDER_DOC = """
    Order: ascending, or descending=True. Integers sort by value. Floats sort like NumPy by
    default: -inf < ... < +inf < NaN, with -0.0 and +0.0 equal and all NaNs equal (whatever their
    sign and payload), so zeros, and NaNs, keep their input order among themselves (results equal
    np.sort(a, kind="stable") bit for bit). Descending is the reverse comparison, still stable:
    NaNs first (they are the greatest), then +inf ... -inf, equal keys (zeros of either sign,
    NaNs) in input order. total_order=True sorts floats by IEEE-754 totalOrder instead (the
    library's native order, skips a host pass): -NaN < -inf < ... < -0.0 < +0.0 < ... < +inf <
    +NaN, NaNs by their payload bits.

    algorithm: one of ALGORITHMS ("automatic" is stable; "bitonic" is not, so equal keys may come
    out in any order). begin_bit/end_bit: sort by bits [begin_bit, end_bit) of the key's radix
    order only (floats: with total_order=True). context: a Context (default: default_context()).
"""


# ---- sorting ----

_SEGMENTS_DOC = """
    segments: S + 1 CSR offsets (a 1-D array of 4- or 8-byte integers, 0 first, n last, never
    falling): segment s is a[offsets[s]:offsets[s + 1]], each sorted on its own (empty segments
    anywhere); argsort's indices are positions in the whole array. Not for masked arrays. For a
    GPU array the offsets are a GPU array on its device, read on its stream and not checked
    (offsets that are not CSR give an unspecified order, never an access outside the arrays).
"""


def _segment_offsets(segments):
    """segments= as the library takes it: 1-D, 4- or 8-byte integers, native and contiguous (the
    library checks that they are CSR offsets of the keys)."""
    offsets = np.asarray(segments)
    if offsets.ndim != 1 or offsets.dtype.kind not in "ui" or offsets.dtype.itemsize not in (4, 8):
        raise TypeError("gpusort: segments must be 1-D offsets of 4- or 8-byte integers, not "
                        f"{_dtype_name(offsets)} of shape {offsets.shape}")
    if offsets.dtype.kind == "i" and offsets.size and offsets.min() < 0:
        raise ValueError("gpusort: segment offsets must not be negative")
    return np.ascontiguousarray(offsets.astype(offsets.dtype.newbyteorder("="), copy=False))


def _any_masked(a):
    """Whether a is a masked array with at least one masked element."""
    return _masked(a) and bool(np.ma.getmask(a).any())


def _check_mask_movable(a, name):
    if _masked(a) and a.hardmask and _any_masked(a):
        raise ValueError(f"gpusort: {name} has a hard mask, which sorting in place would move; "
                         "soften_mask() it first, or sort a copy")


def _masked_order(a, index_dtype, kw):
    """The permutation that sorts the masked array a: its unmasked elements in order (argsort with
    the options kw), then its masked elements in input order."""
    mask = np.ma.getmaskarray(a)
    unmasked = np.flatnonzero(~mask)
    order = unmasked[argsort(np.ma.getdata(a)[unmasked], **kw)]
    return np.concatenate([order, np.flatnonzero(mask)]).astype(index_dtype, copy=False)


def sort(a, *, descending=False, algorithm="automatic", begin_bit=None, end_bit=None, out=None,
         total_order=False, context=None, return_indices=False, segments=None):
    """Returns a sorted copy of the 1-D array a, or sorts it into out and returns out.

    out, if given, is an array of a's shape and dtype; a C-contiguous native one is sorted where
    it is (a is copied into it, then sorted there: out may be a itself). The result has a's dtype,
    byte order included. A masked array a gives a MaskedArray, its masked elements last (out=
    is refused for it, and a masked out).

    return_indices=True returns (sorted copy, int64 indices): the indices are argsort(a), as
    torch.sort returns them (out= is refused with it). On a GPU array one sort makes both.
    """
    kw = dict(descending=descending, algorithm=algorithm, begin_bit=begin_bit, end_bit=end_bit,
              total_order=total_order, context=context)
    return_indices = _flag("return_indices", return_indices)
    if return_indices and out is not None:
        raise TypeError("gpusort: out= and return_indices=True do not go together")
    d = _device.read(a)
    if d is not None:
        opts = _gpu_options(d, descending, algorithm, begin_bit, end_bit, total_order)
        o = None
        if out is not None:
            o = _device.read(out, "out")
            if o is None:
                raise TypeError(f"gpusort: out must be a GPU array like a, not "
                                f"{type(out).__name__}")
        return _device.sort(d, opts, out=o, return_indices=return_indices, segments=segments)
    if out is not None and _device.read(out, "out") is not None:
        raise TypeError(f"gpusort: out is a GPU array but a is a host array ({type(a).__name__})")
    if segments is not None:
        order = argsort(a, segments=segments, **kw)
        result = np.asarray(a)[order]
        if return_indices:
            return result, order
        if out is None:
            return result
        _check_writable(out, "out")
        if _masked(out) or out.shape != result.shape or out.dtype != result.dtype:
            raise ValueError(f"gpusort: out must be a plain array of shape {result.shape} and "
                             f"dtype {result.dtype}")
        out[...] = result
        return out
    if return_indices:
        order = argsort(a, **kw)
        return np.asanyarray(a)[order], order
    if _masked(out):
        raise TypeError("gpusort: out must be a plain numpy.ndarray, not a masked array")
    if _masked(a):
        _check_keys(np.ma.getdata(a), "array")
        if out is not None:
            raise TypeError("gpusort: out= cannot take a masked array's mask; "
                            "sort() of a masked array returns a new one")
        if not _any_masked(a):
            result = a.copy()
            sort_(np.ma.getdata(result), **kw)
            return result
        return a[_masked_order(a, np.intp, kw)]
    a = np.asarray(a)
    _check_keys(a, "array")
    opts = _options(a, descending, algorithm, begin_bit, end_bit, total_order, context)
    if out is not None:
        _check_writable(out, "out")
        if out.shape != a.shape or out.dtype != a.dtype:
            raise ValueError(f"gpusort: out has shape {out.shape} and dtype {out.dtype}; "
                             f"expected {a.shape} and {a.dtype}")
        if _direct(out):
            if _direct(a) and not np.may_share_memory(a, out):
                _core.sort_copy(source=a, destination=out, **opts)
            else:
                np.copyto(out, a)
                _core.sort_inplace(keys=out, values=None, **opts)
        else:
            out[...] = sort(a, **kw)
        return out
    if _direct(a):
        # Streamed from a into the new array through the staging memory: no host copy between.
        result = np.empty_like(a, order="C")
        _core.sort_copy(source=a, destination=result, **opts)
        return result
    work = _native_copy(a)
    _core.sort_inplace(keys=work, values=None, **opts)
    return work if a.dtype.isnative else work.astype(a.dtype)


def sort_(a, *, descending=False, algorithm="automatic", begin_bit=None, end_bit=None,
          total_order=False, context=None, segments=None):
    """Sorts the 1-D array a in place and returns it.

    a must be a writable numpy.ndarray (a read-only one raises ValueError). A C-contiguous,
    aligned, native-byte-order array is sorted with no host copy; others go through one. A masked
    array is sorted with its mask, masked elements last, like its own sort() (a hard mask that
    would move raises ValueError).
    """
    d = _device.read(a)
    if d is not None:
        return _device.sort_(d, _gpu_options(d, descending, algorithm, begin_bit, end_bit,
                                             total_order), segments)
    if segments is not None:
        _check_writable(a, "array")
        a[...] = a[argsort(a, descending=descending, algorithm=algorithm, begin_bit=begin_bit,
                           end_bit=end_bit, total_order=total_order, context=context,
                           segments=segments)]
        return a
    _check_writable(a, "array")
    if _masked(a):
        _check_keys(np.ma.getdata(a), "array")
        kw = dict(descending=descending, algorithm=algorithm, begin_bit=begin_bit,
                  end_bit=end_bit, total_order=total_order, context=context)
        if not _any_masked(a):
            sort_(np.ma.getdata(a), **kw)
            return a
        _check_mask_movable(a, "array")
        a[...] = a[_masked_order(a, np.intp, kw)]
        return a
    _check_keys(a, "array")
    opts = _options(a, descending, algorithm, begin_bit, end_bit, total_order, context)
    if _direct(a):
        _core.sort_inplace(keys=a, values=None, **opts)
    else:
        work = _native_copy(a)
        _core.sort_inplace(keys=work, values=None, **opts)
        a[...] = work
    return a


def argsort(a, *, descending=False, algorithm="automatic", begin_bit=None, end_bit=None,
            dtype=np.int64, total_order=False, context=None, segments=None):
    """Returns the stable permutation that sorts the 1-D array a: a[argsort(a)] == sort(a).

    dtype: np.int64 (default, like np.argsort: equal to np.argsort(a, kind="stable")) or
    np.uint32 (half the memory; a is at most 2^31 - 1 long); for a GPU array also int32, and
    the library's own dtype objects (torch.int64). a is not modified. The indices come
    from sorting (a copy of a, 0..n-1) by key; with algorithm="bitonic" equal keys' indices may
    come in any order. A masked array's masked elements come last, in input order.
    """
    d = _device.read(a)
    if d is not None:
        return _device.argsort(d, _gpu_options(d, descending, algorithm, begin_bit, end_bit,
                                               total_order), _index_dtype(dtype),
                               segments=segments)
    a = np.asanyarray(a)
    keys = np.ma.getdata(a) if _masked(a) else np.asarray(a)
    _check_keys(keys, "array")
    index_dtype = np.dtype(dtype)
    if index_dtype not in (np.dtype(np.int64), np.dtype(np.uint32)):
        raise TypeError(f"gpusort: argsort dtype must be int64 or uint32, not {index_dtype}")
    offsets = None
    if segments is not None:
        if _masked(a):
            raise TypeError("gpusort: segments= does not take a masked array")
        offsets = _segment_offsets(segments)
    if _any_masked(a):
        return _masked_order(a, index_dtype, dict(
            descending=descending, algorithm=algorithm, begin_bit=begin_bit, end_bit=end_bit,
            total_order=total_order, context=context))
    opts = _options(keys, descending, algorithm, begin_bit, end_bit, total_order, context)
    if not _direct(keys):
        keys = _native_copy(keys)
    # Allocated by NumPy, filled by the module (see core_module.cpp on NumPy 2).
    indices = np.empty(keys.shape[0], dtype=index_dtype)
    _core.argsort(keys=keys, indices=indices, offsets=offsets, **opts)
    return indices


def _index_dtype(dtype):
    """An argsort dtype as NumPy's: NumPy's, or a library's (torch.int64) by its name."""
    try:
        return np.dtype(dtype)
    except TypeError:
        return np.dtype(str(dtype).rpartition(".")[2])


def sort_by_key(keys, values, *, descending=False, algorithm="automatic", begin_bit=None,
                end_bit=None, total_order=False, context=None, segments=None):
    """Returns (sorted keys, values in the same order) as new arrays; the inputs are not modified.

    Equal keys keep their input order, their values with them (except with "bitonic"). Values are
    any 1-D array 4 or 8 bytes per element (not object), moved as raw bytes. Masked keys sort
    their masked elements last; a masked array (keys or values) comes back masked, its mask
    moved with its elements.
    """
    kw = dict(descending=descending, algorithm=algorithm, begin_bit=begin_bit, end_bit=end_bit,
              total_order=total_order, context=context)
    pair = _gpu_pair(keys, values)
    if pair is not None:
        return _device.sort_by_key(*pair, _gpu_options(pair[0], descending, algorithm, begin_bit,
                                                       end_bit, total_order), segments)
    if segments is not None:
        if _masked(keys) or _masked(values):
            raise TypeError("gpusort: segments= does not take a masked array")
        keys, values = np.asarray(keys), np.asarray(values)
        _check_keys(keys)
        _check_values(values, keys.shape[0])
        order = argsort(keys, segments=segments, **kw)
        return keys[order], values[order]
    keys = np.asanyarray(keys)
    values = np.asanyarray(values)
    if _masked(keys) or _masked(values):
        _check_keys(np.ma.getdata(keys))
        _check_values(np.ma.getdata(values), keys.shape[0])
        order = argsort(keys, **kw)
        return keys[order], values[order]
    keys = np.asarray(keys)
    values = np.asarray(values)
    _check_keys(keys)
    _check_values(values, keys.shape[0])
    # Argument errors before the copies.
    _options(keys, descending, algorithm, begin_bit, end_bit, total_order, context)
    sorted_keys = np.array(keys, order="C", copy=True)
    sorted_values = np.array(values, order="C", copy=True)
    return sort_by_key_(sorted_keys, sorted_values, **kw)


def sort_by_key_(keys, values, *, descending=False, algorithm="automatic", begin_bit=None,
                 end_bit=None, total_order=False, context=None, segments=None):
    """Sorts keys in place and values with them; returns (keys, values).

    Both must be writable numpy.ndarrays that do not share memory. Masked arrays are sorted with
    their masks, as sort_by_key does (a hard mask that would move raises ValueError).
    """
    pair = _gpu_pair(keys, values)
    if pair is not None:
        return _device.sort_by_key_(*pair, _gpu_options(pair[0], descending, algorithm, begin_bit,
                                                        end_bit, total_order), segments)
    if segments is not None:
        if _masked(keys) or _masked(values):
            raise TypeError("gpusort: segments= does not take a masked array")
        _check_writable(keys, "keys")
        _check_writable(values, "values")
        _check_keys(keys)
        _check_values(values, keys.shape[0])
        if np.may_share_memory(keys, values) and np.shares_memory(keys, values):
            raise ValueError("gpusort: keys and values share memory")
        order = argsort(keys, descending=descending, algorithm=algorithm, begin_bit=begin_bit,
                        end_bit=end_bit, total_order=total_order, context=context,
                        segments=segments)
        keys[...] = keys[order]
        values[...] = values[order]
        return keys, values
    _check_writable(keys, "keys")
    _check_writable(values, "values")
    key_data = np.ma.getdata(keys) if _masked(keys) else keys
    value_data = np.ma.getdata(values) if _masked(values) else values
    _check_keys(key_data)
    _check_values(value_data, key_data.shape[0])
    if np.may_share_memory(key_data, value_data) and np.shares_memory(key_data, value_data):
        raise ValueError("gpusort: keys and values share memory")
    opts = _options(key_data, descending, algorithm, begin_bit, end_bit, total_order, context)
    kw = dict(descending=descending, algorithm=algorithm, begin_bit=begin_bit, end_bit=end_bit,
              total_order=total_order, context=context)
    if _any_masked(keys) or _any_masked(values):
        _check_mask_movable(keys, "keys")
        _check_mask_movable(values, "values")
        order = argsort(keys, **kw)
        keys[...] = keys[order]
        values[...] = values[order]
        return keys, values
    if algorithm == "bitonic" and key_data.dtype.kind == "f" and opts["numpy_order"]:
        # Unstable: the zeros and NaNs restored after the sort could not be matched to their
        # values, so both are gathered through the permutation instead.
        order = argsort(key_data, **kw)
        key_data[...] = key_data[order]
        value_data[...] = value_data[order]
        return keys, values
    work_keys = key_data if _direct(key_data) else _native_copy(key_data)
    # Values are moved as raw bytes: their byte order does not matter.
    work_values = (value_data if _direct(value_data, native=False)
                   else np.array(value_data, order="C"))
    _core.sort_inplace(keys=work_keys, values=work_values, **opts)
    if work_keys is not key_data:
        key_data[...] = work_keys
    if work_values is not value_data:
        value_data[...] = work_values
    return keys, values


def topk(a, k, *, largest=False, values=None, return_indices=False, segments=None,
         dtype=np.int64, algorithm="automatic", begin_bit=None, end_bit=None, total_order=False,
         context=None):
    """The k smallest (largest=True: largest) keys of a, sorted: the first k of sort(a) with the
    same options (ties by position, first occurrences first; floats in NumPy's order unless
    total_order=True).

    a: a 1-D key array (0 <= k <= len(a)), or a 2-D one whose rows are each taken on their own
    (results of shape (rows, min(k, row length))). segments: for a 1-D a, S + 1 CSR offsets (as
    the segmented sort's): each segment's first min(k, its length), one segment after another.
    values: an array of a's length (1-D, or a's shape), any dtype 4 or 8 bytes wide: the results'
    values come with them. return_indices=True: also the results' positions (dtype np.int64 or
    np.uint32): in a for 1-D a (in the whole array with segments), in their row for 2-D a.
    Returns the keys, or a tuple (keys, values) / (keys, indices) / (keys, values, indices).
    The GPU finds the k-th key by a radix select and sorts only the k (docs/design/topk.md).

    GPU arrays (a PyTorch tensor or CuPy array on a CUDA device, or any DLPack or
    __cuda_array_interface__ producer that gpusort knows, as sort() takes them): 1-D keys, or
    2-D ones of torch, CuPy or Numba taken row by row (as torch.topk along the last dimension),
    values a GPU array of the same shape, no segments; the top-k runs on the producer's current
    stream, and the results are new arrays of the producer's library on the same device (indices
    int64 by default, as torch.topk's).
    """
    if _masked(a) or _masked(values):
        raise TypeError("gpusort: topk does not take masked arrays")
    rows = _device.rows_of(a)
    if rows is not None:  # a 2-D GPU array: each row's top-k
        if segments is not None:
            raise ValueError("gpusort: segments= takes a 1-D array (a 2-D one's rows are its "
                             "segments)")
        if values is not None:
            value_rows = _device.rows_of(values)
            if value_rows is None or value_rows[1:] != rows[1:]:
                raise ValueError(f"gpusort: values of shape {tuple(values.shape)} for keys of "
                                 f"shape {tuple(a.shape)}")
            values = value_rows[0]
        a, rows = rows[0], rows[1:]
    d = _device.read(a)
    if d is not None:
        v = None if values is None else _device.read(values, "values")
        if values is not None and v is None:
            raise TypeError(f"gpusort: keys ({type(a).__name__}) and values "
                            f"({type(values).__name__}) must both be GPU arrays or both host "
                            "arrays")
        if segments is not None:
            raise ValueError("gpusort: segments= takes host arrays; for a GPU array, take the "
                             "top-k of each segment's slice")
        k = _integer("k", k)
        largest = _flag("largest", largest)
        return_indices = _flag("return_indices", return_indices)
        opts = _gpu_options(d, largest, algorithm, begin_bit, end_bit, total_order)
        return _device.topk(d, k, v, return_indices, _index_dtype(dtype), opts, rows)
    a = np.asarray(a)
    k = _integer("k", k)
    largest = _flag("largest", largest)
    return_indices = _flag("return_indices", return_indices)
    rows = None
    if a.ndim == 2:
        if segments is not None:
            raise ValueError("gpusort: segments= takes a 1-D array (a 2-D one's rows are its "
                             "segments)")
        rows, length = a.shape
        offsets = np.arange(rows + 1, dtype=np.uint64) * np.uint64(length)
        keys = a.reshape(-1)
    else:
        keys = a
        offsets = None
    _check_keys(keys, "array")
    if values is not None:
        values = np.asarray(values)
        if rows is not None:
            if values.shape != a.shape:
                raise ValueError(f"gpusort: values of shape {values.shape} for keys of shape "
                                 f"{a.shape}")
            values = values.reshape(-1)
        _check_values(values, keys.shape[0])
    index_dtype = np.dtype(dtype)
    if index_dtype not in (np.dtype(np.int64), np.dtype(np.uint32)):
        raise TypeError(f"gpusort: topk dtype must be int64 or uint32, not {index_dtype}")
    opts = _options(keys, largest, algorithm, begin_bit, end_bit, total_order, context)
    if segments is not None:
        offsets = _segment_offsets(segments)
    if k < 0 or (offsets is None and k > keys.shape[0]):
        raise ValueError(f"gpusort: k = {k} is not within 0 to the {keys.shape[0]} keys")
    if offsets is None:
        results = k
    else:
        results = int(np.minimum(np.maximum(np.diff(offsets.astype(np.int64)), 0), k).sum())
    if not _direct(keys):
        keys = _native_copy(keys)
    keys_out = np.empty(results, dtype=keys.dtype)
    values_out = None
    if values is not None:
        if not _direct(values, native=False):
            values = np.array(values, order="C")
        values_out = np.empty(results, dtype=values.dtype)
    indices = np.empty(results, dtype=index_dtype) if return_indices or rows is not None else None
    _core.topk(keys=keys, k=k, keys_out=keys_out, values=values, values_out=values_out,
               indices=indices, offsets=offsets, **opts)
    if a.dtype != keys_out.dtype:
        keys_out = keys_out.astype(a.dtype)
    if rows is not None:
        shape = (rows, min(k, a.shape[1]))
        keys_out = keys_out.reshape(shape)
        if values_out is not None:
            values_out = values_out.reshape(shape)
        indices = (indices.reshape(shape).astype(np.int64)
                   - (np.arange(rows, dtype=np.int64) * a.shape[1])[:, None]).astype(index_dtype)
    result = (keys_out,)
    if values_out is not None:
        result += (values_out,)
    if return_indices:
        result += (indices,)
    return result[0] if len(result) == 1 else result


for _f in (sort, sort_, argsort, sort_by_key, sort_by_key_):
    _f.__doc__ += _ORDER_DOC + _SEGMENTS_DOC
del _f
