// MPI_Win_allocate_shared (window.h): one segment of shared memory holding
// every rank's part, mapped by all of them, so that a rank reaches any
// part with loads and stores (MPI_Win_shared_query gives the address).
//
// Three rounds over the communicator, each an allgather, so that every rank
// reaches the same verdict and none is left waiting in a later round:
//  1. host and size of every rank: all on this host, or kRmaShared;
//  2. the lowest rank creates the segment and says its name (or its error);
//  3. the others attach and say whether they could.
// The name is unlinked after round 3: nothing is left in /dev/shm whatever
// happens to the job later. Each part is then an ordinary window
// (win_create over it), so the lock words, fences, PSCW and accumulates work
// as on any window, and every rank's view is its own mapping of that part:
// a put, get or accumulate there is a memcpy, whatever the transport.
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <string>

#include "common/host_identity.h"
#include "engine/engine.h"

namespace tagwire::engine {

namespace {

// Round 1's record.
struct SharedPartRecord {
  std::uint64_t host;  // a hash of host_identity()
  std::uint64_t size;
  std::uint32_t failed;  // the error code of a rank that cannot go on (0: none)
  std::uint32_t unused;
};

// Round 2's record: the lowest rank's segment name, or why it has none.
struct SharedSegmentRecord {
  std::uint8_t created;
  char text[127];  // the name when created, else the error's message
};

// Where each part begins: with `contiguous`, right after the previous one
// (MPI's default: rank i's first byte follows rank i-1's last); otherwise
// on a page of its own, so that ranks writing their own parts share no
// cache line or page.
std::vector<std::size_t> part_offsets(const std::vector<std::uint64_t>& sizes, bool contiguous,
                                      std::size_t* total) {
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<std::size_t> offsets(sizes.size());
  std::size_t at = 0;
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    offsets[r] = at;
    at += static_cast<std::size_t>(sizes[r]);
    if (!contiguous) at = (at + page - 1) / page * page;
  }
  *total = at;
  return offsets;
}

std::string segment_name() {
  static std::atomic<unsigned> next{0};
  return "/tagwire-" + std::to_string(::getpid()) + "-win" + std::to_string(next++);
}

}  // namespace

Status Engine::win_shared_fail(Communicator* comm, Status why) {
  const SharedPartRecord mine{0, 0, static_cast<std::uint32_t>(why.code()), 0};
  return fail_in_first_exchange(comm, std::move(why),
                                {reinterpret_cast<const std::uint8_t*>(&mine), sizeof(mine)});
}

Result<Window*> Engine::win_allocate_shared(std::size_t size, int disp_unit, Communicator* comm,
                                            bool contiguous, const WindowHints& hints) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  if (disp_unit <= 0) {
    return win_shared_fail(
        comm, Status(ErrorCode::kInvalidArgument,
                     "window displacement unit " + std::to_string(disp_unit) + " is not positive"));
  }
  const char* what = "MPI_Win_allocate_shared";
  // 1. Every rank here, and every part's size (or a rank's error:
  // win_shared_fail).
  const SharedPartRecord mine{std::hash<std::string>{}(host_identity()), size, 0, 0};
  auto parts =
      allgather(comm, {reinterpret_cast<const std::uint8_t*>(&mine), sizeof(mine)}, kCollectiveTag);
  if (!parts) return parts.status().with_context(what);
  std::vector<std::uint64_t> sizes;
  for (std::size_t r = 0; r < parts->size(); ++r) {
    SharedPartRecord p;
    if ((*parts)[r].size() != sizeof(p)) {
      return Status(ErrorCode::kProtocol,
                    std::string(what) + ": a malformed record from rank " + std::to_string(r));
    }
    std::memcpy(&p, (*parts)[r].data(), sizeof(p));
    if (p.failed != 0) {
      return Status(failed_part_code(p.failed),
                    std::string(what) + ": rank " + std::to_string(r) +
                        " of the communicator could not make its part (its own error says why)");
    }
    if (p.host != mine.host) {
      return Status(
          ErrorCode::kRmaShared,
          std::string(what) + ": rank " + std::to_string(r) +
              " of the communicator runs on another host, so the ranks cannot share "
              "memory (MPI_Comm_split_type with MPI_COMM_TYPE_SHARED gives those that can)");
    }
    sizes.push_back(p.size);
  }
  std::size_t total = 0;
  const std::vector<std::size_t> offsets = part_offsets(sizes, contiguous, &total);

  // 2. The lowest rank makes the segment (zeroed, its pages taken now so a
  // full /dev/shm is an error here, not a SIGBUS later).
  SharedSegment segment;
  SharedSegmentRecord made{};
  if (comm->rank() == 0 && total > 0) {
    const std::string name = segment_name();
    auto created = SharedSegment::create(name, total, /*reserve=*/true);
    const std::string text = created ? name : created.status().message();
    made.created = created ? 1 : 0;
    std::strncpy(made.text, text.c_str(), sizeof(made.text) - 1);
    if (created) segment = std::move(created).value();
  }
  auto names =
      allgather(comm, {reinterpret_cast<const std::uint8_t*>(&made), sizeof(made)}, kCollectiveTag);
  if (!names) return names.status().with_context(what);
  SharedSegmentRecord lowest;
  std::memcpy(&lowest, (*names)[0].data(), sizeof(lowest));
  lowest.text[sizeof(lowest.text) - 1] = '\0';
  if (total > 0 && lowest.created == 0) {
    return Status(ErrorCode::kOutOfResources, std::string(what) + ": rank 0 could not create the " +
                                                  std::to_string(total) +
                                                  "-byte segment: " + lowest.text);
  }

  // 3. The others map it; all or none go on.
  Status attached = Status::ok();
  if (comm->rank() != 0 && total > 0) {
    auto a = SharedSegment::attach(lowest.text, total);
    if (a) {
      segment = std::move(a).value();
    } else {
      attached = a.status();
    }
  }
  const std::uint8_t ok = attached.is_ok() ? 1 : 0;
  auto verdicts = allgather(comm, {&ok, 1}, kCollectiveTag);
  if (segment.mapped() && comm->rank() == 0) segment.unlink();  // every rank has tried
  if (!verdicts) return verdicts.status().with_context(what);
  for (std::size_t r = 0; r < verdicts->size(); ++r) {
    if ((*verdicts)[r][0] == 0) {
      if (!attached.is_ok()) return attached.with_context(what);
      return Status(ErrorCode::kOutOfResources, std::string(what) + ": rank " + std::to_string(r) +
                                                    " could not map the segment (it says why)");
    }
  }

  // This rank's part is an ordinary window over memory it already has;
  // every rank's view is its own mapping of that rank's part (an empty
  // part has none, so MPI_Win_shared_query gives NULL, as MPICH and Open
  // MPI do: MPICH's win_shared_noncontig_put asserts it).
  auto* base =
      size > 0 ? segment.data() + offsets[static_cast<std::size_t>(comm->rank())] : nullptr;
  auto w = win_create(base, size, disp_unit, comm, hints);
  if (!w) return w.status().with_context(what);
  Window* window = *w;
  EngineGuard lock(mutex_);
  for (std::size_t r = 0; r < sizes.size(); ++r) {
    if (sizes[r] > 0) window->ranks[r].view = segment.data() + offsets[r];
  }
  // Mapped by every rank: 8-byte integer accumulates are CPU atomics on
  // the mappings for all (window_atomics.cc), never the NIC's.
  window->word_atomics = false;
  window->view_atomics = window->rma_atomics;
  window->shared_memory = std::move(segment);
  return window;
}

}  // namespace tagwire::engine
