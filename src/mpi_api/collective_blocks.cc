// The buffers of a collective as its schedule moves them (collective_blocks.h).
#include "mpi_api/collective_blocks.h"

#include <cstring>

#include "mpi_api/state.h"

namespace tagwire::mpi {

Result<Typed> typed(int count, MPI_Datatype type) {
  // A predefined one-value type, the common case: its packed bytes are
  // the buffer's, one element apart, with no handle lookups (bytes_of and
  // layout_of were 430 of an 8-byte MPI_Alltoall's 1,930 instructions at
  // 2 ranks, callgrind 2026-12-02). A negative count: the long way, to
  // the error.
  if (const auto bytes = value_bytes(count, type)) {
    Typed t;
    t.count = static_cast<std::size_t>(count);
    t.bytes = *bytes;
    t.extent = static_cast<std::ptrdiff_t>(value_type_size(type));
    return t;
  }
  auto bytes = bytes_of(count, type);
  if (!bytes) return bytes.status();
  auto layout = layout_of(type);
  if (!layout) return layout.status();
  Typed t;
  t.count = static_cast<std::size_t>(count);
  t.bytes = *bytes;
  t.extent = (*layout)->extent();
  // Copied: the application may free the type before a nonblocking
  // collective has used it.
  if (!(*layout)->in_place()) {
    t.layout = std::make_shared<const TypeLayout>(**layout);
  }
  return t;
}

Typed raw_bytes(std::size_t bytes) {
  Typed t;
  t.count = bytes;
  t.bytes = bytes;
  t.extent = 1;
  return t;
}

Typed times(const Typed& t, std::size_t n) {
  Typed out = t;
  out.count *= n;
  out.bytes *= n;
  return out;
}

Result<Blocks> blocks_of(std::size_t n, const int counts[], const int displs[], MPI_Datatype type) {
  if (n > 0 && (counts == nullptr || displs == nullptr)) {
    return Status(ErrorCode::kInvalidArgument, "the counts or displacements array is NULL");
  }
  Blocks b;
  b.type.reserve(n);
  b.offset.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    auto t = typed(counts[i], type);
    if (!t) return t.status().with_context("count of rank " + std::to_string(i));
    b.offset.push_back(static_cast<std::ptrdiff_t>(displs[i]) * t->extent);
    b.type.push_back(std::move(t).value());
  }
  return b;
}

Result<Blocks> even_blocks(std::size_t n, int count, MPI_Datatype type) {
  auto t = typed(count, type);
  if (!t) return t.status();
  Blocks b;
  b.type.assign(n, *t);
  b.offset.reserve(n);
  for (std::size_t i = 0; i < n; ++i) {
    b.offset.push_back(static_cast<std::ptrdiff_t>(i) * count * t->extent);
  }
  return b;
}

namespace {

void pack(const Typed& t, const void* from, unsigned char* to) {
  if (t.layout == nullptr) {
    if (t.bytes > 0) std::memcpy(to, from, t.bytes);
  } else {
    t.layout->pack(from, t.count, to);
  }
}

void unpack(const Typed& t, const unsigned char* from, void* to) {
  if (t.layout == nullptr) {
    if (t.bytes > 0) std::memcpy(to, from, t.bytes);
  } else {
    t.layout->unpack(from, t.bytes, t.count, to);
  }
}

}  // namespace

const unsigned char* snapshot(engine::Schedule& s, const void* buffer, const Blocks& recv,
                              Blocks* sent) {
  std::size_t total = 0;
  for (const Typed& t : recv.type) total += t.bytes;
  unsigned char* copy = s.scratch(total);
  *sent = Blocks{};
  std::size_t at = 0;
  for (std::size_t i = 0; i < recv.type.size(); ++i) {
    pack(recv.type[i], static_cast<const unsigned char*>(buffer) + recv.offset[i], copy + at);
    sent->type.push_back(raw_bytes(recv.type[i].bytes));
    sent->offset.push_back(static_cast<std::ptrdiff_t>(at));
    at += recv.type[i].bytes;
  }
  return copy;
}

const void* packed_source(engine::Schedule& s, const void* at, const Typed& t) {
  if (t.layout == nullptr) return at;
  unsigned char* packed = s.scratch(t.bytes);
  s.local([t, at, packed] {
    pack(t, at, packed);
    return Status::ok();
  });
  return packed;
}

void send_typed(engine::Schedule& s, const void* at, const Typed& t, int peer, int tag,
                Group group) {
  const void* packed = packed_source(s, at, t);
  if (group == Group::kRemote) {
    s.send_remote(packed, t.bytes, peer, tag);
  } else {
    s.send(packed, t.bytes, peer, tag);
  }
}

const void* receive_typed(engine::Schedule& s, void* at, const Typed& t, int peer, int tag,
                          Group group) {
  const auto receive = [&](void* into) {
    if (group == Group::kRemote) {
      s.receive_remote(into, t.bytes, peer, tag);
    } else {
      s.receive(into, t.bytes, peer, tag);
    }
  };
  if (t.layout == nullptr) {
    receive(at);
    return at;
  }
  unsigned char* packed = s.scratch(t.bytes);
  receive(packed);
  s.after_round([t, at, packed] {
    unpack(t, packed, at);
    return Status::ok();
  });
  return packed;
}

Status copy_typed(engine::Schedule& s, const void* from, const Typed& from_type, void* to,
                  const Typed& to_type) {
  if (from_type.bytes > to_type.bytes) {
    return {ErrorCode::kTruncate,
            "this rank's block to itself (" + std::to_string(from_type.bytes) +
                " bytes) is larger than its receive (" + std::to_string(to_type.bytes) + " bytes)"};
  }
  if (from_type.bytes == 0 || from == to) return Status::ok();  // in place
  if (from_type.layout == nullptr && to_type.layout == nullptr) {
    s.copy(to, from, from_type.bytes);
    return Status::ok();
  }
  unsigned char* packed = s.scratch(from_type.bytes);
  Typed into = to_type;
  into.bytes = from_type.bytes;  // what there is to unpack
  s.local([from_type, into, from, to, packed] {
    pack(from_type, from, packed);
    unpack(into, packed, to);
    return Status::ok();
  });
  return Status::ok();
}

}  // namespace tagwire::mpi
