// One-sided communication: windows, put, get and fence (window.h).
#include <algorithm>
#include <cstring>
#include <string>

#include "common/log.h"
#include "engine/engine.h"
#include "engine/idle_backoff.h"

namespace tagwire::engine {

namespace {

// A window's description as it travels in the creation allgather.
struct WindowRecord {
  std::uint64_t base;
  std::uint64_t size;
  std::int32_t disp_unit;
  std::uint32_t key_length;
};

// A transport flush waited for by the fence.
struct FlushWait {
  bool finished = false;
  Status status;
  static void done(void* ctx, const Status& s) {
    auto* f = static_cast<FlushWait*>(ctx);
    f->status = s;
    f->finished = true;
  }
};

}  // namespace

Result<Window*> Engine::win_create(void* base, std::size_t size, int disp_unit,
                                   Communicator* comm) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  if (disp_unit <= 0) {
    return Status(ErrorCode::kInvalidArgument,
                  "window displacement unit " + std::to_string(disp_unit) + " is not positive");
  }
  TAGWIRE_RETURN_IF_ERROR(check_buffer(base, size));
  auto w = std::make_unique<Window>();
  w->engine = this;
  w->comm = comm;
  w->base = base;
  w->size = size;
  w->disp_unit = disp_unit;
  if (size > 0) {
    std::lock_guard lock(mutex_);
    auto reg = transport_->register_memory(base, size, transport::RemoteAccess::kReadAndWrite);
    if (!reg) return reg.status().with_context("registering a window");
    w->registration = std::move(reg).value();
  }
  // Every rank's record and key; keys differ in length, so their lengths
  // go round first and every key is padded to the longest.
  std::span<const std::uint8_t> key;
  if (w->registration) key = w->registration->packed_key();
  const auto key_length = static_cast<std::uint32_t>(key.size());
  auto lengths =
      allgather(comm, {reinterpret_cast<const std::uint8_t*>(&key_length), 4}, kCollectiveTag);
  if (!lengths) return lengths.status().with_context("MPI_Win_create");
  std::uint32_t longest = 0;
  for (const auto& l : *lengths) {
    std::uint32_t v;
    std::memcpy(&v, l.data(), 4);
    longest = std::max(longest, v);
  }
  std::vector<std::uint8_t> mine(sizeof(WindowRecord) + longest, 0);
  const WindowRecord record{reinterpret_cast<std::uint64_t>(base), size, disp_unit, key_length};
  std::memcpy(mine.data(), &record, sizeof(record));
  if (!key.empty()) std::memcpy(mine.data() + sizeof(record), key.data(), key.size());
  auto all = allgather(comm, mine, kCollectiveTag);
  if (!all) return all.status().with_context("MPI_Win_create");
  for (const auto& part : *all) {
    WindowRecord r;
    std::memcpy(&r, part.data(), sizeof(r));
    if (r.key_length > longest) return Status(ErrorCode::kProtocol, "malformed window record");
    RemoteWindow rw;
    rw.base = r.base;
    rw.size = r.size;
    rw.disp_unit = r.disp_unit;
    rw.key.assign(part.begin() + sizeof(r), part.begin() + sizeof(r) + r.key_length);
    w->ranks.push_back(std::move(rw));
  }
  std::lock_guard lock(mutex_);
  windows_.push_back(std::move(w));
  return windows_.back().get();
}

Status Engine::win_fence(Window* w) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  // Local completion of every put and get of the epoch ...
  IdleBackoff idle;
  for (;;) {
    unsigned n;
    {
      std::lock_guard lock(mutex_);
      if (w->pending == 0) break;
      n = progress_locked();
    }
    idle.turn(n != 0);
  }
  // ... then remote completion: the puts are in their targets' memory ...
  FlushWait flush;
  {
    std::lock_guard lock(mutex_);
    auto issued = transport_->flush({&FlushWait::done, &flush});
    if (!issued) return issued.status().with_context("MPI_Win_fence (flush)");
    if (*issued == transport::Issued::kDone) flush.finished = true;
  }
  while (!flush.finished) {
    unsigned n;
    {
      std::lock_guard lock(mutex_);
      n = progress_locked();
    }
    idle.turn(n != 0);
  }
  TAGWIRE_RETURN_IF_ERROR(flush.status.with_context("MPI_Win_fence (flush)"));
  // ... and nobody leaves before everyone's accesses are in.
  TAGWIRE_RETURN_IF_ERROR(barrier(w->comm).with_context("MPI_Win_fence"));
  std::lock_guard lock(mutex_);
  w->epoch_open = true;
  Status first = w->error;
  w->error = Status::ok();
  return first;
}

Status Engine::win_free(Window* w) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  // No access may be under way at any rank when the memory goes.
  Status s = win_fence(w);
  std::lock_guard lock(mutex_);
  auto it = std::find_if(windows_.begin(), windows_.end(),
                         [&](const auto& owned) { return owned.get() == w; });
  if (it == windows_.end()) return {ErrorCode::kInvalidWindow, "unknown or already freed window"};
  windows_.erase(it);
  return s;
}

Result<std::uint64_t> Engine::rma_target(Window* w, std::size_t bytes, int target,
                                         std::uint64_t disp, const char* what) {
  if (w == nullptr) return Status(ErrorCode::kInvalidWindow, "null window");
  TAGWIRE_RETURN_IF_ERROR(check_peer(w->comm, target, false, "target"));
  if (target == kProcNull) return std::uint64_t{0};
  if (!w->epoch_open) {
    return Status(ErrorCode::kRmaSync,
                  std::string(what) + " before the first MPI_Win_fence opened an epoch");
  }
  const RemoteWindow& rw = w->ranks[static_cast<std::size_t>(target)];
  const std::uint64_t unit = static_cast<std::uint64_t>(rw.disp_unit);
  const std::uint64_t offset = disp * unit;
  if ((unit != 0 && offset / unit != disp) || offset > rw.size || bytes > rw.size - offset) {
    return Status(ErrorCode::kRmaRange, std::string(what) + " of " + std::to_string(bytes) +
                                            " bytes at displacement " + std::to_string(disp) +
                                            " (unit " + std::to_string(unit) +
                                            ") is outside rank " + std::to_string(target) +
                                            "'s window of " + std::to_string(rw.size) + " bytes");
  }
  return rw.base + offset;
}

Status Engine::put(Window* w, const void* origin, std::size_t bytes, int target,
                   std::uint64_t disp) {
  // A put only reads `origin`: the cast lets one path issue both.
  return rma(w, {static_cast<std::uint8_t*>(const_cast<void*>(origin)), bytes}, target, disp, true);
}

Status Engine::get(Window* w, void* origin, std::size_t bytes, int target, std::uint64_t disp) {
  return rma(w, {static_cast<std::uint8_t*>(origin), bytes}, target, disp, false);
}

Status Engine::rma(Window* w, std::span<std::uint8_t> origin, int target, std::uint64_t disp,
                   bool put) {
  const char* what = put ? "MPI_Put" : "MPI_Get";
  TAGWIRE_RETURN_IF_ERROR(check_buffer(origin.data(), origin.size()));
  std::lock_guard lock(mutex_);
  auto address = rma_target(w, origin.size(), target, disp, what);
  if (!address) return address.status();
  if (origin.empty() || target == kProcNull) return Status::ok();
  const int peer = w->comm->world_rank(target);
  if (is_dead(peer)) return peer_failed_status(peer);
  const auto& key = w->ranks[static_cast<std::size_t>(target)].key;
  const transport::Completion done{&Engine::on_rma_done, w};
  auto issued = put ? transport_->write(peer, origin, *address, key, done)
                    : transport_->read(peer, origin, *address, key, done);
  if (!issued) return issued.status().with_context(what);
  if (*issued == transport::Issued::kPending) ++w->pending;
  return Status::ok();
}

void Engine::on_rma_done(void* ctx, const Status& s) {
  auto* w = static_cast<Window*>(ctx);
  if (!s.is_ok() && w->error.is_ok()) w->error = s;
  --w->pending;
}

}  // namespace tagwire::engine
