"""gpusort: sort NumPy arrays on the GPU through Vulkan compute.

    >>> import numpy as np, gpusort
    >>> gpusort.sort(np.array([3.0, -1.0, np.nan, 2.0], dtype=np.float32))
    array([-1.,  2.,  3., nan], dtype=float32)

Functions: sort (a sorted copy, or into out), sort_ (in place), argsort (the stable permutation),
sort_by_key / sort_by_key_ (keys with values carried along), devices(). Every function takes
context=: a Context picks the device and is reused across calls; without one, a default Context
is created on first use (the best device, or the one GPUSORT_DEVICE names).

Keys are 1-D arrays of uint32, int32, float32, uint64, int64 or float64; values any dtype 4 or 8
bytes wide (not object). C-contiguous, aligned, native-byte-order arrays go to the device as they
are; other layouts are copied (strided, byte-swapped, misaligned), and in-place functions write
the result back. Results equal NumPy's stable sort: np.sort(a, kind="stable") and
np.argsort(a, kind="stable"), bit for bit (see sort() for floats). The GIL is released while the
GPU works; a Ctrl-C meanwhile raises KeyboardInterrupt once the GPU call has returned.
"""

import threading

import numpy as np

from . import _core

__all__ = ["Context", "DeviceInfo", "Error", "argsort", "default_context", "devices", "sort",
           "sort_", "sort_by_key", "sort_by_key_", "ALGORITHMS"]

Error = _core.Error
DeviceInfo = _core.DeviceInfo

#: The algorithm names that algorithm= takes. "automatic" picks a stable one by size; "bitonic"
#: is not stable; "odd_even" sorts only arrays that fit one workgroup (a few thousand keys).
ALGORITHMS = ("automatic", "onesweep", "radix_reduce_scan", "bitonic", "odd_even", "partition")

_KEY_KINDS = "uif"


class Context:
    """A Vulkan device to sort on, reused across calls (creating one takes a while).

    device: an index into devices() or a case-insensitive substring of a device name; None picks
    GPUSORT_DEVICE, else the best device (discrete GPU, then integrated, virtual, CPU such as
    lavapipe). validation=True enables the Khronos validation layer (also GPUSORT_VALIDATION=1).
    """

    def __init__(self, device=None, *, validation=False):
        self._impl = _core.Context("" if device is None else str(device), bool(validation))

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


def _options(a, descending, algorithm, begin_bit, end_bit, total_order, context):
    if algorithm is None:
        algorithm = "automatic"
    if algorithm not in ALGORITHMS:
        raise ValueError(f"gpusort: unknown algorithm {algorithm!r} (one of {', '.join(ALGORITHMS)})")
    width = a.dtype.itemsize * 8
    if begin_bit is None and end_bit is None:
        begin, end = 0, 0
    else:
        begin = 0 if begin_bit is None else int(begin_bit)
        end = width if end_bit is None else int(end_bit)
        if not 0 <= begin < end <= width:
            raise ValueError(f"gpusort: bits [{begin}, {end}) are not a range within the "
                             f"{width}-bit key")
        if a.dtype.kind == "f" and not total_order and (begin, end) != (0, width):
            raise ValueError("gpusort: begin_bit/end_bit of float keys select bits of IEEE "
                             "totalOrder; pass total_order=True")
    context = default_context() if context is None else context
    if not isinstance(context, Context):
        raise TypeError(f"gpusort: context must be a gpusort.Context, not {type(context).__name__}")
    return dict(context=context._impl, descending=bool(descending), algorithm=algorithm,
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

def sort(a, *, descending=False, algorithm="automatic", begin_bit=None, end_bit=None, out=None,
         total_order=False, context=None):
    """Returns a sorted copy of the 1-D array a, or sorts it into out and returns out.

    out, if given, is an array of a's shape and dtype; a C-contiguous native one is sorted where
    it is (a is copied into it, then sorted there: out may be a itself). The result has a's dtype,
    byte order included.
    """
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
            out[...] = sort(a, descending=descending, algorithm=algorithm, begin_bit=begin_bit,
                            end_bit=end_bit, total_order=total_order, context=context)
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
          total_order=False, context=None):
    """Sorts the 1-D array a in place and returns it.

    a must be a writable numpy.ndarray (a read-only one raises ValueError). A C-contiguous,
    aligned, native-byte-order array is sorted with no host copy; others go through one.
    """
    _check_writable(a, "array")
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
            dtype=np.int64, total_order=False, context=None):
    """Returns the stable permutation that sorts the 1-D array a: a[argsort(a)] == sort(a).

    dtype: np.int64 (default, like np.argsort: equal to np.argsort(a, kind="stable")) or
    np.uint32 (half the memory; a is at most 2^31 - 1 long). a is not modified. The indices come
    from sorting (a copy of a, 0..n-1) by key; with algorithm="bitonic" equal keys' indices may
    come in any order.
    """
    a = np.asarray(a)
    _check_keys(a, "array")
    index_dtype = np.dtype(dtype)
    if index_dtype not in (np.dtype(np.int64), np.dtype(np.uint32)):
        raise TypeError(f"gpusort: argsort dtype must be int64 or uint32, not {index_dtype}")
    opts = _options(a, descending, algorithm, begin_bit, end_bit, total_order, context)
    keys = a if _direct(a) else _native_copy(a)
    return _core.argsort(keys=keys, index_bytes=index_dtype.itemsize, **opts)


def sort_by_key(keys, values, *, descending=False, algorithm="automatic", begin_bit=None,
                end_bit=None, total_order=False, context=None):
    """Returns (sorted keys, values in the same order) as new arrays; the inputs are not modified.

    Equal keys keep their input order, their values with them (except with "bitonic"). Values are
    any 1-D array 4 or 8 bytes per element (not object), moved as raw bytes.
    """
    keys = np.asarray(keys)
    values = np.asarray(values)
    _check_keys(keys)
    _check_values(values, keys.shape[0])
    # Argument errors before the copies.
    _options(keys, descending, algorithm, begin_bit, end_bit, total_order, context)
    sorted_keys = np.array(keys, order="C", copy=True)
    sorted_values = np.array(values, order="C", copy=True)
    return sort_by_key_(sorted_keys, sorted_values, descending=descending, algorithm=algorithm,
                        begin_bit=begin_bit, end_bit=end_bit, total_order=total_order,
                        context=context)


def sort_by_key_(keys, values, *, descending=False, algorithm="automatic", begin_bit=None,
                 end_bit=None, total_order=False, context=None):
    """Sorts keys in place and values with them; returns (keys, values).

    Both must be writable numpy.ndarrays that do not share memory.
    """
    _check_writable(keys, "keys")
    _check_writable(values, "values")
    _check_keys(keys)
    _check_values(values, keys.shape[0])
    if np.may_share_memory(keys, values) and np.shares_memory(keys, values):
        raise ValueError("gpusort: keys and values share memory")
    opts = _options(keys, descending, algorithm, begin_bit, end_bit, total_order, context)
    if algorithm == "bitonic" and keys.dtype.kind == "f" and not total_order:
        # Unstable: the zeros and NaNs restored after the sort could not be matched to their
        # values, so both are gathered through the permutation instead.
        order = argsort(keys, descending=descending, algorithm=algorithm, begin_bit=begin_bit,
                        end_bit=end_bit, total_order=total_order, context=context)
        keys[...] = keys[order]
        values[...] = values[order]
        return keys, values
    work_keys = keys if _direct(keys) else _native_copy(keys)
    # Values are moved as raw bytes: their byte order does not matter.
    work_values = values if _direct(values, native=False) else np.array(values, order="C")
    _core.sort_inplace(keys=work_keys, values=work_values, **opts)
    if work_keys is not keys:
        keys[...] = work_keys
    if work_values is not values:
        values[...] = work_values
    return keys, values


for _f in (sort, sort_, argsort, sort_by_key, sort_by_key_):
    _f.__doc__ += _ORDER_DOC
del _f
