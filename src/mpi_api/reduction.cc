// Reductions on packed operands of any datatype (reduction.h).
#include "mpi_api/reduction.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_api/reduce_ops.h"
#include "mpi_api/state.h"

namespace tagwire::mpi {

namespace {

bool is_pair(MPI_Datatype t) {
  return t >= MPI_FLOAT_INT && t <= MPI_LONG_DOUBLE_INT;
}

// Scratch holding `count` elements of `layout` where its runs say: the
// address a user function is given (element 0's start) and the bytes
// behind it, from the lowest run of any element to the highest.
class LaidOut {
 public:
  LaidOut(const TypeLayout& layout, std::size_t count) {
    const bool any = !layout.runs().empty();
    auto [lo, hi] = layout.data_span();
    const std::ptrdiff_t last =
        count == 0 ? 0 : static_cast<std::ptrdiff_t>(count - 1) * layout.extent();
    lo += std::min<std::ptrdiff_t>(last, 0);
    hi += std::max<std::ptrdiff_t>(last, 0);
    bytes_.resize(any ? static_cast<std::size_t>(hi - lo) : 1);
    shift_ = -lo;
  }
  // Element 0's address: may lie outside the bytes (a negative lower
  // bound), as a user's buffer pointer may; only runs are touched.
  void* start() {
    return reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(bytes_.data()) +
                                   static_cast<std::uintptr_t>(shift_));
  }

 private:
  std::vector<std::uint8_t> bytes_;
  std::ptrdiff_t shift_ = 0;
};

// A predefined operation on packed MINLOC pairs: the reductions read the
// pairs as C structs (ValueIndex, padded), the packed bytes have no
// padding.
Status reduce_pairs(const Reduction& r, const void* in, void* inout) {
  const TypeLayout* pair = *layout_of(r.element);
  const auto stride = static_cast<std::size_t>(pair->extent());
  std::vector<std::uint8_t> a(r.elements * stride);
  std::vector<std::uint8_t> b(r.elements * stride);
  const std::size_t packed = r.elements * pair->size();
  pair->unpack(static_cast<const std::uint8_t*>(in), packed, r.elements, a.data());
  pair->unpack(static_cast<const std::uint8_t*>(inout), packed, r.elements, b.data());
  TAGWIRE_RETURN_IF_ERROR(apply_op(r.op, r.element, a.data(), b.data(), r.elements));
  pair->pack(b.data(), r.elements, static_cast<std::uint8_t*>(inout));
  return Status::ok();
}

// Whether a predefined operation takes a predefined one-value type,
// remembered after check_op's first trial (0: not yet tried, 1: takes it,
// 2: refuses it, for which the caller goes the long way round to the
// error). Relaxed: every thread that tries writes the same answer.
bool predefined_op_takes(MPI_Op op, MPI_Datatype type) {
  static std::array<std::array<std::atomic<std::uint8_t>, MPI_FLOAT_INT>, kFirstUserOp> known{};
  if (op <= MPI_OP_NULL || op >= kFirstUserOp || type <= MPI_DATATYPE_NULL ||
      type >= MPI_FLOAT_INT) {
    return false;
  }
  std::atomic<std::uint8_t>& answer =
      known[static_cast<std::size_t>(op)][static_cast<std::size_t>(type)];
  std::uint8_t a = answer.load(std::memory_order_relaxed);
  if (a == 0) {
    a = check_op(op, type).is_ok() ? 1 : 2;
    answer.store(a, std::memory_order_relaxed);
  }
  return a == 1;
}

}  // namespace

Result<Reduction> operands_of(int count, MPI_Datatype type) {
  auto bytes = bytes_of(count, type);
  if (!bytes) return bytes.status();
  const TypeLayout* layout = *layout_of(type);
  Reduction r;
  r.type = type;
  r.count = static_cast<std::size_t>(count);
  r.bytes = *bytes;
  if (!layout->in_place()) {
    r.layout = std::make_shared<const TypeLayout>(*layout);
  }
  r.element = layout->element_type();
  if (r.element != MPI_DATATYPE_NULL) {
    const std::size_t element_size = (*layout_of(r.element))->size();
    r.elements = element_size == 0 ? 0 : r.bytes / element_size;
  }
  return r;
}

Result<Reduction> reduction_of(MPI_Op op, int count, MPI_Datatype type) {
  // A predefined operation on a predefined one-value type (nearly every
  // call): no handle lookups and no trial reduction. They were 420 of an
  // 8-byte MPI_Allreduce's 2,850 instructions at 2 ranks (callgrind,
  // 2026-12-02). What operands_of gives such a type: in place, its own
  // element (MPI_PACKED has none and goes the long way).
  if (const auto bytes = value_bytes(count, type);
      bytes && type != MPI_PACKED && predefined_op_takes(op, type)) {
    Reduction r;
    r.op = op;
    r.type = type;
    r.count = static_cast<std::size_t>(count);
    r.bytes = *bytes;
    r.element = type;
    r.elements = r.count;
    return r;
  }
  auto r = operands_of(count, type);
  if (!r) return r;
  r->op = op;
  if (op >= kFirstUserOp) {  // any datatype: the function decides
    TAGWIRE_RETURN_IF_ERROR(check_op(op, type));
    return r;
  }
  if (r->element == MPI_DATATYPE_NULL) {
    if (r->bytes == 0) return r;  // nothing to combine (MPI_Type_contiguous(0, ...))
    return Status(ErrorCode::kInvalidType,
                  "datatype " + std::to_string(type) +
                      " mixes predefined types (or has none): a predefined reduction operation "
                      "takes a datatype made of one predefined type");
  }
  TAGWIRE_RETURN_IF_ERROR(check_op(op, r->element));
  return r;
}

bool reducible_in_parts(const Reduction& r) {
  return r.op < kFirstUserOp && r.element != MPI_DATATYPE_NULL && !is_pair(r.element);
}

Status reduce_packed(const Reduction& r, const void* in, void* inout) {
  if (r.bytes == 0) return Status::ok();
  if (r.op < kFirstUserOp) {
    if (is_pair(r.element)) return reduce_pairs(r, in, inout);
    return apply_op(r.op, r.element, in, inout, r.elements);
  }
  if (r.layout == nullptr) return apply_op(r.op, r.type, in, inout, r.count);
  LaidOut a(*r.layout, r.count);
  LaidOut b(*r.layout, r.count);
  unpack_operand(r, in, a.start());
  unpack_operand(r, inout, b.start());
  TAGWIRE_RETURN_IF_ERROR(apply_op(r.op, r.type, a.start(), b.start(), r.count));
  pack_operand(r, b.start(), inout);
  return Status::ok();
}

Status combine_packed(const Reduction& r, void* acc, void* next) {
  if (r.op < kFirstUserOp) return reduce_packed(r, next, acc);  // they commute
  TAGWIRE_RETURN_IF_ERROR(reduce_packed(r, acc, next));         // next = acc OP next
  if (r.bytes > 0) std::memcpy(acc, next, r.bytes);
  return Status::ok();
}

void pack_operand(const Reduction& r, const void* buffer, void* packed) {
  if (r.layout == nullptr) {
    if (r.bytes > 0 && buffer != packed) std::memmove(packed, buffer, r.bytes);
  } else {
    r.layout->pack(buffer, r.count, static_cast<std::uint8_t*>(packed));
  }
}

void unpack_operand(const Reduction& r, const void* packed, void* buffer) {
  if (r.layout == nullptr) {
    if (r.bytes > 0 && buffer != packed) std::memmove(buffer, packed, r.bytes);
  } else {
    r.layout->unpack(static_cast<const std::uint8_t*>(packed), r.bytes, r.count, buffer);
  }
}

}  // namespace tagwire::mpi
