// MPI datatypes: the constructors (each one TypeLayout::place call), commit
// and free, size / extent / count queries, and MPI_Pack / MPI_Unpack.
#include <algorithm>
#include <climits>
#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

// MPI_LB and MPI_UB: bounds in an MPI-1 struct type, not data.
bool is_bound_marker(MPI_Datatype t) {
  return t == MPI_LB || t == MPI_UB;
}

Status check_count(int count, const char* what) {
  if (count < 0) {
    return {ErrorCode::kInvalidCount,
            std::string(what) + " " + std::to_string(count) + " is negative"};
  }
  return Status::ok();
}

// What MPI_Type_get_contents will say of a new type: its combiner, the
// constructor's integers and addresses, and its old types (derived ones
// kept alive, so that a freed old type is still described).
TypeConstructor constructor(int combiner, std::vector<int> integers,
                            std::vector<std::ptrdiff_t> addresses,
                            std::span<const MPI_Datatype> types) {
  TypeConstructor c;
  c.combiner = combiner;
  c.integers = std::move(integers);
  c.addresses = std::move(addresses);
  for (MPI_Datatype t : types) {
    c.type_handles.push_back(t);
    auto* derived = state().types.find(t);
    c.type_layouts.push_back(derived != nullptr ? *derived : nullptr);
  }
  return c;
}

// Builds a derived type from `n` entries and hands out its handle.
int make_type(const char* function, std::span<const int> blocks,
              std::span<const std::ptrdiff_t> displacements, std::span<const MPI_Datatype> types,
              bool pad_to_alignment, TypeConstructor made_by, MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (newtype == nullptr) {
    return report(MPI_COMM_WORLD, function, {ErrorCode::kInvalidArgument, "null newtype"});
  }
  std::vector<const TypeLayout*> layouts;
  for (MPI_Datatype t : types) {
    auto layout = layout_of(t, false);
    TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
    layouts.push_back(*layout);
  }
  auto made = TypeLayout::place(blocks, displacements, layouts, pad_to_alignment);
  TW_MPI_TRY(MPI_COMM_WORLD, made.status());
  made->set_constructor(std::move(made_by));
  *newtype = state().types.add(std::make_shared<TypeLayout>(std::move(made).value()));
  return MPI_SUCCESS;
}

// `count` copies of one type at the given displacements (in bytes).
int make_uniform(const char* function, std::span<const int> blocks,
                 std::span<const std::ptrdiff_t> displacements, MPI_Datatype oldtype,
                 TypeConstructor made_by, MPI_Datatype* newtype) {
  std::vector<MPI_Datatype> types(blocks.size(), oldtype);
  return make_type(function, blocks, displacements, types, false, std::move(made_by), newtype);
}

// `count` blocks `stride` bytes apart (vector and hvector).
int make_strided(const char* function, int count, int blocklength, std::ptrdiff_t stride,
                 MPI_Datatype oldtype, TypeConstructor made_by, MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_count(count, "count"));
  TW_MPI_TRY(MPI_COMM_WORLD, check_count(blocklength, "block length"));
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  auto old = layout_of(oldtype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, old.status());
  // A block of one run: a few runs, whatever count is (no list of count
  // displacements either: a vector of 135 M blocks took 1.6 GB for them).
  if (auto made = TypeLayout::strided(static_cast<std::size_t>(count),
                                      static_cast<std::size_t>(blocklength), stride, **old)) {
    if (newtype == nullptr) {
      return report(MPI_COMM_WORLD, function, {ErrorCode::kInvalidArgument, "null newtype"});
    }
    made->set_constructor(std::move(made_by));
    *newtype = state().types.add(std::make_shared<TypeLayout>(std::move(*made)));
    return MPI_SUCCESS;
  }
  std::vector<int> blocks(static_cast<std::size_t>(count), blocklength);
  std::vector<std::ptrdiff_t> displacements(static_cast<std::size_t>(count));
  for (int i = 0; i < count; ++i) displacements[static_cast<std::size_t>(i)] = i * stride;
  return make_uniform(function, blocks, displacements, oldtype, std::move(made_by), newtype);
}

// A size or count for an int argument: past INT_MAX, MPI_UNDEFINED (the
// _x call has the figure; MPI-3.1 §4.1.5, §3.2.5).
int int_or_undefined(std::size_t n) {
  return n > static_cast<std::size_t>(INT_MAX) ? MPI_UNDEFINED : static_cast<int>(n);
}

Result<std::ptrdiff_t> extent_of(MPI_Datatype t) {
  auto layout = layout_of(t, false);
  if (!layout) return layout.status();
  return (*layout)->extent();
}

}  // namespace

extern "C" {

int MPI_Type_size(MPI_Datatype datatype, int* size) {
  auto s = type_size(datatype);
  TW_MPI_TRY(MPI_COMM_WORLD, s.status());
  *size = int_or_undefined(*s);
  return MPI_SUCCESS;
}

int MPI_Type_get_extent(MPI_Datatype datatype, MPI_Aint* lb, MPI_Aint* extent) {
  auto layout = layout_of(datatype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  *lb = (*layout)->lower_bound();
  *extent = (*layout)->extent();
  return MPI_SUCCESS;
}

int MPI_Type_size_x(MPI_Datatype datatype, MPI_Count* size) {
  auto s = type_size(datatype);
  TW_MPI_TRY(MPI_COMM_WORLD, s.status());
  *size = static_cast<MPI_Count>(*s);
  return MPI_SUCCESS;
}

int MPI_Type_get_extent_x(MPI_Datatype datatype, MPI_Count* lb, MPI_Count* extent) {
  MPI_Aint a = 0, b = 0;
  const int rc = MPI_Type_get_extent(datatype, &a, &b);
  if (rc != MPI_SUCCESS) return rc;
  *lb = a;
  *extent = b;
  return MPI_SUCCESS;
}

// The bytes the data itself spans, whatever a resize set as bounds.
int MPI_Type_get_true_extent(MPI_Datatype datatype, MPI_Aint* true_lb, MPI_Aint* true_extent) {
  auto layout = layout_of(datatype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  const TypeLayout::Span span = (*layout)->data_span();
  *true_lb = span.lo;
  *true_extent = span.hi - span.lo;
  return MPI_SUCCESS;
}

int MPI_Type_get_true_extent_x(MPI_Datatype datatype, MPI_Count* true_lb, MPI_Count* true_extent) {
  MPI_Aint lb = 0, extent = 0;
  const int rc = MPI_Type_get_true_extent(datatype, &lb, &extent);
  if (rc != MPI_SUCCESS) return rc;
  *true_lb = lb;
  *true_extent = extent;
  return MPI_SUCCESS;
}

int MPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_count(count, "count"));
  const int blocks[] = {count};
  const std::ptrdiff_t displacements[] = {0};
  return make_uniform(__func__, blocks, displacements, oldtype,
                      constructor(MPI_COMBINER_CONTIGUOUS, {count}, {}, {&oldtype, 1}), newtype);
}

int MPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                            MPI_Datatype* newtype) {
  return make_strided(
      __func__, count, blocklength, stride, oldtype,
      constructor(MPI_COMBINER_HVECTOR, {count, blocklength}, {stride}, {&oldtype, 1}), newtype);
}

int MPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                    MPI_Datatype* newtype) {
  auto extent = extent_of(oldtype);
  TW_MPI_TRY(MPI_COMM_WORLD, extent.status());
  return make_strided(
      __func__, count, blocklength, stride * *extent, oldtype,
      constructor(MPI_COMBINER_VECTOR, {count, blocklength, stride}, {}, {&oldtype, 1}), newtype);
}

int MPI_Type_create_hindexed(int count, const int blocklengths[], const MPI_Aint displacements[],
                             MPI_Datatype oldtype, MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_count(count, "count"));
  const auto n = static_cast<std::size_t>(count);
  std::vector<std::ptrdiff_t> bytes(displacements, displacements + n);
  std::vector<int> integers{count};
  integers.insert(integers.end(), blocklengths, blocklengths + n);
  return make_uniform(__func__, {blocklengths, n}, bytes, oldtype,
                      constructor(MPI_COMBINER_HINDEXED, std::move(integers), bytes, {&oldtype, 1}),
                      newtype);
}

int MPI_Type_indexed(int count, const int blocklengths[], const int displacements[],
                     MPI_Datatype oldtype, MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_count(count, "count"));
  auto extent = extent_of(oldtype);
  TW_MPI_TRY(MPI_COMM_WORLD, extent.status());
  const auto n = static_cast<std::size_t>(count);
  std::vector<std::ptrdiff_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = displacements[i] * *extent;
  std::vector<int> integers{count};
  integers.insert(integers.end(), blocklengths, blocklengths + n);
  integers.insert(integers.end(), displacements, displacements + n);
  return make_uniform(__func__, {blocklengths, n}, bytes, oldtype,
                      constructor(MPI_COMBINER_INDEXED, std::move(integers), {}, {&oldtype, 1}),
                      newtype);
}

int MPI_Type_create_indexed_block(int count, int blocklength, const int displacements[],
                                  MPI_Datatype oldtype, MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_count(count, "count"));
  TW_MPI_TRY(MPI_COMM_WORLD, check_count(blocklength, "block length"));
  auto extent = extent_of(oldtype);
  TW_MPI_TRY(MPI_COMM_WORLD, extent.status());
  const auto n = static_cast<std::size_t>(count);
  std::vector<int> blocks(n, blocklength);
  std::vector<std::ptrdiff_t> bytes(n);
  for (std::size_t i = 0; i < n; ++i) bytes[i] = displacements[i] * *extent;
  std::vector<int> integers{count, blocklength};
  integers.insert(integers.end(), displacements, displacements + n);
  return make_uniform(
      __func__, blocks, bytes, oldtype,
      constructor(MPI_COMBINER_INDEXED_BLOCK, std::move(integers), {}, {&oldtype, 1}), newtype);
}

int MPI_Type_create_hindexed_block(int count, int blocklength, const MPI_Aint displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_count(count, "count"));
  TW_MPI_TRY(MPI_COMM_WORLD, check_count(blocklength, "block length"));
  const auto n = static_cast<std::size_t>(count);
  std::vector<int> blocks(n, blocklength);
  std::vector<std::ptrdiff_t> bytes(displacements, displacements + n);
  return make_uniform(
      __func__, blocks, bytes, oldtype,
      constructor(MPI_COMBINER_HINDEXED_BLOCK, {count, blocklength}, bytes, {&oldtype, 1}),
      newtype);
}

int MPI_Type_create_struct(int count, const int blocklengths[], const MPI_Aint displacements[],
                           const MPI_Datatype types[], MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_count(count, "count"));
  const auto n = static_cast<std::size_t>(count);
  std::vector<std::ptrdiff_t> bytes(displacements, displacements + n);
  std::vector<int> integers{count};
  integers.insert(integers.end(), blocklengths, blocklengths + n);
  TypeConstructor made_by =
      constructor(MPI_COMBINER_STRUCT, std::move(integers), bytes, {types, n});
  if (std::none_of(types, types + n, is_bound_marker)) {
    return make_type(__func__, {blocklengths, n}, bytes, {types, n}, true, std::move(made_by),
                     newtype);
  }
  // MPI-1's markers (an old program's MPI_Type_struct): no data. The
  // lowest MPI_LB is the lower bound and the highest MPI_UB the upper; a
  // bound with no marker is the data's, or 0 without data (MPICH's
  // reading of MPI-1: { (LB,10) } has extent -10).
  std::vector<int> data_blocks;
  std::vector<std::ptrdiff_t> data_bytes;
  std::vector<MPI_Datatype> data_types;
  std::optional<std::ptrdiff_t> lb, ub;
  for (std::size_t i = 0; i < n; ++i) {
    if (types[i] == MPI_LB) {
      lb = std::min(lb.value_or(bytes[i]), bytes[i]);
    } else if (types[i] == MPI_UB) {
      ub = std::max(ub.value_or(bytes[i]), bytes[i]);
    } else {
      data_blocks.push_back(blocklengths[i]);
      data_bytes.push_back(bytes[i]);
      data_types.push_back(types[i]);
    }
  }
  const int rc = make_type(__func__, data_blocks, data_bytes, data_types, !ub.has_value(),
                           std::move(made_by), newtype);
  if (rc != MPI_SUCCESS) return rc;
  std::shared_ptr<TypeLayout>& made = *state().types.find(*newtype);
  const bool has_data =
      std::any_of(data_blocks.begin(), data_blocks.end(), [](int b) { return b > 0; });
  const std::ptrdiff_t low = lb.value_or(has_data ? made->lower_bound() : 0);
  const std::ptrdiff_t high = ub.value_or(has_data ? made->lower_bound() + made->extent() : 0);
  *made = made->resized(low, high - low);
  return MPI_SUCCESS;
}

}  // extern "C"

namespace {

// Elements of an ndims-dimensional array of `sizes` elements of `old`
// (laid out in `order`): in each dimension d the indices picked[d], in
// ascending order. The innermost dimension's picks in a row, each outer
// dimension a repeat of the one inside it at its picks, the whole resized
// to the full array (lower bound 0, extent the array's) as MPI-3.1 §4.1.3
// and §4.1.4 define subarray and darray, so that consecutive elements
// are consecutive arrays.
Result<TypeLayout> array_selection(const TypeLayout& old, const int sizes[],
                                   const std::vector<std::vector<int>>& picked, int order) {
  const std::size_t n = picked.size();
  TypeLayout block = old;
  std::ptrdiff_t stride = old.extent();  // bytes of one element of the current dimension
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t d = order == MPI_ORDER_C ? n - 1 - i : i;  // fastest-varying first
    std::vector<int> ones(picked[d].size(), 1);
    std::vector<std::ptrdiff_t> displacements(ones.size());
    for (std::size_t k = 0; k < ones.size(); ++k) displacements[k] = picked[d][k] * stride;
    std::vector<const TypeLayout*> types(ones.size(), &block);
    auto placed = TypeLayout::place(ones, displacements, types, false);
    if (!placed) return placed.status();
    block = std::move(placed).value();
    stride *= sizes[d];
  }
  return block.resized(0, stride);
}

Status check_order(int order) {
  if (order == MPI_ORDER_C || order == MPI_ORDER_FORTRAN) return Status::ok();
  return {ErrorCode::kInvalidArgument,
          "order " + std::to_string(order) + " is neither MPI_ORDER_C nor MPI_ORDER_FORTRAN"};
}

// Hands out `made` as a new type that `how` describes.
int add_array_type(const char* function, Result<TypeLayout> made, TypeConstructor how,
                   MPI_Datatype* newtype) {
  if (!made) return report(MPI_COMM_WORLD, function, made.status());
  auto layout = std::make_shared<TypeLayout>(std::move(made).value());
  layout->set_constructor(std::move(how));
  *newtype = state().types.add(std::move(layout));
  return MPI_SUCCESS;
}

// The indices of a darray dimension of `size` elements that process
// `coord` of `procs` holds (MPI-3.1 §4.1.4): a block of `arg` elements
// (default: size / procs rounded up), blocks of `arg` dealt round-robin
// (default 1), or every index.
Result<std::vector<int>> darray_indices(int size, int distrib, int arg, int procs, int coord) {
  std::vector<int> picked;
  const auto take = [&](int from, int to) {
    for (int i = from; i < std::min(to, size); ++i) picked.push_back(i);
  };
  switch (distrib) {
    case MPI_DISTRIBUTE_NONE:
      if (procs != 1) {
        return Status(ErrorCode::kInvalidArgument,
                      "MPI_DISTRIBUTE_NONE over " + std::to_string(procs) + " processes (needs 1)");
      }
      take(0, size);
      return picked;
    case MPI_DISTRIBUTE_BLOCK: {
      const int block = arg == MPI_DISTRIBUTE_DFLT_DARG ? (size + procs - 1) / procs : arg;
      if (block <= 0 || static_cast<long long>(block) * procs < size) {
        return Status(ErrorCode::kInvalidArgument,
                      "a block of " + std::to_string(block) + " over " + std::to_string(procs) +
                          " processes does not cover " + std::to_string(size) + " elements");
      }
      take(coord * block, coord * block + block);
      return picked;
    }
    case MPI_DISTRIBUTE_CYCLIC: {
      const int block = arg == MPI_DISTRIBUTE_DFLT_DARG ? 1 : arg;
      if (block <= 0) {
        return Status(ErrorCode::kInvalidArgument,
                      "cyclic block " + std::to_string(block) + " is not positive");
      }
      for (long long from = static_cast<long long>(coord) * block; from < size;
           from += static_cast<long long>(procs) * block) {
        take(static_cast<int>(from), static_cast<int>(from) + block);
      }
      return picked;
    }
    default:
      return Status(ErrorCode::kInvalidArgument,
                    "distribution " + std::to_string(distrib) +
                        " is none of MPI_DISTRIBUTE_BLOCK, _CYCLIC and _NONE");
  }
}

}  // namespace

extern "C" {

// An ndims-dimensional block of a larger array: subsizes[d] indices from
// starts[d] in each dimension.
int MPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                             const int array_of_starts[], int order, MPI_Datatype oldtype,
                             MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  auto bad = [&](const std::string& why) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, why});
  };
  if (ndims <= 0) return bad("ndims " + std::to_string(ndims) + " is not positive");
  if (array_of_sizes == nullptr || array_of_subsizes == nullptr || array_of_starts == nullptr ||
      newtype == nullptr) {
    return bad("a null array or newtype");
  }
  TW_MPI_TRY(MPI_COMM_WORLD, check_order(order));
  const auto n = static_cast<std::size_t>(ndims);
  std::vector<std::vector<int>> picked(n);
  for (std::size_t d = 0; d < n; ++d) {
    const int size = array_of_sizes[d], sub = array_of_subsizes[d], start = array_of_starts[d];
    if (size <= 0 || sub <= 0 || sub > size || start < 0 || start > size - sub) {
      return bad("dimension " + std::to_string(d) + ": size " + std::to_string(size) +
                 ", subsize " + std::to_string(sub) + ", start " + std::to_string(start) +
                 " (need 0 < subsize <= size and 0 <= start <= size - subsize)");
    }
    for (int i = start; i < start + sub; ++i) picked[d].push_back(i);
  }
  auto old = layout_of(oldtype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, old.status());
  std::vector<int> integers{ndims};
  integers.insert(integers.end(), array_of_sizes, array_of_sizes + n);
  integers.insert(integers.end(), array_of_subsizes, array_of_subsizes + n);
  integers.insert(integers.end(), array_of_starts, array_of_starts + n);
  integers.push_back(order);
  return add_array_type(__func__, array_selection(**old, array_of_sizes, picked, order),
                        constructor(MPI_COMBINER_SUBARRAY, std::move(integers), {}, {&oldtype, 1}),
                        newtype);
}

// Process `rank`'s part of an array distributed over a grid of `size`
// processes (psizes[d] along dimension d, ranks in row-major order as
// MPI_Cart_create numbers them), each dimension by block, cyclically or
// not at all (MPI-3.1 §4.1.4).
int MPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                           const int array_of_distribs[], const int array_of_dargs[],
                           const int array_of_psizes[], int order, MPI_Datatype oldtype,
                           MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  auto bad = [&](const std::string& why) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, why});
  };
  if (size <= 0 || rank < 0 || rank >= size) {
    return bad("rank " + std::to_string(rank) + " of " + std::to_string(size) + " processes");
  }
  if (ndims <= 0) return bad("ndims " + std::to_string(ndims) + " is not positive");
  if (array_of_gsizes == nullptr || array_of_distribs == nullptr || array_of_dargs == nullptr ||
      array_of_psizes == nullptr || newtype == nullptr) {
    return bad("a null array or newtype");
  }
  TW_MPI_TRY(MPI_COMM_WORLD, check_order(order));
  const auto n = static_cast<std::size_t>(ndims);
  long long grid = 1;
  for (std::size_t d = 0; d < n; ++d) {
    if (array_of_gsizes[d] <= 0 || array_of_psizes[d] <= 0) {
      return bad("dimension " + std::to_string(d) + ": global size " +
                 std::to_string(array_of_gsizes[d]) + ", processes " +
                 std::to_string(array_of_psizes[d]) + " (both must be positive)");
    }
    grid *= array_of_psizes[d];
    if (grid > size) break;
  }
  if (grid != size) {
    return bad("the process grid's sizes do not multiply to " + std::to_string(size));
  }
  std::vector<std::vector<int>> picked(n);
  int rest = rank;
  for (std::size_t i = n; i-- > 0;) {  // row-major: the last dimension varies fastest
    const int coord = rest % array_of_psizes[i];
    rest /= array_of_psizes[i];
    auto indices = darray_indices(array_of_gsizes[i], array_of_distribs[i], array_of_dargs[i],
                                  array_of_psizes[i], coord);
    if (!indices) return bad("dimension " + std::to_string(i) + ": " + indices.status().message());
    picked[i] = std::move(indices).value();
  }
  auto old = layout_of(oldtype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, old.status());
  std::vector<int> integers{size, rank, ndims};
  for (const int* part : {array_of_gsizes, array_of_distribs, array_of_dargs, array_of_psizes}) {
    integers.insert(integers.end(), part, part + n);
  }
  integers.push_back(order);
  return add_array_type(__func__, array_selection(**old, array_of_gsizes, picked, order),
                        constructor(MPI_COMBINER_DARRAY, std::move(integers), {}, {&oldtype, 1}),
                        newtype);
}

int MPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                            MPI_Datatype* newtype) {
  auto layout = layout_of(oldtype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  // A negative extent is allowed (MPI-3.1 §4.1.7): elements then lie at
  // falling addresses, which pack, unpack and pieces() follow.
  auto resized = std::make_shared<TypeLayout>((*layout)->resized(lb, extent));
  resized->set_constructor(constructor(MPI_COMBINER_RESIZED, {}, {lb, extent}, {&oldtype, 1}));
  *newtype = state().types.add(std::move(resized));
  return MPI_SUCCESS;
}

int MPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype* newtype) {
  auto layout = layout_of(oldtype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  auto copy = std::make_shared<TypeLayout>(**layout);
  if ((*layout)->committed()) copy->commit();
  copy->set_constructor(constructor(MPI_COMBINER_DUP, {}, {}, {&oldtype, 1}));
  const MPI_Datatype made = state().types.add(std::move(copy));
  if (Status copied = copy_type_attributes(oldtype, made); !copied.is_ok()) {
    MPI_Datatype undo = made;
    (void)PMPI_Type_free(&undo);
    return report(MPI_COMM_WORLD, __func__, copied);
  }
  *newtype = made;
  return MPI_SUCCESS;
}

int MPI_Type_get_envelope(MPI_Datatype datatype, int* num_integers, int* num_addresses,
                          int* num_datatypes, int* combiner) {
  auto layout = layout_of(datatype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  const TypeConstructor* c = (*layout)->constructor();
  *combiner = c == nullptr ? MPI_COMBINER_NAMED : c->combiner;
  *num_integers = c == nullptr ? 0 : static_cast<int>(c->integers.size());
  *num_addresses = c == nullptr ? 0 : static_cast<int>(c->addresses.size());
  *num_datatypes = c == nullptr ? 0 : static_cast<int>(c->type_handles.size());
  return MPI_SUCCESS;
}

int MPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                          int max_datatypes, int array_of_integers[], MPI_Aint array_of_addresses[],
                          MPI_Datatype array_of_datatypes[]) {
  auto layout = layout_of(datatype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  const TypeConstructor* c = (*layout)->constructor();
  if (c == nullptr) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidType, "a predefined datatype has no contents"});
  }
  if (max_integers < static_cast<int>(c->integers.size()) ||
      max_addresses < static_cast<int>(c->addresses.size()) ||
      max_datatypes < static_cast<int>(c->type_handles.size())) {
    return report(
        MPI_COMM_WORLD, __func__,
        {ErrorCode::kInvalidArgument, "arrays smaller than MPI_Type_get_envelope's counts"});
  }
  std::copy(c->integers.begin(), c->integers.end(), array_of_integers);
  std::copy(c->addresses.begin(), c->addresses.end(), array_of_addresses);
  for (std::size_t i = 0; i < c->type_handles.size(); ++i) {
    // A derived old type comes back as a new handle the caller frees
    // (MPI-4.1 §5.1.13); a predefined one as itself.
    array_of_datatypes[i] =
        c->type_layouts[i] == nullptr
            ? c->type_handles[i]
            : state().types.add(std::make_shared<TypeLayout>(*c->type_layouts[i]));
  }
  return MPI_SUCCESS;
}

int MPI_Type_commit(MPI_Datatype* datatype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  auto* derived = state().types.find(*datatype);
  if (derived == nullptr) {
    // Committing a predefined type is allowed and does nothing.
    TW_MPI_TRY(MPI_COMM_WORLD, layout_of(*datatype, false).status());
    return MPI_SUCCESS;
  }
  (*derived)->commit();
  return MPI_SUCCESS;
}

int MPI_Type_free(MPI_Datatype* datatype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  auto* derived = state().types.find(*datatype);
  if (derived != nullptr && is_f90_type(**derived)) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidType,
                   "a type from MPI_Type_create_f90_* is predefined and cannot be freed"});
  }
  if (derived == nullptr) {
    return report(
        MPI_COMM_WORLD, __func__,
        {ErrorCode::kInvalidType, *datatype > MPI_DATATYPE_NULL && *datatype < kFirstDerivedType
                                      ? "a predefined datatype cannot be freed"
                                      : "datatype handle " + std::to_string(*datatype) +
                                            " is not a derived datatype (freed?)"});
  }
  TW_MPI_TRY(MPI_COMM_WORLD, delete_type_attributes(*datatype));
  state().types.remove(*datatype);      // pending operations hold their own reference
  state().type_names.erase(*datatype);  // the handle may name another type next
  *datatype = MPI_DATATYPE_NULL;
  return MPI_SUCCESS;
}

int MPI_Type_set_name(MPI_Datatype datatype, const char* type_name) {
  TW_MPI_TRY(MPI_COMM_WORLD, type_size(datatype).status());
  if (type_name == nullptr) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "a null name"});
  }
  state().type_names[datatype] = object_name(type_name);
  return MPI_SUCCESS;
}

int MPI_Type_get_name(MPI_Datatype datatype, char* type_name, int* resultlen) {
  // MPI_LB and MPI_UB are named, though no datatype of their own.
  if (!is_bound_marker(datatype)) TW_MPI_TRY(MPI_COMM_WORLD, type_size(datatype).status());
  if (type_name == nullptr || resultlen == nullptr) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "a null name or length pointer"});
  }
  // The standard's names for the predefined types (mpi.h's order), unless
  // renamed; a derived type without a name has the empty one. Of two
  // names for one handle, the older one, as MPICH names them
  // (MPI_LONG_LONG_INT, MPI_C_COMPLEX).
  static const char* const kPredefinedNames[] = {"MPI_DATATYPE_NULL",
                                                 "MPI_CHAR",
                                                 "MPI_SIGNED_CHAR",
                                                 "MPI_UNSIGNED_CHAR",
                                                 "MPI_BYTE",
                                                 "MPI_SHORT",
                                                 "MPI_UNSIGNED_SHORT",
                                                 "MPI_INT",
                                                 "MPI_UNSIGNED",
                                                 "MPI_LONG",
                                                 "MPI_UNSIGNED_LONG",
                                                 "MPI_LONG_LONG_INT",
                                                 "MPI_UNSIGNED_LONG_LONG",
                                                 "MPI_FLOAT",
                                                 "MPI_DOUBLE",
                                                 "MPI_LONG_DOUBLE",
                                                 "MPI_WCHAR",
                                                 "MPI_C_BOOL",
                                                 "MPI_INT8_T",
                                                 "MPI_INT16_T",
                                                 "MPI_INT32_T",
                                                 "MPI_INT64_T",
                                                 "MPI_UINT8_T",
                                                 "MPI_UINT16_T",
                                                 "MPI_UINT32_T",
                                                 "MPI_UINT64_T",
                                                 "MPI_PACKED",
                                                 "MPI_AINT",
                                                 "MPI_COUNT",
                                                 "MPI_C_COMPLEX",
                                                 "MPI_C_DOUBLE_COMPLEX",
                                                 "MPI_C_LONG_DOUBLE_COMPLEX",
                                                 "MPI_CXX_BOOL",
                                                 "MPI_CXX_FLOAT_COMPLEX",
                                                 "MPI_CXX_DOUBLE_COMPLEX",
                                                 "MPI_CXX_LONG_DOUBLE_COMPLEX",
                                                 "MPI_OFFSET",
                                                 "MPI_FLOAT_INT",
                                                 "MPI_DOUBLE_INT",
                                                 "MPI_LONG_INT",
                                                 "MPI_2INT",
                                                 "MPI_SHORT_INT",
                                                 "MPI_LONG_DOUBLE_INT",
                                                 "MPI_CHARACTER",
                                                 "MPI_LOGICAL",
                                                 "MPI_INTEGER",
                                                 "MPI_REAL",
                                                 "MPI_DOUBLE_PRECISION",
                                                 "MPI_COMPLEX",
                                                 "MPI_DOUBLE_COMPLEX",
                                                 "MPI_INTEGER1",
                                                 "MPI_INTEGER2",
                                                 "MPI_INTEGER4",
                                                 "MPI_INTEGER8",
                                                 "MPI_REAL4",
                                                 "MPI_REAL8",
                                                 "MPI_COMPLEX8",
                                                 "MPI_COMPLEX16"};
  static_assert(std::size(kPredefinedNames) == MPI_COMPLEX16 + 1,
                "a name for every predefined datatype");
  std::string text;
  if (auto named = state().type_names.find(datatype); named != state().type_names.end()) {
    text = named->second;
  } else if (datatype >= 0 && datatype < static_cast<int>(std::size(kPredefinedNames))) {
    text = kPredefinedNames[datatype];
  } else if (datatype == MPI_LB || datatype == MPI_UB) {
    text = datatype == MPI_LB ? "MPI_LB" : "MPI_UB";
  }
  return copy_string(text, type_name, MPI_MAX_OBJECT_NAME, resultlen);
}

int MPI_Type_match_size(int typeclass, int size, MPI_Datatype* datatype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (datatype == nullptr) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "a null datatype"});
  }
  std::span<const MPI_Datatype> candidates;
  static constexpr MPI_Datatype kReals[] = {MPI_FLOAT, MPI_DOUBLE, MPI_LONG_DOUBLE};
  static constexpr MPI_Datatype kIntegers[] = {MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, MPI_INT64_T};
  static constexpr MPI_Datatype kComplexes[] = {MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX,
                                                MPI_C_LONG_DOUBLE_COMPLEX};
  switch (typeclass) {
    case MPI_TYPECLASS_REAL:
      candidates = kReals;
      break;
    case MPI_TYPECLASS_INTEGER:
      candidates = kIntegers;
      break;
    case MPI_TYPECLASS_COMPLEX:
      candidates = kComplexes;
      break;
    default:
      return report(MPI_COMM_WORLD, __func__,
                    {ErrorCode::kInvalidArgument,
                     "type class " + std::to_string(typeclass) + " is not MPI_TYPECLASS_*"});
  }
  for (MPI_Datatype t : candidates) {
    if (size >= 0 && kPredefinedTypeSizes[t] == static_cast<std::size_t>(size)) {
      *datatype = t;
      return MPI_SUCCESS;
    }
  }
  return report(MPI_COMM_WORLD, __func__,
                {ErrorCode::kInvalidArgument,
                 "no predefined type of this class has " + std::to_string(size) + " bytes"});
}

int MPI_Get_address(const void* location, MPI_Aint* address) {
  *address = reinterpret_cast<MPI_Aint>(location);
  return MPI_SUCCESS;
}

// Address arithmetic as MPI-3.1 §4.1.12 defines it: on this ABI an
// address is its integer value, so both are plain sums and differences.
MPI_Aint MPI_Aint_add(MPI_Aint base, MPI_Aint disp) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(base) +
                               static_cast<std::uintptr_t>(disp));
}

MPI_Aint MPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2) {
  return static_cast<MPI_Aint>(static_cast<std::uintptr_t>(addr1) -
                               static_cast<std::uintptr_t>(addr2));
}

int MPI_Get_count(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  auto s = type_size(datatype);
  TW_MPI_TRY(MPI_COMM_WORLD, s.status());
  if (*s == 0) {
    *count = 0;
  } else if (status->tagwire_count % *s != 0) {
    *count = MPI_UNDEFINED;
  } else {
    *count = int_or_undefined(status->tagwire_count / *s);
  }
  return MPI_SUCCESS;
}

int MPI_Get_elements(const MPI_Status* status, MPI_Datatype datatype, int* count) {
  auto layout = layout_of(datatype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  *count = int_or_undefined((*layout)->basic_elements(status->tagwire_count));
  return MPI_SUCCESS;
}

int MPI_Get_elements_x(const MPI_Status* status, MPI_Datatype datatype, MPI_Count* count) {
  auto layout = layout_of(datatype, false);
  TW_MPI_TRY(MPI_COMM_WORLD, layout.status());
  *count = static_cast<MPI_Count>((*layout)->basic_elements(status->tagwire_count));
  return MPI_SUCCESS;
}

int MPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int* size) {
  auto bytes = bytes_of(incount, datatype);
  TW_MPI_TRY(comm, bytes.status());
  *size = static_cast<int>(*bytes);
  return MPI_SUCCESS;
}

int MPI_Pack(const void* inbuf, int incount, MPI_Datatype datatype, void* outbuf, int outsize,
             int* position, MPI_Comm comm) {
  auto bytes = bytes_of(incount, datatype);
  TW_MPI_TRY(comm, bytes.status());
  TW_MPI_TRY(comm, check_pack_room("MPI_Pack", true, *bytes, *position, outsize));
  (*layout_of(datatype))
      ->pack(inbuf, static_cast<std::size_t>(incount),
             static_cast<std::uint8_t*>(outbuf) + *position);
  *position += static_cast<int>(*bytes);
  return MPI_SUCCESS;
}

int MPI_Unpack(const void* inbuf, int insize, int* position, void* outbuf, int outcount,
               MPI_Datatype datatype, MPI_Comm comm) {
  auto bytes = bytes_of(outcount, datatype);
  TW_MPI_TRY(comm, bytes.status());
  TW_MPI_TRY(comm, check_pack_room("MPI_Unpack", false, *bytes, *position, insize));
  (*layout_of(datatype))
      ->unpack(static_cast<const std::uint8_t*>(inbuf) + *position, *bytes,
               static_cast<std::size_t>(outcount), outbuf);
  *position += static_cast<int>(*bytes);
  return MPI_SUCCESS;
}

}  // extern "C"
