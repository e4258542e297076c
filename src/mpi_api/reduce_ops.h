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

Status apply_op(MPI_Op op, MPI_Datatype type, const void* in, void* inout, std::size_t count);

// Whether apply_op accepts (op, type). Collectives check this on every
// rank before any message moves, so that all ranks fail alike instead of
// the root failing halfway while the others wait for it.
Status check_op(MPI_Op op, MPI_Datatype type);

}  // namespace tagwire::mpi
