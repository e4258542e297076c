// Fortran's named datatypes (MPI_INTEGER, MPI_REAL, ...) as C sees them:
// each is laid out, reduced and converted as one C type of the same size
// (gfortran's defaults), and keeps its own handle and name.
#pragma once

#include <iterator>

#include "mpi.h"

namespace tagwire::mpi {

namespace detail {
inline constexpr int kFortranAsC[] = {
    MPI_CHAR,              // MPI_CHARACTER
    MPI_INT,               // MPI_LOGICAL
    MPI_INT,               // MPI_INTEGER
    MPI_FLOAT,             // MPI_REAL
    MPI_DOUBLE,            // MPI_DOUBLE_PRECISION
    MPI_C_FLOAT_COMPLEX,   // MPI_COMPLEX
    MPI_C_DOUBLE_COMPLEX,  // MPI_DOUBLE_COMPLEX
    MPI_INT8_T,            // MPI_INTEGER1
    MPI_INT16_T,           // MPI_INTEGER2
    MPI_INT32_T,           // MPI_INTEGER4
    MPI_INT64_T,           // MPI_INTEGER8
    MPI_FLOAT,             // MPI_REAL4
    MPI_DOUBLE,            // MPI_REAL8
    MPI_C_FLOAT_COMPLEX,   // MPI_COMPLEX8
    MPI_C_DOUBLE_COMPLEX,  // MPI_COMPLEX16
};
static_assert(std::size(kFortranAsC) == MPI_COMPLEX16 - MPI_CHARACTER + 1);
}  // namespace detail

// The predefined type whose arithmetic and representation `type` has:
// itself, but for Fortran's named types (their C equivalent).
constexpr int c_equivalent(int type) {
  return type >= MPI_CHARACTER && type <= MPI_COMPLEX16 ? detail::kFortranAsC[type - MPI_CHARACTER]
                                                        : type;
}

}  // namespace tagwire::mpi
