// gpusort._core: the pybind11 half of the Python package. It takes 1-D, C-contiguous, aligned,
// native-byte-order arrays whose dtypes the Python half (gpusort/__init__.py) has already checked,
// results included (the Python half allocates every array; see below on NumPy 2), runs the host
// passes that make float keys order like NumPy, and calls the library with the GIL released.
//
// NumPy order from the library's IEEE totalOrder: NumPy treats -0.0 == +0.0 and every NaN as equal
// to every other NaN and greater than +inf. So the keys are canonicalized (-0.0 -> +0.0, any NaN ->
// one positive quiet NaN, the greatest key in totalOrder), sorted stably, and the original zeros
// and NaNs are written back: a stable sort leaves all zeros in one run and all NaNs in another,
// each in input order, at positions known from the counts of negative and positive keys. Only the
// sign of each zero and the bits of each NaN are kept aside; arrays with no -0.0 and no NaN other
// than the canonical one need no write at all (one read-only pass decides).
//
// GPU arrays (PyTorch, CuPy, any DLPack or __cuda_array_interface__ producer on a CUDA device):
// the package reads their device address, dtype and stream (dlpack_info reads a DLPack capsule:
// DLPack's C ABI is declared below, no header needed) and calls the CUDA face (gpusort/cuda.hpp)
// on those addresses and that stream, with NumPy's order made on the GPU
// (Options::numpy_float_order). Nothing here includes a CUDA header or waits on the GPU.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <gpusort/cuda.hpp>
#include <gpusort/gpusort.hpp>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "primitives/key_order.h"

namespace py = pybind11;

namespace {

// The bits of a float key seen as an unsigned integer U (uint32_t for f32, uint64_t for f64), and
// its canonical form in NumPy's order (src/primitives/key_order.h).
template <class U> using FloatBits = gpusort::FloatKeyBits<U>;

// Whether any key differs from its canonical form: a branch-free read-only pass the compiler
// vectorizes, so arrays without -0.0 or odd NaNs pay only a read of the keys.
template <class U>
bool needs_canonicalization(const U* keys, uint64_t n) {
  using B = FloatBits<U>;
  U any = 0;
  for (uint64_t i = 0; i < n; ++i) {
    U bits = keys[i];
    any |=
        U(bits == B::sign) | (U((bits & B::magnitude) > B::infinity) & U(bits != B::canonical_nan));
  }
  return any != 0;
}

// The zeros and NaNs of an array in input order, and where their runs lie once it is sorted.
template <class U>
struct SetAside {
  std::vector<bool> zero_negative;  // per zero: was it -0.0
  std::vector<U> nan_bits;          // per NaN: its bits
  uint64_t negatives = 0;           // keys < 0 (not NaN, not zero)
  uint64_t n = 0;

  uint64_t zeros() const { return zero_negative.size(); }
  uint64_t nans() const { return nan_bits.size(); }
  uint64_t positives() const { return n - negatives - zeros() - nans(); }
};

// Canonicalizes keys in place and returns what it replaced.
template <class U>
SetAside<U> canonicalize(U* keys, uint64_t n) {
  using B = FloatBits<U>;
  SetAside<U> aside;
  aside.n = n;
  for (uint64_t i = 0; i < n; ++i) {
    U bits = keys[i], magnitude = bits & B::magnitude;
    // Zeros and NaNs (magnitude 0 wraps around) are rare in most data, so this branch is well
    // predicted and the other keys cost a branch-free count.
    if (U(magnitude - 1) >= B::infinity) {
      if (magnitude) {
        aside.nan_bits.push_back(bits);
        keys[i] = B::canonical_nan;
      } else {
        aside.zero_negative.push_back(bits != 0);
        keys[i] = 0;
      }
    } else {
      aside.negatives += bits >> (B::width - 1);
    }
  }
  return aside;
}

// Writes the original zeros and NaNs over their runs in the sorted keys. Ascending: negatives,
// zeros, positives, NaNs; descending (NaN the greatest): NaNs, positives, zeros, negatives.
template <class U>
void restore_sorted(U* keys, const SetAside<U>& aside, bool descending) {
  using B = FloatBits<U>;
  uint64_t zero_start = descending ? aside.nans() + aside.positives() : aside.negatives;
  uint64_t nan_start = descending ? 0 : aside.n - aside.nans();
  for (uint64_t j = 0; j < aside.zeros(); ++j)
    keys[zero_start + j] = aside.zero_negative[j] ? B::sign : U(0);
  std::copy(aside.nan_bits.begin(), aside.nan_bits.end(), keys + nan_start);
}

// Undoes canonicalize() on keys the sort left untouched (it failed): the zeros and NaNs are still
// where they were, in the same order.
template <class U>
void restore_unsorted(U* keys, const SetAside<U>& aside) {
  using B = FloatBits<U>;
  uint64_t zero = 0, nan = 0;
  for (uint64_t i = 0; i < aside.n; ++i) {
    if (keys[i] == B::canonical_nan)
      keys[i] = aside.nan_bits[nan++];
    else if (keys[i] == 0)
      keys[i] = aside.zero_negative[zero++] ? B::sign : U(0);
  }
}

struct SortArgs {
  gpusort::KeyType key_type;
  gpusort::SortOptions options;
  bool numpy_order;  // float keys in NumPy's order rather than totalOrder

  bool canonicalizes() const {
    return numpy_order && (key_type == gpusort::KeyType::f32 || key_type == gpusort::KeyType::f64);
  }
};

// NumPy 1 and 2 alike, whatever pybind11 the module is built with. pybind11 before 2.12 reads the
// dtype struct (PyArray_Descr) in NumPy 1's layout, and NumPy 2 moved its elsize and alignment:
// their old place holds the two halves of NumPy 2's 64-bit flags, 0 for the number dtypes. Read so
// are py::dtype::itemsize(), alignment(), has_fields(), flags(), py::array::itemsize(), nbytes(),
// index_at(), and the strides of every array pybind11 makes without being given them
// (py::array_t<T>(n), py::array(dtype, shape), py::array()), which is how argsort's indices came
// out with strides (0,) on NumPy 2. This module therefore reads dtypes through their Python
// attributes, reads arrays only through the fields of the array struct that NumPy 2 kept in place
// (data, nd, dimensions, strides, flags), checks each array it is given against those
// (checked_array) and makes no arrays: the package allocates every one with NumPy and passes it in.
// At import the package compares this module's reading of a few arrays (array_layout) with NumPy's
// own.
char dtype_kind(const py::dtype& dtype) {
  return dtype.attr("kind").cast<std::string>().at(0);
}
int64_t dtype_itemsize(const py::dtype& dtype) {
  return dtype.attr("itemsize").cast<int64_t>();
}

gpusort::KeyType key_type_of(const py::dtype& dtype) {
  char kind = dtype_kind(dtype);
  auto size = dtype_itemsize(dtype);
  if (size == 4 || size == 8) {
    bool wide = size == 8;
    if (kind == 'u') return wide ? gpusort::KeyType::u64 : gpusort::KeyType::u32;
    if (kind == 'i') return wide ? gpusort::KeyType::i64 : gpusort::KeyType::i32;
    if (kind == 'f') return wide ? gpusort::KeyType::f64 : gpusort::KeyType::f32;
  }
  throw py::type_error("gpusort: unsupported key dtype " + py::repr(dtype).cast<std::string>());
}

// The contract with the Python half, checked again so that misuse of _core cannot corrupt memory:
// a 1-D numpy.ndarray, C-contiguous, aligned, its stride its itemsize (NumPy's own flags say
// C-contiguous only then; checked again against the dtype's Python itemsize), writable if asked.
py::array checked_array(const py::object& object, const char* what, bool writable) {
  auto error = [what](const std::string& problem) {
    return py::value_error(std::string("gpusort._core: ") + what + " " + problem);
  };
  if (!py::isinstance<py::array>(object))
    throw py::type_error(std::string("gpusort._core: ") + what + " must be a numpy.ndarray");
  auto a = py::reinterpret_borrow<py::array>(object);
  if (a.ndim() != 1) throw error("must be 1-D");
  int flags = a.flags();
  if (!(flags & py::array::c_style) || !(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_))
    throw error("must be C-contiguous, aligned");
  if (a.shape(0) > 1 && a.strides(0) != dtype_itemsize(a.dtype()))
    throw error("has stride " + std::to_string(a.strides(0)) + " for items of " +
                std::to_string(dtype_itemsize(a.dtype())) + " bytes");
  if (writable && !a.writeable()) throw error("must be writable");
  return a;
}

// What this module reads of an array: (data address, ndim, shape, strides, flags). The package
// compares it with NumPy's own view of a few arrays at import.
py::tuple array_layout(const py::object& object) {
  if (!py::isinstance<py::array>(object))
    throw py::type_error("gpusort._core: array_layout takes a numpy.ndarray");
  auto a = py::reinterpret_borrow<py::array>(object);
  py::list shape, strides;
  for (py::ssize_t d = 0; d < a.ndim(); ++d) {
    shape.append(a.shape(d));
    strides.append(a.strides(d));
  }
  return py::make_tuple(reinterpret_cast<uintptr_t>(a.data()), a.ndim(), py::tuple(shape),
                        py::tuple(strides), a.flags());
}

SortArgs sort_args(const py::array& keys, bool descending, const std::string& algorithm,
                   uint32_t begin_bit, uint32_t end_bit, bool numpy_order) {
  SortArgs args{key_type_of(keys.dtype()), {}, numpy_order};
  args.options.descending = descending;
  args.options.algorithm = gpusort::parse_algorithm(algorithm);
  args.options.begin_bit = begin_bit;
  args.options.end_bit = end_bit;
  return args;
}

// After a blocking call: a Ctrl-C that arrived meanwhile becomes KeyboardInterrupt now.
void raise_pending_signals() {
  if (PyErr_CheckSignals() != 0) throw py::error_already_set();
}

template <class U>
void sort_numpy_order(gpusort::Context& ctx, const SortArgs& args, U* keys, uint64_t n,
                      void* values, uint32_t value_bytes) {
  if (!needs_canonicalization(keys, n)) {
    gpusort::sort_raw(ctx, args.key_type, keys, n, values, value_bytes, args.options);
    return;
  }
  SetAside<U> aside = canonicalize(keys, n);
  try {
    gpusort::sort_raw(ctx, args.key_type, keys, n, values, value_bytes, args.options);
  } catch (...) {
    restore_unsorted(keys, aside);
    throw;
  }
  restore_sorted(keys, aside, args.options.descending);
}

// Sorts keys (and values with them, unless values is None) in place.
void sort_inplace(gpusort::Context& ctx, const py::object& key_object,
                  const py::object& value_object, bool descending, const std::string& algorithm,
                  uint32_t begin_bit, uint32_t end_bit, bool numpy_order) {
  py::array keys = checked_array(key_object, "keys", true);
  SortArgs args = sort_args(keys, descending, algorithm, begin_bit, end_bit, numpy_order);
  void* value_data = nullptr;
  uint32_t value_bytes = 0;
  if (!value_object.is_none()) {
    py::array values = checked_array(value_object, "values", true);
    if (values.size() != keys.size())
      throw py::value_error("gpusort: " + std::to_string(keys.size()) + " keys but " +
                            std::to_string(values.size()) + " values");
    value_bytes = uint32_t(dtype_itemsize(values.dtype()));
    if (value_bytes != 4 && value_bytes != 8)
      throw py::type_error("gpusort._core: values must be 4 or 8 bytes wide");
    value_data = values.mutable_data();
  }
  // Restoring zeros under a sort that may reorder equal keys would pair them with other values.
  if (value_data && args.canonicalizes() && args.options.algorithm == gpusort::Algorithm::bitonic)
    throw py::value_error("gpusort._core: NumPy-order sort_by_key needs a stable algorithm");
  void* key_data = keys.mutable_data();
  uint64_t n = uint64_t(keys.size());
  {
    py::gil_scoped_release release;
    if (args.canonicalizes() && args.key_type == gpusort::KeyType::f32)
      sort_numpy_order(ctx, args, static_cast<uint32_t*>(key_data), n, value_data, value_bytes);
    else if (args.canonicalizes())
      sort_numpy_order(ctx, args, static_cast<uint64_t*>(key_data), n, value_data, value_bytes);
    else
      gpusort::sort_raw(ctx, args.key_type, key_data, n, value_data, value_bytes, args.options);
  }
  raise_pending_signals();
}

// Sorts the keys of `source` into `destination` (same size and dtype, distinct memory): the
// library streams them from one through its staging memory into the other, with no host copy
// between. Where the NumPy order needs its host pass (a -0.0 or a NaN but the default one), the
// keys are copied first and sorted in place.
void sort_copy(gpusort::Context& ctx, const py::object& source_object,
               const py::object& destination_object, bool descending, const std::string& algorithm,
               uint32_t begin_bit, uint32_t end_bit, bool numpy_order) {
  py::array source = checked_array(source_object, "source", false);
  py::array destination = checked_array(destination_object, "destination", true);
  if (source.size() != destination.size() ||
      !source.dtype().attr("__eq__")(destination.dtype()).cast<bool>())
    throw py::value_error("gpusort._core: source and destination differ in size or dtype");
  SortArgs args = sort_args(source, descending, algorithm, begin_bit, end_bit, numpy_order);
  const auto* from = static_cast<const char*>(source.data());
  auto* to = static_cast<char*>(destination.mutable_data());
  const uint64_t n = uint64_t(source.size());
  const uint64_t bytes = n * uint64_t(dtype_itemsize(source.dtype()));
  if (from < to + bytes && to < from + bytes)
    throw py::value_error("gpusort._core: source and destination overlap");
  {
    py::gil_scoped_release release;
    bool in_place = false;
    if (args.canonicalizes())
      in_place = args.key_type == gpusort::KeyType::f32
                     ? needs_canonicalization(reinterpret_cast<const uint32_t*>(from), n)
                     : needs_canonicalization(reinterpret_cast<const uint64_t*>(from), n);
    if (in_place) {
      std::memcpy(to, from, bytes);
      if (args.key_type == gpusort::KeyType::f32)
        sort_numpy_order(ctx, args, reinterpret_cast<uint32_t*>(to), n, nullptr, 0);
      else
        sort_numpy_order(ctx, args, reinterpret_cast<uint64_t*>(to), n, nullptr, 0);
    } else {
      gpusort::HostStream stream{[from](uint64_t offset, void* staging, uint64_t size) {
                                   std::memcpy(staging, from + offset, size);
                                 },
                                 [to](uint64_t offset, const void* staging, uint64_t size) {
                                   std::memcpy(to + offset, staging, size);
                                 }};
      gpusort::sort_streamed(ctx, args.key_type, n, stream, 0, {}, args.options);
    }
  }
  raise_pending_signals();
}

template <class U>
void copy_keys(const U* from, U* to, uint64_t n, bool canonical) {
  if (!canonical) {
    std::memcpy(to, from, n * sizeof(U));
    return;
  }
  for (uint64_t i = 0; i < n; ++i) to[i] = FloatBits<U>::canonical(from[i]);
}

// Segment offsets (S + 1 CSR offsets, 4- or 8-byte integers, checked by the library), or none
// where `offsets` is unset.
gpusort::SegmentOffsets segment_offsets_of(const std::optional<py::array>& offsets) {
  if (!offsets) return {};
  const char kind = dtype_kind(offsets->dtype());
  const auto bytes = uint32_t(dtype_itemsize(offsets->dtype()));
  if (!((kind == 'u' || kind == 'i') && (bytes == 4 || bytes == 8)))
    throw py::type_error("gpusort._core: offsets must be 4- or 8-byte integers");
  return {offsets->data(), bytes, uint64_t(offsets->size())};
}

// Top-k: the first k of the stable sort of keys (per segment when offsets is not None), into
// keys_out, values_out (with values) and indices (uint32 or int64), arrays the package made with
// NumPy; None for the outputs not wanted. The NumPy float order sorts a canonical copy of the keys
// (zeros and NaNs made one) and takes the result's keys from the input by their positions.
void topk(gpusort::Context& ctx, const py::object& key_object, uint64_t k,
          const py::object& keys_out_object, const py::object& value_object,
          const py::object& values_out_object, const py::object& index_object,
          const py::object& offset_object, bool descending, const std::string& algorithm,
          uint32_t begin_bit, uint32_t end_bit, bool numpy_order) {
  py::array keys = checked_array(key_object, "keys", false);
  SortArgs args = sort_args(keys, descending, algorithm, begin_bit, end_bit, numpy_order);
  const uint32_t key_size = gpusort::key_bytes(args.key_type);
  const uint64_t n = uint64_t(keys.size());
  std::optional<py::array> keys_out, values, values_out, indices, offsets;
  if (!keys_out_object.is_none()) keys_out = checked_array(keys_out_object, "keys_out", true);
  if (!value_object.is_none()) {
    values = checked_array(value_object, "values", false);
    values_out = checked_array(values_out_object, "values_out", true);
  }
  if (!index_object.is_none()) indices = checked_array(index_object, "indices", true);
  if (!offset_object.is_none()) offsets = checked_array(offset_object, "offsets", false);
  uint32_t index_bytes = 0;
  if (indices) {
    const char kind = dtype_kind(indices->dtype());
    index_bytes = uint32_t(dtype_itemsize(indices->dtype()));
    if (!(kind == 'u' && index_bytes == 4) && !(kind == 'i' && index_bytes == 8))
      throw py::type_error("gpusort._core: indices must be uint32 or int64");
  }
  uint32_t value_bytes = values ? uint32_t(dtype_itemsize(values->dtype())) : 0;
  const gpusort::SegmentOffsets segment_offsets = segment_offsets_of(offsets);
  const uint64_t results =
      offsets ? gpusort::topk_segments_count(segment_offsets, k) : std::min(k, n);
  auto check_size = [&](const std::optional<py::array>& a, const char* what) {
    if (a && uint64_t(a->size()) != results)
      throw py::value_error("gpusort._core: " + std::string(what) + " holds " +
                            std::to_string(a->size()) + ", not " + std::to_string(results));
  };
  check_size(keys_out, "keys_out");
  check_size(values_out, "values_out");
  check_size(indices, "indices");
  {
    py::gil_scoped_release release;
    const bool canonical = args.canonicalizes();
    const void* key_data = keys.data();
    std::vector<char> copy;
    if (canonical) {
      copy.resize(n * key_size);
      if (key_size == 4)
        copy_keys(static_cast<const uint32_t*>(key_data), reinterpret_cast<uint32_t*>(copy.data()),
                  n, true);
      else
        copy_keys(static_cast<const uint64_t*>(key_data), reinterpret_cast<uint64_t*>(copy.data()),
                  n, true);
      key_data = copy.data();
    }
    // The canonical keys are not the caller's: their positions give the keys back.
    std::vector<uint32_t> positions;
    void* index_data = indices ? indices->mutable_data() : nullptr;
    uint32_t index_width = index_bytes;
    void* keys_to = keys_out ? keys_out->mutable_data() : nullptr;
    if (canonical && keys_to) {
      positions.resize(results);
      index_data = positions.data();
      index_width = 4;
      keys_to = nullptr;
    }
    const void* value_data = values ? values->data() : nullptr;
    void* values_to = values_out ? values_out->mutable_data() : nullptr;
    if (offsets)
      gpusort::topk_segments_raw(ctx, args.key_type, n, key_data, segment_offsets, k, keys_to,
                                 value_bytes, value_data, values_to, index_data, index_width,
                                 args.options);
    else
      gpusort::topk_raw(ctx, args.key_type, n, key_data, k, keys_to, value_bytes, value_data,
                        values_to, index_data, index_width, args.options);
    if (!positions.empty()) {
      auto* out = static_cast<char*>(keys_out->mutable_data());
      const auto* from = static_cast<const char*>(keys.data());
      for (uint64_t i = 0; i < results; ++i)
        std::memcpy(out + i * key_size, from + uint64_t(positions[i]) * key_size, key_size);
      if (indices) {
        if (index_bytes == 4)
          std::memcpy(indices->mutable_data(), positions.data(), results * 4);
        else
          std::copy(positions.begin(), positions.end(),
                    static_cast<int64_t*>(indices->mutable_data()));
      }
    }
  }
  raise_pending_signals();
}

// Writes the permutation that sorts keys stably into `indices` (as many, uint32 or int64, made by
// the package with NumPy); with offsets (not None), each segment's on its own (positions in the
// whole array).
void argsort(gpusort::Context& ctx, const py::object& key_object, const py::object& index_object,
             bool descending, const std::string& algorithm, uint32_t begin_bit, uint32_t end_bit,
             bool numpy_order, const py::object& offset_object) {
  py::array keys = checked_array(key_object, "keys", false);
  py::array indices = checked_array(index_object, "indices", true);
  std::optional<py::array> offsets;
  if (!offset_object.is_none()) offsets = checked_array(offset_object, "offsets", false);
  const gpusort::SegmentOffsets segment_offsets = segment_offsets_of(offsets);
  SortArgs args = sort_args(keys, descending, algorithm, begin_bit, end_bit, numpy_order);
  const char index_kind = dtype_kind(indices.dtype());
  const int64_t index_bytes = dtype_itemsize(indices.dtype());
  if (!(index_kind == 'u' && index_bytes == 4) && !(index_kind == 'i' && index_bytes == 8))
    throw py::type_error("gpusort._core: indices must be uint32 or int64");
  if (indices.size() != keys.size())
    throw py::value_error("gpusort._core: " + std::to_string(keys.size()) + " keys but " +
                          std::to_string(indices.size()) + " indices");
  const uint64_t n = uint64_t(keys.size());
  // The library's argsort: the keys stream up (canonicalized piece by piece on their way into
  // the staging memory where the NumPy order needs it), the indices are made on the GPU, and only
  // they come down, straight into `indices` (int64 is the library's u64 for n < 2^63).
  auto* index_data = static_cast<char*>(indices.mutable_data());
  const auto* key_data = static_cast<const char*>(keys.data());
  const uint32_t key_size = gpusort::key_bytes(args.key_type);
  {
    py::gil_scoped_release release;
    const bool canonical = args.canonicalizes();
    gpusort::HostStream key_stream{
        [=](uint64_t offset, void* staging, uint64_t bytes) {
          // Pieces start and end on element boundaries (multiples of 256 bytes in staging).
          if (!canonical || offset % key_size || bytes % key_size) {
            if (canonical) throw gpusort::Error("gpusort._core: a key piece splits an element");
            std::memcpy(staging, key_data + offset, bytes);
          } else if (key_size == 4) {
            copy_keys(reinterpret_cast<const uint32_t*>(key_data + offset),
                      static_cast<uint32_t*>(staging), bytes / 4, true);
          } else {
            copy_keys(reinterpret_cast<const uint64_t*>(key_data + offset),
                      static_cast<uint64_t*>(staging), bytes / 8, true);
          }
        },
        {}};
    // Segments with bitonic: the library refuses them (not stable).
    if (args.options.algorithm != gpusort::Algorithm::bitonic || offsets) {
      gpusort::sort_segments_streamed(
          ctx, args.key_type, n, key_stream, 0, {}, segment_offsets,
          [index_data](uint64_t offset, const void* staging, uint64_t bytes) {
            std::memcpy(index_data + offset, staging, bytes);
          },
          uint32_t(index_bytes), args.options);
    } else {
      // The library's argsort wants a stable sort; bitonic's permutation comes from sorting
      // (a canonical copy of the keys, 0..n-1) by key, equal keys' indices in any order.
      std::vector<char> copy(n * key_size);
      key_stream.read(0, copy.data(), copy.size());
      std::vector<uint32_t> positions(n);
      std::iota(positions.begin(), positions.end(), uint32_t(0));
      gpusort::sort_raw(ctx, args.key_type, copy.data(), n, positions.data(), 4, args.options);
      if (index_bytes == 4)
        std::memcpy(index_data, positions.data(), n * 4);
      else
        std::copy(positions.begin(), positions.end(), reinterpret_cast<int64_t*>(index_data));
    }
  }
  raise_pending_signals();
}

// ---- GPU arrays: DLPack's C ABI (dlpack.h, versions 0.x and 1.x) and the CUDA face ----

struct DLDevice {
  int32_t device_type;
  int32_t device_id;
};
struct DLDataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  int32_t ndim;
  DLDataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null: compact row-major
  uint64_t byte_offset;
};
struct DLManagedTensor {  // capsule "dltensor"
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor*);
};
struct DLPackVersion {
  uint32_t major;
  uint32_t minor;
};
struct DLManagedTensorVersioned {  // capsule "dltensor_versioned" (DLPack 1.0)
  DLPackVersion version;
  void* manager_ctx;
  void (*deleter)(DLManagedTensorVersioned*);
  uint64_t flags;
  DLTensor dl_tensor;
};
constexpr uint64_t dlpack_flag_read_only = 1;

// What the package needs of a DLPack capsule, read without consuming it (the capsule keeps its
// name, and its producer frees it when it dies): (data address with the byte offset, device type,
// device id, dtype code, bits, lanes, shape, strides in elements or None, read-only, DLPack major
// version: 0 for an unversioned capsule).
py::tuple dlpack_info(const py::object& capsule) {
  PyObject* object = capsule.ptr();
  if (!PyCapsule_CheckExact(object))
    throw py::type_error("gpusort: __dlpack__() returned a " +
                         std::string(Py_TYPE(object)->tp_name) + ", not a DLPack capsule");
  const char* name = PyCapsule_GetName(object);
  const std::string capsule_name = name ? name : "";
  const DLTensor* tensor = nullptr;
  bool read_only = false;
  uint32_t major = 0;
  if (capsule_name == "dltensor") {
    auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(object, name));
    if (!managed) throw py::error_already_set();
    tensor = &managed->dl_tensor;
  } else if (capsule_name == "dltensor_versioned") {
    auto* managed = static_cast<DLManagedTensorVersioned*>(PyCapsule_GetPointer(object, name));
    if (!managed) throw py::error_already_set();
    major = managed->version.major;
    if (major != 1)
      throw py::type_error("gpusort: a DLPack " + std::to_string(major) + "." +
                           std::to_string(managed->version.minor) +
                           " tensor (gpusort reads DLPack 1.x and the unversioned 0.x)");
    read_only = (managed->flags & dlpack_flag_read_only) != 0;
    tensor = &managed->dl_tensor;
  } else {
    throw py::type_error("gpusort: __dlpack__() returned a capsule named '" + capsule_name +
                         "' (a used or foreign one), not 'dltensor' or 'dltensor_versioned'");
  }
  py::list shape, strides;
  for (int32_t d = 0; d < std::max(tensor->ndim, 0); ++d) {
    shape.append(tensor->shape[d]);
    if (tensor->strides) strides.append(tensor->strides[d]);
  }
  const uintptr_t data = reinterpret_cast<uintptr_t>(tensor->data) + tensor->byte_offset;
  py::object stride_tuple = tensor->strides ? py::object(py::tuple(strides)) : py::none();
  return py::make_tuple(data, tensor->device.device_type, tensor->device.device_id,
                        tensor->dtype.code, tensor->dtype.bits, tensor->dtype.lanes,
                        py::tuple(shape), stride_tuple, read_only, major);
}

gpusort::cuda::Options cuda_options(bool descending, uint32_t begin_bit, uint32_t end_bit,
                                    bool numpy_order) {
  gpusort::cuda::Options options;
  options.descending = descending;
  options.begin_bit = begin_bit;
  options.end_bit = end_bit;
  options.numpy_float_order = numpy_order;
  return options;
}

template <class T>
T* device_pointer(uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// sorted_copy: the scratch of cuda_sort with keys_in (NumPy's order then sets nothing aside).
uint64_t cuda_scratch_bytes(const std::string& key_type, uint32_t value_bytes, uint64_t n,
                            bool descending, uint32_t begin_bit, uint32_t end_bit,
                            bool numpy_order, bool sorted_copy) {
  auto options = cuda_options(descending, begin_bit, end_bit, numpy_order);
  options.keys_in = sorted_copy ? reinterpret_cast<const void*>(uintptr_t(1)) : nullptr;
  return gpusort::cuda::scratch_bytes(gpusort::parse_key_type(key_type), value_bytes, n, options);
}

uint64_t cuda_argsort_scratch_bytes(const std::string& key_type, uint32_t index_bytes, uint64_t n,
                                    bool descending, uint32_t begin_bit, uint32_t end_bit,
                                    bool numpy_order, bool sorted_keys) {
  auto options = cuda_options(descending, begin_bit, end_bit, numpy_order);
  options.sorted_keys = sorted_keys ? reinterpret_cast<void*>(uintptr_t(1)) : nullptr;
  return gpusort::cuda::argsort_scratch_bytes(gpusort::parse_key_type(key_type), index_bytes, n,
                                              options);
}

// Enqueues the sort of n keys (and values: value_bytes 0, 4 or 8) at device addresses, in place
// (or, keys_in not 0, read from keys_in into keys), on `stream` (a CUstream handle; 0: the legacy
// default stream). scratch 0: the face allocates.
void cuda_sort(const std::string& key_type, uintptr_t keys, uintptr_t values,
               uint32_t value_bytes, uint64_t n, uintptr_t stream, bool descending,
               uint32_t begin_bit, uint32_t end_bit, bool numpy_order, uintptr_t keys_in,
               uintptr_t scratch, uint64_t scratch_size) {
  auto options = cuda_options(descending, begin_bit, end_bit, numpy_order);
  options.keys_in = device_pointer<const void>(keys_in);
  options.scratch = device_pointer<void>(scratch);
  options.scratch_size = scratch ? scratch_size : 0;
  const gpusort::KeyType type = gpusort::parse_key_type(key_type);
  py::gil_scoped_release release;
  gpusort::cuda::sort_raw(type, device_pointer<void>(keys), device_pointer<void>(values),
                          values ? value_bytes : 0, n, device_pointer<CUstream_st>(stream),
                          options);
}

// Enqueues the argsort (indices u32 or u64) and, where sorted_keys is not 0, the sorted keys.
void cuda_argsort(const std::string& key_type, uintptr_t keys, uintptr_t indices,
                  uint32_t index_bytes, uint64_t n, uintptr_t stream, bool descending,
                  uint32_t begin_bit, uint32_t end_bit, bool numpy_order, uintptr_t sorted_keys,
                  uintptr_t scratch, uint64_t scratch_size) {
  auto options = cuda_options(descending, begin_bit, end_bit, numpy_order);
  options.sorted_keys = device_pointer<void>(sorted_keys);
  options.scratch = device_pointer<void>(scratch);
  options.scratch_size = scratch ? scratch_size : 0;
  const gpusort::KeyType type = gpusort::parse_key_type(key_type);
  py::gil_scoped_release release;
  gpusort::cuda::argsort_raw(type, device_pointer<const void>(keys), device_pointer<void>(indices),
                             index_bytes, n, device_pointer<CUstream_st>(stream), options);
}

// The segmented sort's scratch (index_bytes 0: a sort with value_bytes values; else the argsort
// with index_bytes indices).
uint64_t cuda_segmented_scratch_bytes(const std::string& key_type, uint32_t value_bytes,
                                      uint32_t index_bytes, uint64_t n, uint64_t segments,
                                      bool descending, uint32_t begin_bit, uint32_t end_bit,
                                      bool numpy_order) {
  const auto options = cuda_options(descending, begin_bit, end_bit, numpy_order);
  const gpusort::KeyType type = gpusort::parse_key_type(key_type);
  return index_bytes
             ? gpusort::cuda::segmented_argsort_scratch_bytes(type, index_bytes, n, segments,
                                                              options)
             : gpusort::cuda::segmented_scratch_bytes(type, value_bytes, n, segments, options);
}

// Enqueues the segmented sort of n keys (and values) in place: `segments` segments of the
// S + 1 offsets (offset_bytes 4 or 8) at a device address.
void cuda_segmented_sort(const std::string& key_type, uintptr_t keys, uintptr_t values,
                         uint32_t value_bytes, uint64_t n, uintptr_t offsets,
                         uint32_t offset_bytes, uint64_t segments, uintptr_t stream,
                         bool descending, uint32_t begin_bit, uint32_t end_bit, bool numpy_order,
                         uintptr_t scratch, uint64_t scratch_size) {
  auto options = cuda_options(descending, begin_bit, end_bit, numpy_order);
  options.scratch = device_pointer<void>(scratch);
  options.scratch_size = scratch ? scratch_size : 0;
  const gpusort::KeyType type = gpusort::parse_key_type(key_type);
  py::gil_scoped_release release;
  gpusort::cuda::segmented_sort_raw(type, device_pointer<void>(keys), device_pointer<void>(values),
                                    values ? value_bytes : 0, n,
                                    device_pointer<const void>(offsets), offset_bytes, segments,
                                    device_pointer<CUstream_st>(stream), options);
}

// Enqueues the segmented argsort (indices u32 or u64, positions in the whole array).
void cuda_segmented_argsort(const std::string& key_type, uintptr_t keys, uintptr_t indices,
                            uint32_t index_bytes, uint64_t n, uintptr_t offsets,
                            uint32_t offset_bytes, uint64_t segments, uintptr_t stream,
                            bool descending, uint32_t begin_bit, uint32_t end_bit,
                            bool numpy_order, uintptr_t scratch, uint64_t scratch_size) {
  auto options = cuda_options(descending, begin_bit, end_bit, numpy_order);
  options.scratch = device_pointer<void>(scratch);
  options.scratch_size = scratch ? scratch_size : 0;
  const gpusort::KeyType type = gpusort::parse_key_type(key_type);
  py::gil_scoped_release release;
  gpusort::cuda::segmented_argsort_raw(type, device_pointer<const void>(keys),
                                       device_pointer<void>(indices), index_bytes, n,
                                       device_pointer<const void>(offsets), offset_bytes,
                                       segments, device_pointer<CUstream_st>(stream), options);
}

uint64_t cuda_topk_scratch_bytes(const std::string& key_type, uint64_t n, uint64_t k,
                                 bool descending, uint32_t begin_bit, uint32_t end_bit,
                                 bool numpy_order) {
  return gpusort::cuda::topk_scratch_bytes(gpusort::parse_key_type(key_type), n, k,
                                           cuda_options(descending, begin_bit, end_bit,
                                                        numpy_order));
}

// Enqueues the top-k of n keys at a device address: keys_out (k keys), values_out (k values of
// value_bytes, from values), indices (k of index_bytes), each 0 where not wanted.
void cuda_topk(const std::string& key_type, uintptr_t keys, uint64_t n, uint64_t k,
               uintptr_t keys_out, uintptr_t values, uintptr_t values_out, uint32_t value_bytes,
               uintptr_t indices, uint32_t index_bytes, uintptr_t stream, bool descending,
               uint32_t begin_bit, uint32_t end_bit, bool numpy_order, uintptr_t scratch,
               uint64_t scratch_size) {
  auto options = cuda_options(descending, begin_bit, end_bit, numpy_order);
  options.scratch = device_pointer<void>(scratch);
  options.scratch_size = scratch ? scratch_size : 0;
  const gpusort::KeyType type = gpusort::parse_key_type(key_type);
  py::gil_scoped_release release;
  gpusort::cuda::topk_raw(type, device_pointer<const void>(keys), n, k,
                          device_pointer<void>(keys_out), device_pointer<const void>(values),
                          device_pointer<void>(values_out), values ? value_bytes : 0,
                          device_pointer<void>(indices), indices ? index_bytes : 0,
                          device_pointer<CUstream_st>(stream), options);
}

uint64_t cuda_topk_rows_scratch_bytes(const std::string& key_type, uint64_t rows,
                                      uint64_t row_length, uint64_t k, bool descending,
                                      uint32_t begin_bit, uint32_t end_bit, bool numpy_order) {
  return gpusort::cuda::topk_rows_scratch_bytes(gpusort::parse_key_type(key_type), rows,
                                                row_length, k,
                                                cuda_options(descending, begin_bit, end_bit,
                                                             numpy_order));
}

// Enqueues the top-k of each of `rows` rows of row_length keys at a device address: outputs of
// rows x min(k, row_length), positions within the row; each output 0 where not wanted.
void cuda_topk_rows(const std::string& key_type, uintptr_t keys, uint64_t rows,
                    uint64_t row_length, uint64_t k, uintptr_t keys_out, uintptr_t values,
                    uintptr_t values_out, uint32_t value_bytes, uintptr_t indices,
                    uint32_t index_bytes, uintptr_t stream, bool descending, uint32_t begin_bit,
                    uint32_t end_bit, bool numpy_order, uintptr_t scratch,
                    uint64_t scratch_size) {
  auto options = cuda_options(descending, begin_bit, end_bit, numpy_order);
  options.scratch = device_pointer<void>(scratch);
  options.scratch_size = scratch ? scratch_size : 0;
  const gpusort::KeyType type = gpusort::parse_key_type(key_type);
  py::gil_scoped_release release;
  gpusort::cuda::topk_rows_raw(type, device_pointer<const void>(keys), rows, row_length, k,
                               device_pointer<void>(keys_out), device_pointer<const void>(values),
                               device_pointer<void>(values_out), values ? value_bytes : 0,
                               device_pointer<void>(indices), indices ? index_bytes : 0,
                               device_pointer<CUstream_st>(stream), options);
}

const char* device_type_name(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual_gpu";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

}  // namespace

PYBIND11_MODULE(_core, m) {
  m.doc() = "gpusort's compiled half; use the gpusort package instead.";
  py::register_exception<gpusort::Error>(m, "Error", PyExc_RuntimeError);

  py::class_<gpusort::DeviceInfo>(m, "DeviceInfo",
                                  "A Vulkan device and the limits gpusort adapts to.")
      .def_readonly("index", &gpusort::DeviceInfo::index)
      .def_readonly("name", &gpusort::DeviceInfo::name)
      .def_readonly("driver", &gpusort::DeviceInfo::driver)
      .def_property_readonly("type",
                             [](const gpusort::DeviceInfo& d) { return device_type_name(d.type); })
      .def_readonly("vendor_id", &gpusort::DeviceInfo::vendor_id)
      .def_readonly("subgroup_size", &gpusort::DeviceInfo::subgroup_size)
      .def_readonly("shared_memory_bytes", &gpusort::DeviceInfo::shared_memory_bytes)
      .def_readonly("device_local_bytes", &gpusort::DeviceInfo::device_local_bytes)
      .def_readonly("max_allocation_bytes", &gpusort::DeviceInfo::max_allocation_bytes)
      .def_readonly("max_buffer_bytes", &gpusort::DeviceInfo::max_buffer_bytes)
      .def_readonly("sparse_binding", &gpusort::DeviceInfo::sparse_binding)
      .def_readonly("usable", &gpusort::DeviceInfo::usable)
      .def_readonly("unusable_why", &gpusort::DeviceInfo::unusable_why)
      .def("__repr__", [](const gpusort::DeviceInfo& d) {
        return "<gpusort.DeviceInfo " + std::to_string(d.index) + ": " + d.name + " (" +
               device_type_name(d.type) + (d.usable ? "" : ", unusable: " + d.unusable_why) + ")>";
      });

  py::class_<gpusort::Context>(m, "Context")
      .def(py::init([](const std::string& device, bool validation) {
             gpusort::ContextOptions options;
             options.device = device;
             options.validation = validation;
             py::gil_scoped_release release;  // creating a device compiles nothing but can take
                                              // a while (instance, layers)
             return gpusort::Context::create(options);
           }),
           py::arg("device") = "", py::arg("validation") = false)
      .def_property_readonly("device", &gpusort::Context::device_info,
                             py::return_value_policy::reference_internal)
      .def_property_readonly("validation_messages", &gpusort::Context::validation_messages);

  m.def("devices", [] { return gpusort::Context::list_devices(); });
  m.def("algorithm_names", [] { return py::tuple(py::cast(gpusort::algorithm_names())); });
  m.def("topk", &topk, py::arg("context"), py::arg("keys"), py::arg("k"), py::arg("keys_out"),
        py::arg("values"), py::arg("values_out"), py::arg("indices"), py::arg("offsets"),
        py::arg("descending"), py::arg("algorithm"), py::arg("begin_bit"), py::arg("end_bit"),
        py::arg("numpy_order"));
  m.def("sort_inplace", &sort_inplace, py::arg("context"), py::arg("keys"), py::arg("values"),
        py::arg("descending"), py::arg("algorithm"), py::arg("begin_bit"), py::arg("end_bit"),
        py::arg("numpy_order"));
  m.def("sort_copy", &sort_copy, py::arg("context"), py::arg("source"), py::arg("destination"),
        py::arg("descending"), py::arg("algorithm"), py::arg("begin_bit"), py::arg("end_bit"),
        py::arg("numpy_order"));
  m.def("argsort", &argsort, py::arg("context"), py::arg("keys"), py::arg("indices"),
        py::arg("descending"), py::arg("algorithm"), py::arg("begin_bit"), py::arg("end_bit"),
        py::arg("numpy_order"), py::arg("offsets") = py::none());
  m.def("array_layout", &array_layout, py::arg("array"));
  m.def("dlpack_info", &dlpack_info, py::arg("capsule"));
  m.def("cuda_unavailable_why", [] { return gpusort::cuda::unavailable_why(); });
  m.def("cuda_scratch_bytes", &cuda_scratch_bytes, py::arg("key_type"), py::arg("value_bytes"),
        py::arg("n"), py::arg("descending"), py::arg("begin_bit"), py::arg("end_bit"),
        py::arg("numpy_order"), py::arg("sorted_copy"));
  m.def("cuda_argsort_scratch_bytes", &cuda_argsort_scratch_bytes, py::arg("key_type"),
        py::arg("index_bytes"), py::arg("n"), py::arg("descending"), py::arg("begin_bit"),
        py::arg("end_bit"), py::arg("numpy_order"), py::arg("sorted_keys"));
  // Positional only: these are called once per sort of a GPU array, where keywords cost.
  m.def("cuda_sort", &cuda_sort);
  m.def("cuda_argsort", &cuda_argsort);
  m.def("cuda_topk_scratch_bytes", &cuda_topk_scratch_bytes, py::arg("key_type"), py::arg("n"),
        py::arg("k"), py::arg("descending"), py::arg("begin_bit"), py::arg("end_bit"),
        py::arg("numpy_order"));
  m.def("cuda_topk", &cuda_topk);
  m.def("cuda_topk_rows_scratch_bytes", &cuda_topk_rows_scratch_bytes, py::arg("key_type"),
        py::arg("rows"), py::arg("row_length"), py::arg("k"), py::arg("descending"),
        py::arg("begin_bit"), py::arg("end_bit"), py::arg("numpy_order"));
  m.def("cuda_topk_rows", &cuda_topk_rows);
  m.def("cuda_segmented_scratch_bytes", &cuda_segmented_scratch_bytes, py::arg("key_type"),
        py::arg("value_bytes"), py::arg("index_bytes"), py::arg("n"), py::arg("segments"),
        py::arg("descending"), py::arg("begin_bit"), py::arg("end_bit"), py::arg("numpy_order"));
  m.def("cuda_segmented_sort", &cuda_segmented_sort);
  m.def("cuda_segmented_argsort", &cuda_segmented_argsort);
  m.attr("pybind11_version") = std::to_string(PYBIND11_VERSION_MAJOR) + "." +
                               std::to_string(PYBIND11_VERSION_MINOR) + "." +
                               std::to_string(PYBIND11_VERSION_PATCH);
}
