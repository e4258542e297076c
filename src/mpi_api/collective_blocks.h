// The buffers of a collective as its schedule (engine/schedule.h) moves
// them: `count` elements of a datatype at an address, sent as their
// packed bytes. A layout that is one run from offset 0 is used in place;
// any other goes through scratch the schedule keeps, packed when its
// send's turn comes and unpacked once its receive has completed, so every
// collective takes derived datatypes as point-to-point does.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"
#include "engine/schedule.h"
#include "mpi.h"
#include "mpi_api/datatype.h"

namespace tagwire::mpi {

struct Typed {
  std::shared_ptr<const TypeLayout> layout;  // null: used in place
  std::size_t count = 0;
  std::size_t bytes = 0;      // packed
  std::ptrdiff_t extent = 0;  // one element's: the stride between blocks
};

// `count` elements of `type` (checked: a committed, known type).
Result<Typed> typed(int count, MPI_Datatype type);
// `bytes` plain bytes (a reduction's buffer, a packed snapshot).
Typed raw_bytes(std::size_t bytes);
// `n` times as many elements of the same type, one after another.
Typed times(const Typed& t, std::size_t n);

// Per-rank (or per-neighbour) blocks of one buffer: block i is type[i] at
// the buffer + offset[i] bytes.
struct Blocks {
  std::vector<Typed> type;
  std::vector<std::ptrdiff_t> offset;
};
// counts[i] elements of `type` at displs[i] elements (the v-collectives).
Result<Blocks> blocks_of(std::size_t n, const int counts[], const int displs[], MPI_Datatype type);
// n blocks of `count` elements, one after another.
Result<Blocks> even_blocks(std::size_t n, int count, MPI_Datatype type);
// Each block its own type, displacements in bytes (the w-collectives).
template <typename Displacement>
Result<Blocks> typed_blocks(std::size_t n, const int counts[], const Displacement displs[],
                            const MPI_Datatype types[], const char* what) {
  if (n > 0 && (counts == nullptr || displs == nullptr || types == nullptr)) {
    return Status(ErrorCode::kInvalidArgument,
                  std::string("a ") + what + " counts, displacements or types array is NULL");
  }
  Blocks b;
  b.type.reserve(n);
  b.offset.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto t = typed(counts[i], types[i]);
    if (!t) return t.status().with_context(std::string(what) + " block " + std::to_string(i));
    b.type.push_back(std::move(t).value());
    b.offset.push_back(static_cast<std::ptrdiff_t>(displs[i]));
  }
  return b;
}

// MPI_IN_PLACE in the all-to-alls: each block of `recv` at `buffer` as it
// is now, packed at the call into scratch the schedule keeps; returns the
// scratch, and sets `*sent` to the blocks sent from it.
const unsigned char* snapshot(engine::Schedule& s, const void* buffer, const Blocks& recv,
                              Blocks* sent);

// Schedule steps. The packed bytes of `t` at `at`: `at` itself, or
// scratch that a pack step added now fills when its turn comes.
const void* packed_source(engine::Schedule& s, const void* at, const Typed& t);
// `peer`: a rank of the caller's own group, or (kRemote) of an
// intercommunicator's remote group.
enum class Group { kOwn, kRemote };
void send_typed(engine::Schedule& s, const void* at, const Typed& t, int peer, int tag,
                Group group = Group::kOwn);
// Returns where the packed bytes land (`at` itself, or scratch unpacked
// into `at` at the start of the next round), for a rank that passes them on.
const void* receive_typed(engine::Schedule& s, void* at, const Typed& t, int peer, int tag,
                          Group group = Group::kOwn);
// `from` into `to` when its turn comes (a rank's block to itself);
// kTruncate, now, if it does not fit.
Status copy_typed(engine::Schedule& s, const void* from, const Typed& from_type, void* to,
                  const Typed& to_type);

}  // namespace tagwire::mpi
