// Word atomics: 8-byte integer accumulates by atomics, word by word
// (window.h, Engine::update_words): the transport's remote atomics, or the
// CPU's on a window every rank maps.
//
// Under the accumulate lock (window_lock.cc) an MPI_Fetch_and_op costs a
// compare-and-swap to take the lock, a read, a write, a flush and a
// compare-and-swap to give it back: five round trips. Where every rank's
// transport has remote atomics (verbs: the NIC's), an 8-byte integer word
// is updated by one of them instead: MPI_SUM and MPI_NO_OP by one
// fetch-and-add, MPI_Compare_and_swap by one compare-and-swap, every other
// operation by a compare-and-swap from the value last seen, retried with
// the value it found until it takes.
//
// MPI makes accumulates atomic per element and datatype (MPI-3.1 §11.7.1),
// so the rule that keeps them so is per word: every origin updates every
// aligned 8-byte integer word of such a window through the transport's
// atomics, its own window included (through the NIC too where its atomics
// are not the CPU's, IBV_ATOMIC_HCA), and never under the lock. A word
// that is not 8-byte aligned at the target cannot take a NIC atomic; such
// a word is always misaligned, whoever updates it, so it always goes under
// the accumulate lock, one word at a time.
//
// On one host (the shm transport), where every rank maps every part of
// the window (MPI_Win_allocate's shared segments, a shared window: the
// ranks agree on it at creation), the same rule holds with the CPU's
// atomics on the mappings in place of the NIC's: the lock cost a
// compare-and-swap, two memcpys and a compare-and-swap per update.
#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace tagwire::engine {

bool Engine::takes_word_atomics(const Window* w) {
  return w != nullptr && (w->word_atomics || w->view_atomics);
}

namespace {

// A CPU atomic on an aligned word every rank maps: the old value.
std::uint64_t update_mapped_word(std::uint8_t* here, const Engine::WordUpdate& how,
                                 std::uint64_t operand) {
  std::atomic_ref<std::uint64_t> word(*reinterpret_cast<std::uint64_t*>(here));
  if (how.kind == Engine::WordUpdate::kAdd)
    return word.fetch_add(operand, std::memory_order_acq_rel);
  // Swapped from the value seen until it takes, or the update leaves the
  // word alone (a compare that fails).
  std::uint64_t seen = word.load(std::memory_order_acquire);
  for (std::optional<std::uint64_t> next; (next = how.next(seen, operand));) {
    if (word.compare_exchange_weak(seen, *next, std::memory_order_acq_rel)) break;
  }
  return seen;
}

}  // namespace

Result<bool> Engine::update_words(Window* w, int target, std::uint64_t disp,
                                  std::span<const std::ptrdiff_t> offsets, const WordUpdate& how,
                                  std::span<std::uint64_t> old_values, const char* what) {
  if (w == nullptr) return Status(ErrorCode::kInvalidWindow, "null window");
  if (!w->word_atomics && !w->view_atomics) return false;
  if (old_values.size() != offsets.size() || how.operands.size() != offsets.size() ||
      (how.kind == WordUpdate::kCombine && !how.combine)) {
    return Status(ErrorCode::kInternal, std::string(what) + ": a word update without its operands");
  }
  if (offsets.empty()) return false;  // accumulate() checks the epoch and the rank
  // One aligned word of a part mapped here, for an update mapped_word does
  // not take (MPI_MIN, MAX, PROD, the bitwise and logical ops, other
  // 8-byte types): the CPU atomic, without the general path's region,
  // target and frame (half of a one-word update + flush, 2026-12-02).
  if (w->view_atomics && offsets.size() == 1) {
    if (std::uint8_t* here = mapped_word_at(w, target, disp, offsets[0])) {
      old_values[0] = update_mapped_word(here, how, how.operands[0]);
      return true;
    }
  }
  const auto [lo_it, hi_it] = std::minmax_element(offsets.begin(), offsets.end());
  const std::ptrdiff_t lo = *lo_it;
  const auto span = static_cast<std::size_t>(*hi_it - lo) + 8;
  std::shared_ptr<const DynamicRegion> region;
  if (w->dynamic) {
    auto found = dynamic_region(w, target, disp + static_cast<std::uint64_t>(lo), span, what);
    if (!found) return found.status();
    region = std::move(found).value();
  }
  Result<RmaTarget> at = RmaTarget{};
  int peer = -1;
  {
    EngineGuard lock(mutex_);
    at = rma_target(w, span, target, disp, what, region.get(), lo);
    if (!at) return at.status();
    if (target == kProcNull) return true;
    // With the transport's atomics, a view here is this rank's own
    // attached memory (a dynamic window's): it goes through them as every
    // other rank's update of it does (a window the transport maps here
    // takes CPU atomics on the mappings instead, window.cc).
    peer = w->comm->world_rank(target);
    if (is_dead(peer)) return peer_failed_status(peer);
    counters_.word_atomics += offsets.size();
  }
  if (!w->view_atomics) {
    // (A function of its own: inside this one, its frame cost every
    // fetch-and-op over shared memory ~40 instructions.)
    return update_remote_words(w, target, disp, peer, *at, offsets, lo, how, old_values, what);
  }
  // Every rank maps this part: a CPU atomic on the mapping, as every
  // other origin's on its own.
  const bool self = peer == world_rank();
  std::uint8_t* here = self ? reinterpret_cast<std::uint8_t*>(at->address) : at->view;
  if (here == nullptr) {
    return Status(ErrorCode::kInternal,
                  std::string(what) + ": rank " + std::to_string(target) +
                      "'s window is not mapped here, though every rank agreed it was");
  }
  // (No list of the aligned words here, as the NIC's path keeps: its
  // heap allocation took osu_p2p fop_latency from 0.08 to 0.11 us.)
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    if ((at->address + static_cast<std::uint64_t>(offsets[i] - lo)) % 8 != 0) {
      TAGWIRE_RETURN_IF_ERROR(update_word_locked(w, target, disp, offsets[i], how, how.operands[i],
                                                 &old_values[i], what));
      continue;
    }
    old_values[i] = update_mapped_word(here + (offsets[i] - lo), how, how.operands[i]);
  }
  return true;
}

Status Engine::update_word_locked(Window* w, int target, std::uint64_t disp, std::ptrdiff_t offset,
                                  const WordUpdate& how, std::uint64_t operand, std::uint64_t* old,
                                  const char* what) {
  return accumulate(
      w, target, disp, 8,
      [&](std::span<std::uint8_t> bytes) -> Result<bool> {
        std::uint64_t word = 0;
        std::memcpy(&word, bytes.data(), 8);
        *old = word;
        const std::optional<std::uint64_t> next = how.next(word, operand);
        if (!next) return false;
        std::memcpy(bytes.data(), &*next, 8);
        return true;
      },
      what, {}, offset);
}

Result<bool> Engine::update_remote_words(Window* w, int target, std::uint64_t disp, int peer,
                                         const RmaTarget& at,
                                         std::span<const std::ptrdiff_t> offsets, std::ptrdiff_t lo,
                                         const WordUpdate& how, std::span<std::uint64_t> old_values,
                                         const char* what) {
  auto address_of = [&](std::size_t i) {
    return at.address + static_cast<std::uint64_t>(offsets[i] - lo);
  };
  std::vector<std::size_t> aligned;
  aligned.reserve(offsets.size());
  for (std::size_t i = 0; i < offsets.size(); ++i) {
    if (address_of(i) % 8 != 0) {
      TAGWIRE_RETURN_IF_ERROR(update_word_locked(w, target, disp, offsets[i], how, how.operands[i],
                                                 &old_values[i], what));
    } else {
      aligned.push_back(i);
    }
  }
  if (aligned.empty()) return true;

  // One transport atomic per word of `words`, all issued before any is
  // waited for: a fetch-and-add of the word's operand (kAdd), of 0 to read
  // it (kRead: atomic with the others, where a READ need not be), or a
  // swap of the word's guess for its next value (kSwap). Every issued one
  // is waited for, even after a failure: their answers land in `issues`.
  struct Issue {
    std::uint64_t compare = 0;
    std::uint64_t desired = 0;
    std::uint64_t old = 0;
    WindowOpWait wait;
  };
  enum class Op { kAdd, kRead, kSwap };
  auto run = [&](const std::vector<std::size_t>& words, Op op, std::vector<Issue>& issues) {
    Status failed;
    {
      EngineGuard lock(mutex_);
      for (std::size_t k = 0; k < words.size(); ++k) {
        Issue& is = issues[k];
        if (!failed.is_ok()) {
          is.wait.finished = true;
          continue;
        }
        const std::uint64_t address = address_of(words[k]);
        auto issued = op == Op::kSwap
                          ? transport_->compare_and_swap(peer, address, at.key, is.compare,
                                                         is.desired, &is.old, is.wait.completion())
                          : transport_->fetch_add(peer, address, at.key,
                                                  op == Op::kAdd ? how.operands[words[k]] : 0,
                                                  &is.old, is.wait.completion());
        if (!issued) {
          failed = issued.status();
          is.wait.finished = true;
        } else if (*issued == transport::Issued::kDone) {
          is.wait.finished = true;
        }
      }
    }
    progress_until([&] {
      return std::all_of(issues.begin(), issues.end(),
                         [](const Issue& is) { return is.wait.finished; });
    });
    for (const Issue& is : issues) {
      if (failed.is_ok() && !is.wait.status.is_ok()) failed = is.wait.status;
    }
    return failed.with_context(what);
  };

  if (how.kind == WordUpdate::kAdd) {
    std::vector<Issue> adds(aligned.size());
    TAGWIRE_RETURN_IF_ERROR(run(aligned, Op::kAdd, adds));
    for (std::size_t k = 0; k < aligned.size(); ++k) old_values[aligned[k]] = adds[k].old;
    return true;
  }
  // Swaps: a first guess at each word (the comparand, or the word's value
  // read), then rounds of swaps for the words whose guess was wrong. The
  // guesses are kept in old_values, by word.
  if (how.kind == WordUpdate::kCombine) {
    std::vector<Issue> reads(aligned.size());
    TAGWIRE_RETURN_IF_ERROR(run(aligned, Op::kRead, reads));
    for (std::size_t k = 0; k < aligned.size(); ++k) old_values[aligned[k]] = reads[k].old;
  } else {
    for (std::size_t i : aligned) old_values[i] = how.compare;
  }
  std::vector<std::size_t> pending = aligned;
  while (!pending.empty()) {
    std::vector<Issue> round(pending.size());
    for (std::size_t k = 0; k < pending.size(); ++k) {
      const std::uint64_t guess = old_values[pending[k]];
      round[k].compare = guess;
      // A compare-and-swap's guess is its comparand, and a combine always
      // has a next value: value_or is never taken.
      round[k].desired = how.next(guess, how.operands[pending[k]]).value_or(guess);
    }
    TAGWIRE_RETURN_IF_ERROR(run(pending, Op::kSwap, round));
    std::vector<std::size_t> again;
    for (std::size_t k = 0; k < pending.size(); ++k) {
      // What the word held: the old value when the swap took, and for a
      // combine whose guess was wrong, the next guess. A compare-and-swap
      // is one try.
      old_values[pending[k]] = round[k].old;
      if (how.kind == WordUpdate::kCombine && round[k].old != round[k].compare) {
        again.push_back(pending[k]);
      }
    }
    pending.swap(again);
  }
  return true;
}

}  // namespace tagwire::engine
