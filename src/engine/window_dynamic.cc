// Dynamic windows (window.h; MPI_Win_create_dynamic / attach / detach).
//
// The window's own memory is a directory of the regions this rank has
// attached: a header (generation, count, bytes) and one record per region
// (base, size, the transport's packed key). The owner rewrites it on
// attach and detach as a seqlock: the generation is odd while it writes.
// An origin reads a target's directory with the transport's read (a
// memcpy where the transport maps it), header, body, header again, and
// keeps the copy if both headers agree and are even. Before every access
// it reads the header alone and fetches again only when the generation
// moved: one 16-byte read per access (a load where the directory is
// mapped, as on one node), the price of never using a stale key. A
// region detached and another attached at the same address (malloc hands
// the address out again) would otherwise be reached with the old
// registration's key, which on verbs breaks the connection (a remote
// access error) and where the old pages are still registered writes into
// memory the target no longer has; MPI asks no synchronisation call of the
// origin between the target's attach and its access, only that it learn
// the address (Open MPI's osc/rdma reads the target's region count the
// same way). This rank's own regions are read from `attached` directly.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>

#include "common/full_fence.h"
#include "engine/engine.h"
#include "engine/idle_backoff.h"

namespace tagwire::engine {

namespace {

struct DirectoryHeader {
  std::uint64_t generation;  // odd while the owner rewrites the directory
  std::uint32_t count;
  std::uint32_t bytes;  // of records after the header
};

struct DirectoryRecord {
  std::uint64_t base;
  std::uint64_t size;
  std::uint32_t key_length;
  std::uint32_t unused;
};

// The directory's size: with UCX's packed keys (100-300 bytes) a few
// hundred regions; Open MPI's default limit is 32.
constexpr std::size_t kDirectoryBytes = 64 * 1024;

constexpr std::size_t padded(std::size_t n) {
  return (n + 7) / 8 * 8;
}

std::string range_text(std::uint64_t address, std::size_t bytes) {
  return std::to_string(bytes) + " bytes at address " + std::to_string(address);
}

}  // namespace

Result<Window*> Engine::win_create_dynamic(Communicator* comm, const WindowHints& hints) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  std::unique_ptr<transport::Registration> directory;
  {
    std::unique_lock lock(mutex_);
    auto m = transport_->allocate_window_memory(kDirectoryBytes);  // zeroed: nothing attached
    lock.unlock();  // win_fail's exchange progresses, taking it
    if (!m) return win_fail(comm, m.status().with_context("MPI_Win_create_dynamic's directory"));
    directory = std::move(m).value();
  }
  auto* base = reinterpret_cast<void*>(directory->address());
  // Peers may read the (empty) directory as soon as their win_open
  // returns, before `dynamic` is set here: it is valid from the start.
  auto w = win_open(base, kDirectoryBytes, 1, comm, std::move(directory), hints);
  if (!w) return w;
  auto dynamic = std::make_unique<DynamicWindow>();
  dynamic->targets.resize((*w)->ranks.size());
  EngineGuard lock(mutex_);
  (*w)->dynamic = std::move(dynamic);
  // Its directory may be mapped everywhere; the memory attached later need
  // not be: no CPU atomics on mappings (window_atomics.cc).
  (*w)->view_atomics = false;
  return *w;
}

Status Engine::publish_directory(Window* w) {
  DynamicWindow& d = *w->dynamic;
  std::vector<std::uint8_t> body;
  for (const auto& [base, region] : d.attached) {
    const auto key = region.registration->packed_key();
    const DirectoryRecord record{base, region.size, static_cast<std::uint32_t>(key.size()), 0};
    const std::size_t at = body.size();
    body.resize(at + sizeof(record) + padded(key.size()), 0);
    std::memcpy(body.data() + at, &record, sizeof(record));
    if (!key.empty()) std::memcpy(body.data() + at + sizeof(record), key.data(), key.size());
  }
  if (sizeof(DirectoryHeader) + body.size() > kDirectoryBytes) {
    return {ErrorCode::kRmaAttach, "MPI_Win_attach: the window's directory of attached regions (" +
                                       std::to_string(kDirectoryBytes) + " bytes, " +
                                       std::to_string(d.attached.size()) +
                                       " regions) is full; detach some first"};
  }
  auto* memory = static_cast<std::uint8_t*>(w->base);
  auto* header = reinterpret_cast<DirectoryHeader*>(memory);
  std::atomic_ref<std::uint64_t> generation(header->generation);  // only this rank writes it
  const std::uint64_t before = generation.load(std::memory_order_relaxed);
  generation.store(before + 1, std::memory_order_relaxed);  // odd: being rewritten
  std::atomic<int> fence_word{0};
  full_fence(fence_word);  // readers see the odd generation before any new byte
  if (!body.empty()) std::memcpy(memory + sizeof(DirectoryHeader), body.data(), body.size());
  header->count = static_cast<std::uint32_t>(d.attached.size());
  header->bytes = static_cast<std::uint32_t>(body.size());
  generation.store(before + 2, std::memory_order_release);  // even: complete
  return Status::ok();
}

Status Engine::win_attach(Window* w, void* base, std::size_t size) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  if (!w->dynamic) {
    return {ErrorCode::kRmaFlavor, "MPI_Win_attach on a window not made by MPI_Win_create_dynamic"};
  }
  if (size == 0) return Status::ok();  // nothing any access could reach
  TAGWIRE_RETURN_IF_ERROR(check_buffer(base, size));
  const auto start = reinterpret_cast<std::uint64_t>(base);
  DynamicWindow& d = *w->dynamic;
  std::lock_guard dynamic_lock(d.mutex);
  // The first region at or after `start`, and the one before it.
  auto after = d.attached.lower_bound(start);
  const bool overlaps_after = after != d.attached.end() && after->first < start + size;
  const bool overlaps_before = after != d.attached.begin() &&
                               std::prev(after)->first + std::prev(after)->second.size > start;
  if (overlaps_after || overlaps_before) {
    return {ErrorCode::kRmaAttach, "MPI_Win_attach: " + range_text(start, size) +
                                       " overlaps memory already attached to this window"};
  }
  AttachedRegion region;
  region.size = size;
  {
    EngineGuard lock(mutex_);
    auto reg = transport_->register_memory(base, size, transport::RemoteAccess::kReadAndWrite);
    if (!reg) return reg.status().with_context("MPI_Win_attach");
    region.registration = std::move(reg).value();
  }
  d.attached.emplace(start, std::move(region));
  Status s = publish_directory(w);
  if (!s.is_ok()) d.attached.erase(start);  // not published: never reachable
  return s;
}

Status Engine::win_detach(Window* w, const void* base) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  if (!w->dynamic) {
    return {ErrorCode::kRmaFlavor, "MPI_Win_detach on a window not made by MPI_Win_create_dynamic"};
  }
  DynamicWindow& d = *w->dynamic;
  std::lock_guard dynamic_lock(d.mutex);
  auto it = d.attached.find(reinterpret_cast<std::uint64_t>(base));
  if (it == d.attached.end()) {
    return {ErrorCode::kRmaAttach,
            "MPI_Win_detach: no region attached to this window begins at address " +
                std::to_string(reinterpret_cast<std::uint64_t>(base))};
  }
  AttachedRegion gone = std::move(it->second);
  d.attached.erase(it);
  Status s = publish_directory(w);  // smaller: cannot be full
  EngineGuard lock(mutex_);
  gone.registration.reset();  // deregistered only once no longer published
  return s;
}

Status Engine::read_window_memory(Window* w, int target, std::size_t offset,
                                  std::span<std::uint8_t> out) {
  if (out.empty()) return Status::ok();  // an empty directory's body
  const RemoteWindow& rw = w->ranks[static_cast<std::size_t>(target)];
  const int peer = w->comm->world_rank(target);
  if (rw.view != nullptr) {
    {
      EngineGuard lock(mutex_);
      if (is_dead(peer)) return peer_failed_status(peer);
    }
    std::memcpy(out.data(), rw.view + offset, out.size());
    std::atomic<int> fence_word{0};
    full_fence(fence_word);  // in order with the next read, as the transport's reads are
    return Status::ok();
  }
  WindowOpWait op;
  {
    EngineGuard lock(mutex_);
    if (is_dead(peer)) return peer_failed_status(peer);
    auto issued = transport_->read(peer, out, rw.base + offset, rw.key, op.completion());
    if (!issued) return issued.status();
    if (*issued == transport::Issued::kDone) op.finished = true;
  }
  await(op);
  return op.status;
}

Status Engine::fetch_directory(Window* w, int target, DynamicTarget& copy) {
  IdleBackoff idle;
  for (;;) {
    DirectoryHeader first{}, last{};
    TAGWIRE_RETURN_IF_ERROR(
        read_window_memory(w, target, 0, {reinterpret_cast<std::uint8_t*>(&first), sizeof(first)}));
    if (first.generation % 2 == 0) {
      if (copy.fetched && first.generation == copy.generation) return Status::ok();  // unchanged
      if (first.bytes > kDirectoryBytes - sizeof(DirectoryHeader)) {
        return Status(ErrorCode::kProtocol, "a dynamic window's directory says " +
                                                std::to_string(first.bytes) + " bytes");
      }
      std::vector<std::uint8_t> body(first.bytes);
      TAGWIRE_RETURN_IF_ERROR(read_window_memory(w, target, sizeof(DirectoryHeader), body));
      TAGWIRE_RETURN_IF_ERROR(
          read_window_memory(w, target, 0, {reinterpret_cast<std::uint8_t*>(&last), sizeof(last)}));
      if (last.generation == first.generation) {
        std::vector<std::shared_ptr<const DynamicRegion>> regions;
        std::size_t at = 0;
        for (std::uint32_t i = 0; i < first.count; ++i) {
          DirectoryRecord record;
          if (at + sizeof(record) > body.size()) break;
          std::memcpy(&record, body.data() + at, sizeof(record));
          at += sizeof(record);
          if (record.key_length > body.size() - at) {
            return Status(ErrorCode::kProtocol, "a dynamic window's directory is malformed");
          }
          auto region = std::make_shared<DynamicRegion>();
          region->base = record.base;
          region->size = record.size;
          region->key.assign(body.begin() + static_cast<std::ptrdiff_t>(at),
                             body.begin() + static_cast<std::ptrdiff_t>(at + record.key_length));
          at += padded(record.key_length);
          {
            EngineGuard lock(mutex_);
            region->view = transport_->map_remote(w->comm->world_rank(target), region->key,
                                                  region->base, region->size);
          }
          regions.push_back(std::move(region));
        }
        copy.regions = std::move(regions);
        copy.generation = first.generation;
        copy.fetched = true;
        return Status::ok();
      }
    }
    // The owner is rewriting it: look again shortly.
    unsigned n;
    {
      EngineGuard lock(mutex_);
      n = progress_locked();
    }
    idle.turn(n != 0);
  }
}

Result<std::shared_ptr<const DynamicRegion>> Engine::dynamic_region(Window* w, int target,
                                                                    std::uint64_t address,
                                                                    std::size_t bytes,
                                                                    const char* what) {
  using Found = std::shared_ptr<const DynamicRegion>;
  if (w == nullptr || !w->dynamic || bytes == 0 || target < 0 ||
      target >= static_cast<int>(w->ranks.size())) {
    return Found{};
  }
  auto holds = [&](const DynamicRegion& r) {
    return address >= r.base && address - r.base <= r.size && bytes <= r.size - (address - r.base);
  };
  DynamicWindow& d = *w->dynamic;
  std::lock_guard dynamic_lock(d.mutex);
  if (w->comm->world_rank(target) == world_rank()) {  // this rank's own: no directory to read
    auto it = d.attached.upper_bound(address);
    if (it != d.attached.begin()) {
      --it;
      auto region = std::make_shared<DynamicRegion>();
      region->base = it->first;
      region->size = it->second.size;
      const auto key = it->second.registration->packed_key();
      region->key.assign(key.begin(), key.end());
      region->view = reinterpret_cast<std::uint8_t*>(it->first);
      if (holds(*region)) return Found(std::move(region));
    }
  } else {
    DynamicTarget& copy = d.targets[static_cast<std::size_t>(target)];
    TAGWIRE_RETURN_IF_ERROR(fetch_directory(w, target, copy).with_context(what));
    for (const auto& region : copy.regions) {
      if (holds(*region)) return region;
    }
  }
  return Status(ErrorCode::kRmaRange, std::string(what) + ": " + range_text(address, bytes) +
                                          " is not in memory rank " + std::to_string(target) +
                                          " has attached to this dynamic window");
}

Result<std::vector<Engine::DynamicPart>> Engine::dynamic_parts(Window* w, int target,
                                                               std::uint64_t address,
                                                               std::size_t bytes,
                                                               const char* what) {
  std::vector<DynamicPart> parts;
  std::uint64_t at = address;
  std::size_t left = bytes;
  while (left > 0) {
    auto region = dynamic_region(w, target, at, 1, what);
    if (!region || *region == nullptr) {
      // Said for the whole access, as a single region's miss is.
      auto whole = dynamic_region(w, target, address, bytes, what);
      if (!whole) return whole.status();
      return std::vector<DynamicPart>{{std::move(whole).value(), bytes}};
    }
    const std::uint64_t end = (*region)->base + (*region)->size;
    const std::size_t take = static_cast<std::size_t>(std::min<std::uint64_t>(left, end - at));
    parts.push_back({std::move(region).value(), take});
    at += take;
    left -= take;
  }
  return parts;
}

}  // namespace tagwire::engine
