// The predefined reduction operations on the predefined datatypes:
// inout[i] = inout[i] OP in[i]. Logical ops take integer and bool types,
// bitwise ops integer types only; anything else is MPI_ERR_OP.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "mpi.h"

namespace tagwire::mpi {

// The element of MPI_FLOAT_INT, MPI_DOUBLE_INT, ... (MPI_MAXLOC / MINLOC).
template <typename V>
struct ValueIndex {
  V value;
  int index;
};

// inout = in OP inout (a user operation's order; the predefined ones
// commute). Buffers of a derived datatype: reduction.h.
Status apply_op(MPI_Op op, MPI_Datatype type, const void* in, void* inout, std::size_t count);

// MPI_Op_create's operations: handles from kFirstUserOp up, never reused
// within a job (a freed handle is an invalid operation from then on).
inline constexpr MPI_Op kFirstUserOp = 64;
Result<MPI_Op> create_user_op(MPI_User_function* function, bool commute);
Status free_user_op(MPI_Op op);
// Predefined operations commute; a user operation as it was created.
Result<bool> op_commutes(MPI_Op op);

// Whether apply_op accepts (op, type). Collectives check this on every
// rank before any message moves, so that all ranks fail alike instead of
// the root failing halfway while the others wait for it.
Status check_op(MPI_Op op, MPI_Datatype type);

}  // namespace tagwire::mpi
