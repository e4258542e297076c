// EngineCounters: what the engine and its layers count (tagwire-info and
// the tests read them; the cancel layer counts its own here too).
#pragma once

#include <cstdint>

#include "matching/nic_matcher.h"

namespace tagwire::engine {

struct EngineCounters {
  std::uint64_t eager_sent = 0;
  std::uint64_t rendezvous_sent = 0;
  std::uint64_t unexpected = 0;        // messages that arrived before their receive
  std::uint64_t dropped_messages = 0;  // failed wire checks
  std::uint64_t live_requests = 0;
  // Blocking receives that completed without a request (unnamed_receive.h).
  std::uint64_t receives_unnamed = 0;
  // Send cancel, as the sender: requests sent, and how many the receiver
  // granted; as the receiver: messages dropped for a cancel, and refusals.
  std::uint64_t cancel_requests_sent = 0;
  std::uint64_t sends_cancelled = 0;
  std::uint64_t messages_cancelled = 0;
  std::uint64_t cancels_refused = 0;
  std::uint64_t peers_failed = 0;  // ranks reported dead
  // One-sided cancel (TAGWIRE_CANCEL_MODE=onesided): sends that went with
  // a slot descriptor or without one (all slots towards the receiver
  // busy), cancels decided by the sender's remote CAS, read-backs of
  // settled slots, and claims made by this receiver's matcher.
  std::uint64_t slotted_sends = 0;
  std::uint64_t unslotted_sends = 0;
  std::uint64_t one_sided_cancels = 0;
  std::uint64_t slot_read_backs = 0;
  std::uint64_t slot_claims = 0;
  // The helper thread (cancel agent or progress thread): how often it took
  // the engine lock, and the completions and arrivals it progressed there.
  // An agent that enters during a ping-pong is in the application's way.
  std::uint64_t helper_entries = 0;
  std::uint64_t helper_progressed = 0;
  // The unexpected queue's bound (Config::unexpected_limit): how often the
  // helper thread left messages in the transport because the queue held
  // that much, and the most the queue held (bytes, MatchingState::held_bytes).
  std::uint64_t helper_held_back = 0;
  // Window words updated by one atomic each (Engine::update_words: the
  // NIC's on verbs, the CPU's on a window every rank maps), misaligned
  // ones under the accumulate lock included.
  std::uint64_t word_atomics = 0;
  std::uint64_t unexpected_bytes_peak = 0;
  // Who matched what: software or the NIC, what the NIC was given, and why
  // receives stayed in software (all in software where no NIC matches).
  matching::NicMatchingCounters matching;
  // The NIC's tag matching: entries the book says the NIC holds or still
  // owes an answer for (a gauge: 0 once every receive is settled), and
  // reports or posts the book could not reconcile (each also logged at
  // error level; always 0 unless a NIC or this code breaks the contract).
  std::uint64_t nic_entries_in_book = 0;
  std::uint64_t nic_errors = 0;
};

}  // namespace tagwire::engine
