// The engine's settings, and the list of every layer's for a process.
//
// The engine reads its own (the eager threshold, the transport's name, its
// threads, the log level) and keeps every variable that was set in
// `settings`, from which the transport it chooses and the cancel layer read
// theirs (transport/registry.h, cancel/cancel_settings.h).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <vector>

#include "common/log.h"
#include "common/settings.h"

namespace tagwire::engine {

// The shape of the rooted collectives' traffic (broadcast, reduce and
// what builds on them): a binomial tree, ceil(log2 n) steps, or flat, the
// root sending to or hearing from every rank itself. Flat wins when the
// ranks outnumber the cores: each hop of a tree then waits for its rank to
// be scheduled (docs/measurements.md).
enum class CollectiveShape { kAuto, kTree, kFlat };

struct Config {
  // Largest message sent eagerly; larger ones use rendezvous. Unless set
  // (TAGWIRE_EAGER_THRESHOLD), the engine takes the one its transport
  // registered as best for it (transport/registry.h), or this default.
  std::size_t eager_threshold = 8192;
  bool eager_threshold_set = false;
  log::Level log_level = log::Level::kWarn;
  // A transport's registered name, or "auto" (transport/registry.h).
  std::string transport = "auto";
  // Run a progress thread beside the application: it drives the transport
  // all the time (and serves cancels too).
  bool progress_thread = false;
  // Run the cancel agent: a thread that sleeps on the transport's event fd
  // and serves the transport only while the application is outside the
  // library, so that a peer's send cancel is answered even when this rank
  // computes or sleeps (MPI_Cancel must be local).
  bool cancel_agent = true;
  // What the helper thread may take into the unexpected queue while the
  // application is away (TAGWIRE_UNEXPECTED_LIMIT): beyond it, it leaves
  // messages in the transport, whose own flow control (a full ring, the
  // verbs credits, TCP's window) then makes the sender wait. The
  // application's own calls take what they need.
  std::size_t unexpected_limit = std::size_t{8} << 20;
  // TAGWIRE_COLLECTIVES: auto is flat on one host with more ranks than
  // cores, a tree otherwise.
  CollectiveShape collective_shape = CollectiveShape::kAuto;
  // TAGWIRE_RMA_ATOMICS: windows update 8-byte integer words by atomics
  // where they can (Window::word_atomics, Window::view_atomics).
  bool rma_atomics = true;
  // Every TAGWIRE_* variable set, checked: the layers above and below read
  // their own from it.
  Settings settings;

  bool operator==(const Config&) const = default;

  // Takes the threshold the transport chose (when none was set), and says
  // so in `settings` too: what they show is what is in effect.
  void resolve_eager_threshold(std::size_t bytes);

  // The engine's own settings.
  static SettingTable table();
  // Reads the engine's settings out of `settings` (and keeps them all).
  static Result<Config> read(Settings settings);
  // The variables given, checked against every layer's settings
  // (known_settings(upper)).
  static Result<Config> from_variables(const std::map<std::string, std::string>& variables,
                                       SettingTable upper = {});
  static Result<Config> from_environment(SettingTable upper = {});
};

// Every setting a process of this build may be given: the engine's, each
// built transport's, and `upper`'s (the cancel layer's).
std::vector<SettingTable> known_settings(SettingTable upper);

}  // namespace tagwire::engine
