// MPI_Type_create_f90_real, _complex and _integer: the type of a Fortran
// kind chosen by precision and range (SELECTED_REAL_KIND and
// SELECTED_INT_KIND), for C code that exchanges such values. Each answer is
// the C type gfortran's kind is laid out as, under a handle that says how
// it was asked for (MPI_Type_get_envelope: MPI_COMBINER_F90_*). MPI-3.1
// §17.2.5 makes these predefined: the same question returns the same
// handle, and it is never freed.
#include <array>
#include <climits>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

// IEEE formats in gfortran's kinds: decimal precision and exponent range.
struct RealKind {
  int precision;
  int range;
  MPI_Datatype real;
  MPI_Datatype complex;
};
constexpr RealKind kRealKinds[] = {
    {6, 37, MPI_FLOAT, MPI_C_FLOAT_COMPLEX},
    {15, 307, MPI_DOUBLE, MPI_C_DOUBLE_COMPLEX},
    {18, 4931, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX},  // x87's 80 bits, kind 10
};
struct IntegerKind {
  int range;
  MPI_Datatype type;
};
constexpr IntegerKind kIntegerKinds[] = {
    {2, MPI_INT8_T}, {4, MPI_INT16_T}, {9, MPI_INT32_T}, {18, MPI_INT64_T}};

// The handle for (combiner, integers), made once as a copy of `like`'s
// layout.
MPI_Datatype cached(int combiner, std::vector<int> integers, MPI_Datatype like) {
  static std::map<std::array<int, 3>, MPI_Datatype> made;  // by combiner, p, r
  static std::mutex mutex;                                 // MPI_THREAD_MULTIPLE's callers
  const std::lock_guard<std::mutex> guard(mutex);
  const std::array<int, 3> key{combiner, integers[0], integers.size() > 1 ? integers[1] : 0};
  if (auto it = made.find(key); it != made.end()) return it->second;
  auto layout = std::make_shared<TypeLayout>(**layout_of(like));
  TypeConstructor c;
  c.combiner = combiner;
  c.integers = std::move(integers);
  layout->set_constructor(std::move(c));
  layout->commit();
  const MPI_Datatype handle = state().types.add(std::move(layout));
  made.emplace(key, handle);
  return handle;
}

int create_real(const char* function, int p, int r, bool complex, MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (newtype == nullptr) {
    return report(MPI_COMM_WORLD, function, {ErrorCode::kInvalidArgument, "null newtype"});
  }
  if (p == MPI_UNDEFINED && r == MPI_UNDEFINED) {
    return report(MPI_COMM_WORLD, function,
                  {ErrorCode::kInvalidArgument, "precision and range are both MPI_UNDEFINED"});
  }
  for (const RealKind& k : kRealKinds) {
    if ((p == MPI_UNDEFINED || p <= k.precision) && (r == MPI_UNDEFINED || r <= k.range)) {
      *newtype = cached(complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, {p, r},
                        complex ? k.complex : k.real);
      return MPI_SUCCESS;
    }
  }
  return report(MPI_COMM_WORLD, function,
                {ErrorCode::kInvalidArgument, "no real kind has precision " + std::to_string(p) +
                                                  " and range " + std::to_string(r) +
                                                  " (the widest: 18 digits, exponents to 4931)"});
}

}  // namespace

namespace tagwire::mpi {

bool is_f90_type(const TypeLayout& layout) {
  const TypeConstructor* c = layout.constructor();
  return c != nullptr &&
         (c->combiner == MPI_COMBINER_F90_REAL || c->combiner == MPI_COMBINER_F90_COMPLEX ||
          c->combiner == MPI_COMBINER_F90_INTEGER);
}

}  // namespace tagwire::mpi

extern "C" {

int MPI_Type_create_f90_real(int p, int r, MPI_Datatype* newtype) {
  return create_real(__func__, p, r, false, newtype);
}

int MPI_Type_create_f90_complex(int p, int r, MPI_Datatype* newtype) {
  return create_real(__func__, p, r, true, newtype);
}

int MPI_Type_create_f90_integer(int r, MPI_Datatype* newtype) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (newtype == nullptr) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "null newtype"});
  }
  for (const IntegerKind& k : kIntegerKinds) {
    if (r <= k.range) {
      *newtype = cached(MPI_COMBINER_F90_INTEGER, {r}, k.type);
      return MPI_SUCCESS;
    }
  }
  return report(MPI_COMM_WORLD, __func__,
                {ErrorCode::kInvalidArgument, "no integer kind has a range of " +
                                                  std::to_string(r) + " digits (the widest: 18)"});
}

}  // extern "C"
