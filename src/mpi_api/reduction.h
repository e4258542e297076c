// Reduction: `count` elements of any datatype combined by an operation,
// for the reductions (collectives.cc) and the accumulates (accumulates.cc).
// Operands are always the packed bytes of the elements, the form they
// travel in, so a reduction on a derived datatype moves as point-to-point
// does. A predefined operation combines the packed bytes as an array of
// the type's one predefined element type (MPI-3.1 §5.9.2: a derived type
// made of one predefined type, or of one MINLOC pair type); a user
// operation gets the elements laid out as the datatype says, in scratch,
// since its function walks them by the type's extent.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

#include "common/status.h"
#include "mpi.h"
#include "mpi_api/datatype.h"

namespace tagwire::mpi {

struct Reduction {
  MPI_Op op = MPI_OP_NULL;
  MPI_Datatype type = MPI_DATATYPE_NULL;  // as the user named it: a user function gets it
  std::size_t count = 0;
  std::size_t bytes = 0;  // packed
  // The elements' layout, copied (a nonblocking reduction outlives the
  // handle); null when the packed bytes are the buffer's own (one run
  // from offset 0), which then is used in place.
  std::shared_ptr<const TypeLayout> layout;
  MPI_Datatype element = MPI_DATATYPE_NULL;  // predefined operations: what they combine
  std::size_t elements = 0;                  // of `element` in `bytes`
};

// The operands alone: layout, sizes and element type (0 when the type
// mixes predefined types), no operation yet (the accumulates check theirs).
Result<Reduction> operands_of(int count, MPI_Datatype type);

// Checks the operation against the datatype (MPI_ERR_OP for a predefined
// operation the element type does not take, MPI_ERR_TYPE for a type that
// mixes predefined types), so every rank fails alike before any message.
Result<Reduction> reduction_of(MPI_Op op, int count, MPI_Datatype type);

// Whether any run of whole elements of the packed operand reduces on its
// own (reduce_packed on a Reduction of those elements): a predefined
// operation on one predefined element type that is not a pair type.
bool reducible_in_parts(const Reduction& r);

// inout = in OP inout, both packed.
Status reduce_packed(const Reduction& r, const void* in, void* inout);
// acc = acc OP next in that order (a non-commutative user operation's rank
// order); `next` is overwritten.
Status combine_packed(const Reduction& r, void* acc, void* next);

// The packed bytes of the elements at `buffer`, and back.
void pack_operand(const Reduction& r, const void* buffer, void* packed);
void unpack_operand(const Reduction& r, const void* packed, void* buffer);

}  // namespace tagwire::mpi
