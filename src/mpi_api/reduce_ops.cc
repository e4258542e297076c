#include "mpi_api/reduce_ops.h"

#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <type_traits>

#include "mpi_api/fortran_types.h"

namespace tagwire::mpi {

namespace {

template <typename T>
Status apply_typed(MPI_Op op, const void* in_raw, void* inout_raw, std::size_t n) {
  const T* in = static_cast<const T*>(in_raw);
  T* io = static_cast<T*>(inout_raw);
  auto each = [&](auto f) {
    for (std::size_t i = 0; i < n; ++i) io[i] = static_cast<T>(f(io[i], in[i]));
    return Status::ok();
  };
  switch (op) {
    case MPI_MAX:
      return each([](T a, T b) { return std::max(a, b); });
    case MPI_MIN:
      return each([](T a, T b) { return std::min(a, b); });
    case MPI_SUM:
      return each([](T a, T b) { return a + b; });
    case MPI_PROD:
      return each([](T a, T b) { return a * b; });
    default:
      break;
  }
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case MPI_LAND:
        return each([](T a, T b) { return (a != 0) && (b != 0); });
      case MPI_LOR:
        return each([](T a, T b) { return (a != 0) || (b != 0); });
      case MPI_LXOR:
        return each([](T a, T b) { return (a != 0) != (b != 0); });
      case MPI_BAND:
        return each([](T a, T b) { return a & b; });
      case MPI_BOR:
        return each([](T a, T b) { return a | b; });
      case MPI_BXOR:
        return each([](T a, T b) { return a ^ b; });
      default:
        break;
    }
  }
  return {ErrorCode::kInvalidOp,
          "reduction operation " + std::to_string(op) + " is not defined for this datatype"};
}

// Complex values (MPI-3.1 §5.9.2): MPI_SUM and MPI_PROD only. std::complex
// has C's layout for float _Complex and the others.
template <typename R>
Status apply_complex(MPI_Op op, const void* in_raw, void* inout_raw, std::size_t n) {
  const auto* in = static_cast<const std::complex<R>*>(in_raw);
  auto* io = static_cast<std::complex<R>*>(inout_raw);
  if (op != MPI_SUM && op != MPI_PROD) {
    return {ErrorCode::kInvalidOp, "complex datatypes take MPI_SUM and MPI_PROD only"};
  }
  for (std::size_t i = 0; i < n; ++i) io[i] = op == MPI_SUM ? io[i] + in[i] : io[i] * in[i];
  return Status::ok();
}

// MPI_MAXLOC / MPI_MINLOC: the larger (smaller) value wins; on a tie the
// smaller index, so the result does not depend on the reduction order.
template <typename V>
Status apply_loc(MPI_Op op, const void* in_raw, void* inout_raw, std::size_t n) {
  const auto* in = static_cast<const ValueIndex<V>*>(in_raw);
  auto* io = static_cast<ValueIndex<V>*>(inout_raw);
  for (std::size_t i = 0; i < n; ++i) {
    const bool better = op == MPI_MAXLOC ? in[i].value > io[i].value : in[i].value < io[i].value;
    if (better) {
      io[i] = in[i];
    } else if (in[i].value == io[i].value) {
      io[i].index = std::min(io[i].index, in[i].index);
    }
  }
  return Status::ok();
}

Status apply_pair(MPI_Op op, MPI_Datatype type, const void* in, void* inout, std::size_t n) {
  if (op != MPI_MAXLOC && op != MPI_MINLOC) {
    return {ErrorCode::kInvalidOp, "pair datatypes take MPI_MAXLOC or MPI_MINLOC only"};
  }
  switch (type) {
    case MPI_FLOAT_INT:
      return apply_loc<float>(op, in, inout, n);
    case MPI_DOUBLE_INT:
      return apply_loc<double>(op, in, inout, n);
    case MPI_LONG_INT:
      return apply_loc<long>(op, in, inout, n);
    case MPI_2INT:
      return apply_loc<int>(op, in, inout, n);
    case MPI_SHORT_INT:
      return apply_loc<short>(op, in, inout, n);
    case MPI_LONG_DOUBLE_INT:
      return apply_loc<long double>(op, in, inout, n);
    default:
      return {ErrorCode::kInvalidOp,
              "MPI_MAXLOC / MPI_MINLOC need a pair datatype such as MPI_DOUBLE_INT"};
  }
}

struct UserOp {
  MPI_User_function* function;
  bool commute;
  // MPI_Op_free marks it: no new call takes it, but a nonblocking
  // reduction started before still applies it (MPI-3.1 §5.9.5). Handles
  // are never reused, so the entry can stay.
  bool freed = false;
};

struct UserOps {
  std::mutex mutex;
  std::map<MPI_Op, UserOp> ops;
  MPI_Op next = kFirstUserOp;
};

UserOps& user_ops() {
  static UserOps* ops = new UserOps;  // never destroyed: usable from exit handlers
  return *ops;
}

// `op`'s entry; a freed one only for an operation already under way.
std::optional<UserOp> user_op(MPI_Op op, bool freed_too = false) {
  if (op < kFirstUserOp) return std::nullopt;
  UserOps& u = user_ops();
  std::lock_guard lock(u.mutex);
  auto it = u.ops.find(op);
  if (it == u.ops.end() || (it->second.freed && !freed_too)) return std::nullopt;
  return it->second;
}

Status unknown_op(MPI_Op op) {
  return {ErrorCode::kInvalidOp,
          "reduction operation " + std::to_string(op) +
              (op >= kFirstUserOp ? " was freed or never created" : " is not an operation")};
}

}  // namespace

Result<MPI_Op> create_user_op(MPI_User_function* function, bool commute) {
  if (function == nullptr) return Status(ErrorCode::kInvalidArgument, "the user function is NULL");
  UserOps& u = user_ops();
  std::lock_guard lock(u.mutex);
  const MPI_Op op = u.next++;
  u.ops.emplace(op, UserOp{function, commute});
  return op;
}

Status free_user_op(MPI_Op op) {
  if (op < kFirstUserOp) {
    return {ErrorCode::kInvalidOp,
            "operation " + std::to_string(op) + " is predefined (or null) and cannot be freed"};
  }
  UserOps& u = user_ops();
  std::lock_guard lock(u.mutex);
  auto it = u.ops.find(op);
  if (it == u.ops.end() || it->second.freed) return unknown_op(op);
  it->second.freed = true;
  return Status::ok();
}

Result<bool> op_commutes(MPI_Op op) {
  if (op >= MPI_MAX && op <= MPI_MINLOC) return true;
  auto user = user_op(op);
  if (!user) return unknown_op(op);
  return user->commute;
}

Status apply_op(MPI_Op op, MPI_Datatype type, const void* in, void* inout, std::size_t count) {
  if (op >= kFirstUserOp) {
    // Freed ones too: every call checks its operation first (check_op),
    // so only a reduction started before the free gets here with one.
    auto user = user_op(op, true);
    if (!user) return unknown_op(op);
    if (count > static_cast<std::size_t>(INT32_MAX)) {
      return {ErrorCode::kInvalidCount, "a user operation takes at most INT_MAX elements"};
    }
    int len = static_cast<int>(count);
    MPI_Datatype t = type;
    user->function(const_cast<void*>(in), inout, &len, &t);
    return Status::ok();
  }
  if (op <= MPI_OP_NULL || op > MPI_MINLOC) {
    return {ErrorCode::kInvalidOp, "invalid reduction operation " + std::to_string(op)};
  }
  type = c_equivalent(type);
  if (op == MPI_MAXLOC || op == MPI_MINLOC ||
      (type >= MPI_FLOAT_INT && type <= MPI_LONG_DOUBLE_INT)) {
    return apply_pair(op, type, in, inout, count);
  }
  switch (type) {
    case MPI_CHAR:
      return apply_typed<char>(op, in, inout, count);
    case MPI_SIGNED_CHAR:
    case MPI_INT8_T:
      return apply_typed<std::int8_t>(op, in, inout, count);
    case MPI_BYTE:
      // The byte category (MPI-3.1 §5.9.2) takes the bitwise operations
      // only: a sum of raw bytes means nothing (MPICH and Open MPI refuse
      // it too).
      if (op != MPI_BAND && op != MPI_BOR && op != MPI_BXOR) {
        return {ErrorCode::kInvalidOp,
                "MPI_BYTE takes MPI_BAND, MPI_BOR and MPI_BXOR only (MPI-3.1 5.9.2)"};
      }
      return apply_typed<std::uint8_t>(op, in, inout, count);
    case MPI_UNSIGNED_CHAR:
    case MPI_UINT8_T:
      return apply_typed<std::uint8_t>(op, in, inout, count);
    case MPI_SHORT:
    case MPI_INT16_T:
      return apply_typed<std::int16_t>(op, in, inout, count);
    case MPI_UNSIGNED_SHORT:
    case MPI_UINT16_T:
      return apply_typed<std::uint16_t>(op, in, inout, count);
    case MPI_INT:
    case MPI_INT32_T:
      return apply_typed<std::int32_t>(op, in, inout, count);
    case MPI_UNSIGNED:
    case MPI_UINT32_T:
      return apply_typed<std::uint32_t>(op, in, inout, count);
    case MPI_LONG:
      return apply_typed<long>(op, in, inout, count);
    case MPI_UNSIGNED_LONG:
      return apply_typed<unsigned long>(op, in, inout, count);
    case MPI_LONG_LONG:
    case MPI_INT64_T:
    case MPI_COUNT:
    case MPI_OFFSET:
      return apply_typed<std::int64_t>(op, in, inout, count);
    case MPI_UNSIGNED_LONG_LONG:
    case MPI_UINT64_T:
      return apply_typed<std::uint64_t>(op, in, inout, count);
    case MPI_AINT:
      return apply_typed<MPI_Aint>(op, in, inout, count);
    case MPI_C_BOOL:
    case MPI_CXX_BOOL:
      // The logical category: MPI_LAND, MPI_LOR, MPI_LXOR only.
      if (op != MPI_LAND && op != MPI_LOR && op != MPI_LXOR) {
        return {ErrorCode::kInvalidOp,
                "the boolean types take MPI_LAND, MPI_LOR and MPI_LXOR only (MPI-3.1 5.9.2)"};
      }
      return apply_typed<bool>(op, in, inout, count);
    case MPI_C_FLOAT_COMPLEX:
    case MPI_CXX_FLOAT_COMPLEX:
      return apply_complex<float>(op, in, inout, count);
    case MPI_C_DOUBLE_COMPLEX:
    case MPI_CXX_DOUBLE_COMPLEX:
      return apply_complex<double>(op, in, inout, count);
    case MPI_C_LONG_DOUBLE_COMPLEX:
    case MPI_CXX_LONG_DOUBLE_COMPLEX:
      return apply_complex<long double>(op, in, inout, count);
    case MPI_WCHAR:
      return apply_typed<wchar_t>(op, in, inout, count);
    case MPI_FLOAT:
      return apply_typed<float>(op, in, inout, count);
    case MPI_DOUBLE:
      return apply_typed<double>(op, in, inout, count);
    case MPI_LONG_DOUBLE:
      return apply_typed<long double>(op, in, inout, count);
    default:
      break;
  }
  return {ErrorCode::kInvalidType, "no reduction for datatype " + std::to_string(type)};
}

Status check_op(MPI_Op op, MPI_Datatype type) {
  // A user operation takes any datatype: it is only asked whether it exists.
  if (op >= kFirstUserOp) return user_op(op) ? Status::ok() : unknown_op(op);
  // A one-element trial on scratch storage large enough for any type.
  alignas(16) unsigned char a[32] = {}, b[32] = {};
  return apply_op(op, type, a, b, 1);
}

}  // namespace tagwire::mpi
