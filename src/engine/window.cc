// One-sided communication: windows, put, get and fence (window.h).
#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "common/cached_copy.h"
#include "common/log.h"
#include "engine/engine.h"
#include "engine/idle_backoff.h"

namespace tagwire::engine {

namespace {

// A window's description as it travels in the creation allgather.
struct WindowRecord {
  std::uint64_t base;
  std::uint64_t size;
  std::uint64_t lock_words;
  std::int32_t disp_unit;
  std::uint32_t key_length;
  std::uint32_t lock_key_length;
  std::uint32_t flags;  // kRecord*
};
// This rank takes word atomics (Window::word_atomics needs every rank's).
constexpr std::uint32_t kRecordWordAtomics = 1;
// TAGWIRE_RMA_ATOMICS is on here (Window::rma_atomics needs every rank's).
constexpr std::uint32_t kRecordRmaAtomics = 2;

// win_open's first exchange, one per rank: its keys' lengths, and the
// error code of a rank whose part failed (0: none).
struct WindowOpening {
  std::uint32_t key_length;
  std::uint32_t lock_key_length;
  std::uint32_t failed;
};

Status positive_unit(int disp_unit) {
  if (disp_unit > 0) return Status::ok();
  return Status(ErrorCode::kInvalidArgument,
                "window displacement unit " + std::to_string(disp_unit) + " is not positive");
}

}  // namespace

Status Engine::fail_in_first_exchange(Communicator* comm, Status why,
                                      std::span<const std::uint8_t> record) {
  if (!check_comm(comm).is_ok() || why.is_ok()) return why;
  // The others' answer changes nothing here: this rank fails either way.
  (void)allgather(comm, record, kCollectiveTag);
  return why;
}

Status Engine::win_fail(Communicator* comm, Status why) {
  const WindowOpening mine{0, 0, static_cast<std::uint32_t>(why.code())};
  return fail_in_first_exchange(comm, std::move(why),
                                {reinterpret_cast<const std::uint8_t*>(&mine), sizeof(mine)});
}

Result<Window*> Engine::win_create(void* base, std::size_t size, int disp_unit, Communicator* comm,
                                   const WindowHints& hints) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  Status bad = positive_unit(disp_unit);
  if (bad.is_ok()) bad = check_buffer(base, size);
  if (!bad.is_ok()) return win_fail(comm, bad);
  std::unique_ptr<transport::Registration> registration;
  if (size > 0) {
    std::unique_lock lock(mutex_);
    auto reg = transport_->register_memory(base, size, transport::RemoteAccess::kReadAndWrite);
    lock.unlock();  // win_fail's exchange progresses, taking it
    if (!reg) return win_fail(comm, reg.status().with_context("registering a window"));
    registration = std::move(reg).value();
  }
  return win_open(base, size, disp_unit, comm, std::move(registration), hints);
}

Result<Window*> Engine::win_allocate(std::size_t size, int disp_unit, Communicator* comm,
                                     const WindowHints& hints) {
  TAGWIRE_RETURN_IF_ERROR(check_comm(comm));
  if (Status bad = positive_unit(disp_unit); !bad.is_ok()) return win_fail(comm, bad);
  std::unique_ptr<transport::Registration> memory;
  void* base = nullptr;
  if (size > 0) {
    std::unique_lock lock(mutex_);
    auto m = transport_->allocate_window_memory(size);
    lock.unlock();  // win_fail's exchange progresses, taking it
    if (!m) {
      return win_fail(
          comm, m.status().with_context("MPI_Win_allocate of " + std::to_string(size) + " bytes"));
    }
    memory = std::move(m).value();
    base = reinterpret_cast<void*>(memory->address());
  }
  return win_open(base, size, disp_unit, comm, std::move(memory), hints);
}

Result<Window*> Engine::win_open(void* base, std::size_t size, int disp_unit, Communicator* comm,
                                 std::unique_ptr<transport::Registration> registration,
                                 const WindowHints& hints) {
  const bool atomics = hints.rma_atomics.value_or(config_.rma_atomics);
  auto w = std::make_unique<Window>();
  w->engine = this;
  w->comm = comm;
  w->base = base;
  w->size = size;
  w->disp_unit = disp_unit;
  w->registration = std::move(registration);
  {
    std::unique_lock lock(mutex_);
    auto words = transport_->allocate_atomic_words(
        window_lock_words(static_cast<std::size_t>(comm->size())));
    lock.unlock();  // win_fail's exchange progresses, taking it
    if (!words) return win_fail(comm, words.status().with_context("a window's lock words"));
    w->lock_words = std::move(words).value();
  }
  // Every rank's record and keys; keys differ in length, so their lengths
  // go round first (with the error of any rank whose part failed), and
  // every key is padded to the longest.
  std::span<const std::uint8_t> key;
  if (w->registration) key = w->registration->packed_key();
  const std::span<const std::uint8_t> lock_key = w->lock_words->packed_key();
  const WindowOpening opening{static_cast<std::uint32_t>(key.size()),
                              static_cast<std::uint32_t>(lock_key.size()), 0};
  const std::uint32_t key_lengths[2] = {opening.key_length, opening.lock_key_length};
  auto lengths = allgather(comm, {reinterpret_cast<const std::uint8_t*>(&opening), sizeof(opening)},
                           kCollectiveTag);
  if (!lengths) return lengths.status().with_context("MPI_Win_create");
  std::uint32_t longest[2] = {0, 0};
  for (std::size_t r = 0; r < lengths->size(); ++r) {
    WindowOpening v;
    if ((*lengths)[r].size() != sizeof(v)) {
      return Status(ErrorCode::kProtocol,
                    "malformed window opening from rank " + std::to_string(r));
    }
    std::memcpy(&v, (*lengths)[r].data(), sizeof(v));
    if (v.failed != 0) {
      return Status(failed_part_code(v.failed),
                    "rank " + std::to_string(r) +
                        " of the communicator could not make its part of the window "
                        "(its own error says why)");
    }
    longest[0] = std::max(longest[0], v.key_length);
    longest[1] = std::max(longest[1], v.lock_key_length);
  }
  std::vector<std::uint8_t> mine(sizeof(WindowRecord) + longest[0] + longest[1], 0);
  const WindowRecord record{
      reinterpret_cast<std::uint64_t>(base),
      size,
      w->lock_words->address(),
      disp_unit,
      key_lengths[0],
      key_lengths[1],
      (atomics ? kRecordRmaAtomics : 0u) |
          (atomics && transport_->offers_word_atomics() ? kRecordWordAtomics : 0u)};
  std::memcpy(mine.data(), &record, sizeof(record));
  std::uint8_t* const keys = mine.data() + sizeof(record);
  if (!key.empty()) std::memcpy(keys, key.data(), key.size());
  std::memcpy(keys + longest[0], lock_key.data(), lock_key.size());
  auto all = allgather(comm, mine, kCollectiveTag);
  if (!all) return all.status().with_context("MPI_Win_create");
  w->word_atomics = true;
  w->rma_atomics = true;
  for (const auto& part : *all) {
    WindowRecord r;
    std::memcpy(&r, part.data(), sizeof(r));
    if ((r.flags & kRecordWordAtomics) == 0) w->word_atomics = false;
    if ((r.flags & kRecordRmaAtomics) == 0) w->rma_atomics = false;
    if (r.key_length > longest[0] || r.lock_key_length > longest[1]) {
      return Status(ErrorCode::kProtocol, "malformed window record");
    }
    const auto* at = part.data() + sizeof(r);
    RemoteWindow rw;
    rw.base = r.base;
    rw.size = r.size;
    rw.disp_unit = r.disp_unit;
    rw.key.assign(at, at + r.key_length);
    rw.lock_words = r.lock_words;
    rw.lock_key.assign(at + longest[0], at + longest[0] + r.lock_key_length);
    w->ranks.push_back(std::move(rw));
  }
  {
    EngineGuard lock(mutex_);
    for (std::size_t t = 0; t < w->ranks.size(); ++t) {
      RemoteWindow& rw = w->ranks[t];
      const int peer = comm->world_rank(static_cast<int>(t));
      if (rw.size > 0 && !rw.key.empty()) {
        rw.view = transport_->map_remote(peer, rw.key, rw.base, rw.size);
      }
      // Where the transport maps peers' memory, accumulates are a memcpy
      // under the lock (window_atomics.cc needs every origin's to be atomics).
      if (rw.view != nullptr) w->word_atomics = false;
      rw.lock_view = reinterpret_cast<std::uint64_t*>(
          transport_->map_remote(peer, rw.lock_key, rw.lock_words,
                                 window_lock_words(w->ranks.size()) * sizeof(std::uint64_t)));
    }
  }
  // CPU atomics on the mappings (window_atomics.cc) need every origin to
  // map every part: the ranks agree on it, where the transport maps at all.
  if (caps_.maps_peer_memory && w->rma_atomics) {
    std::uint8_t maps_all = 1;
    for (std::size_t t = 0; t < w->ranks.size(); ++t) {
      if (static_cast<int>(t) != comm->rank() && w->ranks[t].size > 0 &&
          w->ranks[t].view == nullptr) {
        maps_all = 0;
      }
    }
    auto agreed = allgather(comm, {&maps_all, 1}, kCollectiveTag);
    if (!agreed) return agreed.status().with_context("MPI_Win_create");
    w->view_atomics = std::all_of(agreed->begin(), agreed->end(),
                                  [](const auto& v) { return !v.empty() && v[0] == 1; });
  }
  const std::size_t n = w->ranks.size();
  w->locks.assign(n, HeldLock::kNone);
  w->in_access_group.assign(n, 0);
  w->posts_sent.assign(n, 0);
  w->posts_taken.assign(n, 0);
  w->completes_sent.assign(n, 0);
  w->completes_taken.assign(n, 0);
  EngineGuard lock(mutex_);
  windows_.push_back(std::move(w));
  return windows_.back().get();
}

Status Engine::win_flush_local(Window* w, int target) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  progress_until([&] { return w->pending == 0; });
  std::unique_lock lock(mutex_);
  return take_flush_errors(w, target, lock);
}

Status Engine::take_flush_errors(Window* w, int target, std::unique_lock<EngineLock>& lock) {
  if (nothing_failed(*w)) return Status::ok();
  Status first = std::exchange(w->error, Status::ok());
  if (target < 0) {
    Status lost = std::exchange(w->lost, Status::ok());
    // A transport's error from one of the targets: a death among them
    // makes it MPI_ERR_PROC_FAILED, as a flush of one target does.
    if (!first.is_ok()) first = verdict_on_any(*w->comm, std::move(first), lock);
    if (first.is_ok()) first = std::move(lost);
  } else if (target < w->comm->size()) {
    const int peer = w->comm->world_rank(target);
    if (first.is_ok() && is_dead(peer)) first = peer_failed_status(peer);
    if (!first.is_ok()) first = verdict_on(peer, std::move(first), lock);  // the target's death?
  }
  return first;
}

Status Engine::win_flush_waiting(Window* w, int target) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  {
    // Every access since the last flush was done in place (a memcpy or a
    // CPU atomic on a mapped window): nothing to wait for, one lock taken
    // (three, through the general path below, on every MPI_Fetch_and_op +
    // flush over shared memory); only errors to report.
    std::unique_lock lock(mutex_);
    if (w->pending == 0 && !w->unflushed) return take_flush_errors(w, target, lock);
  }
  // Local completion of every put and get issued so far ...
  Status local = win_flush_local(w, target);
  // ... then remote completion: the puts are in their targets' memory.
  // Nothing to wait for when every access since the last flush was a
  // memcpy into a mapped window.
  WindowOpWait flush;
  {
    EngineGuard lock(mutex_);
    if (!w->unflushed) return local;
    w->unflushed = false;
    auto issued = transport_->flush(flush.completion());
    if (!issued) return issued.status().with_context("flushing a window");
    if (*issued == transport::Issued::kDone) flush.finished = true;
  }
  await(flush);
  TAGWIRE_RETURN_IF_ERROR(local);
  return flush.status.with_context("flushing a window");
}

Status Engine::win_fence(Window* w) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  // A failed access is reported after the barrier: the other ranks are in
  // it, and nobody leaves before everyone's accesses are in.
  Status flushed = win_flush(w);
  TAGWIRE_RETURN_IF_ERROR(barrier(w->comm).with_context("MPI_Win_fence"));
  EngineGuard lock(mutex_);
  w->epoch_open = true;
  return flushed.with_context("MPI_Win_fence");
}

Status Engine::win_free(Window* w) {
  if (w == nullptr) return {ErrorCode::kInvalidWindow, "null window"};
  // No access may be under way at any rank when the memory goes.
  Status s = win_fence(w);
  EngineGuard lock(mutex_);
  auto it = std::find_if(windows_.begin(), windows_.end(),
                         [&](const auto& owned) { return owned.get() == w; });
  if (it == windows_.end()) return {ErrorCode::kInvalidWindow, "unknown or already freed window"};
  windows_.erase(it);
  return s;
}

namespace {

// rma_target's errors, out of line: built in place, their strings cost
// every access registers and instructions (~20 of an 8-byte MPI_Put's).
[[gnu::cold, gnu::noinline]] Status outside_epoch(const char* what, int target) {
  return Status(ErrorCode::kRmaSync,
                std::string(what) + " to rank " + std::to_string(target) +
                    " outside an access epoch (no MPI_Win_fence yet, no lock on it, not in "
                    "MPI_Win_start's group)");
}

[[gnu::cold, gnu::noinline]] Status outside_window(const char* what, std::size_t bytes,
                                                   std::uint64_t disp, std::uint64_t unit,
                                                   std::ptrdiff_t offset, int target,
                                                   std::uint64_t size) {
  return Status(ErrorCode::kRmaRange,
                std::string(what) + " of " + std::to_string(bytes) + " bytes at displacement " +
                    std::to_string(disp) + " (unit " + std::to_string(unit) + ")" +
                    (offset != 0 ? " and " + std::to_string(offset) + " bytes" : "") +
                    " is outside rank " + std::to_string(target) + "'s window of " +
                    std::to_string(size) + " bytes");
}

}  // namespace

Result<RmaTarget> Engine::rma_target(Window* w, std::size_t bytes, int target, std::uint64_t disp,
                                     const char* what, const DynamicRegion* region,
                                     std::ptrdiff_t offset) {
  if (w == nullptr) return Status(ErrorCode::kInvalidWindow, "null window");
  TAGWIRE_RETURN_IF_ERROR(check_peer(w->comm, target, false, "target"));
  if (target == kProcNull) return RmaTarget{};
  const auto t = static_cast<std::size_t>(target);
  if (!w->may_access(t)) return outside_epoch(what, target);
  if (w->dynamic) {  // `disp` + `offset` is an address in `region` (dynamic_region checked it)
    const std::uint64_t address = disp + static_cast<std::uint64_t>(offset);
    if (region == nullptr) return RmaTarget{address, {}, nullptr};  // no bytes
    return RmaTarget{address, region->key,
                     region->view != nullptr ? region->view + (address - region->base) : nullptr};
  }
  const RemoteWindow& rw = w->ranks[t];
  std::uint64_t at = 0;
  if (!rw.place(disp, offset, bytes, &at)) [[unlikely]] {
    return outside_window(what, bytes, disp, static_cast<std::uint64_t>(rw.disp_unit), offset,
                          target, rw.size);
  }
  return RmaTarget{rw.base + at, rw.key, rw.view != nullptr ? rw.view + at : nullptr};
}

Status Engine::put(Window* w, const void* origin, std::size_t bytes, int target, std::uint64_t disp,
                   std::ptrdiff_t offset) {
  // A put only reads `origin`: the cast lets one path issue both.
  return rma(w, {static_cast<std::uint8_t*>(const_cast<void*>(origin)), bytes}, target, disp,
             offset, true);
}

Status Engine::get(Window* w, void* origin, std::size_t bytes, int target, std::uint64_t disp,
                   std::ptrdiff_t offset) {
  return rma(w, {static_cast<std::uint8_t*>(origin), bytes}, target, disp, offset, false);
}

Status Engine::rma_check(Window* w, std::size_t bytes, int target, std::uint64_t disp,
                         std::ptrdiff_t offset, const char* what) {
  auto region = dynamic_region(w, target, disp + static_cast<std::uint64_t>(offset), bytes, what);
  if (!region && region.status().code() == ErrorCode::kRmaRange) {
    // Regions back to back hold it if rma would split it among them.
    auto parts = dynamic_parts(w, target, disp + static_cast<std::uint64_t>(offset), bytes, what);
    return !parts ? parts.status() : parts->size() > 1 ? Status::ok() : region.status();
  }
  if (!region) return region.status();
  EngineGuard lock(mutex_);
  return rma_target(w, bytes, target, disp, what, region->get(), offset).status();
}

Status Engine::rma(Window* w, std::span<std::uint8_t> origin, int target, std::uint64_t disp,
                   std::ptrdiff_t offset, bool put) {
  // A mapped target inside an epoch, in range and alive: a copy, before
  // anything below (mapped_access says why).
  if (mapped_copy(w, origin.data(), origin.size(), target, disp, offset, put)) return Status();
  const char* what = put ? "MPI_Put" : "MPI_Get";
  if (origin.data() == nullptr && !origin.empty()) [[unlikely]]
    return check_buffer(origin.data(), origin.size());
  // (The lookup, and the shared pointer it returns, only where there are
  // regions: 50 of an 8-byte MPI_Put + flush's instructions on the others.)
  std::shared_ptr<const DynamicRegion> attached;
  if (w != nullptr && w->dynamic) {
    auto found =
        dynamic_region(w, target, disp + static_cast<std::uint64_t>(offset), origin.size(), what);
    if (found) {
      attached = std::move(found).value();
    } else if (found.status().code() != ErrorCode::kRmaRange) {
      return found.status();
    } else {
      // Not in one region: maybe in several attached back to back (MPI lets
      // an access span them); one transfer per region, each has its key.
      auto parts =
          dynamic_parts(w, target, disp + static_cast<std::uint64_t>(offset), origin.size(), what);
      if (!parts) return parts.status();
      if (parts->size() < 2) return found.status();
      std::size_t done = 0;
      for (const DynamicPart& part : *parts) {
        TAGWIRE_RETURN_IF_ERROR(rma(w, origin.subspan(done, part.length), target, disp,
                                    offset + static_cast<std::ptrdiff_t>(done), put));
        done += part.length;
      }
      return Status::ok();
    }
  }
  EngineGuard lock(mutex_);
  auto at = rma_target(w, origin.size(), target, disp, what, attached.get(), offset);
  if (!at) return at.status();
  if (origin.empty() || target == kProcNull) return Status::ok();
  const int peer = w->comm->world_rank(target);
  if (is_dead(peer)) return peer_failed_status(peer);
  if (at->view != nullptr) {  // mapped here: the access is complete at once
    if (put) {
      copy_cached(at->view, origin.data(), origin.size());
    } else {
      copy_cached(origin.data(), at->view, origin.size());
    }
    return Status::ok();
  }
  const transport::Completion done{&Engine::on_rma_done, w};
  auto issued = put ? transport_->write(peer, origin, at->address, at->key, done)
                    : transport_->read(peer, origin, at->address, at->key, done);
  if (!issued) return issued.status().with_context(what);
  // A get is complete at the target once its data is here (local
  // completion, `pending`); only a put waits for the transport's flush.
  // (Every get + flush over verbs paid a second round trip for it: 73 us
  // against Open MPI's 63 in the soft-RoCE VM.)
  if (put) w->unflushed = true;
  if (*issued == transport::Issued::kPending) ++w->pending;
  return Status::ok();
}

void Engine::on_rma_done(void* ctx, const Status& s) {
  auto* w = static_cast<Window*>(ctx);
  Status& kept = s.code() == ErrorCode::kPeerFailed ? w->lost : w->error;
  if (!s.is_ok() && kept.is_ok()) kept = s;
  --w->pending;
}

}  // namespace tagwire::engine
