// Tagwire's run-time settings, read from TAGWIRE_* environment variables.
//
// Every value is validated: a bad value, or a TAGWIRE_* name that is not a
// setting (a typo), is an error naming the variable, never a silent default.
// Variables under TAGWIRE_BOOT_ (launcher to rank) and TAGWIRE_TEST_ (test
// harnesses) are reserved for their owners and not checked here.
#pragma once

#include <chrono>
#include <cstddef>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "common/log.h"
#include "common/status.h"

namespace tagwire {

enum class TransportChoice { kAuto, kShm, kUcx, kVerbs };
enum class NicMatchingChoice { kAuto, kOn, kOff };
// How the verbs transport connects its RC QPs: through rdma_cm on first use
// (lazily, routed by the IP stack; what RoCE users expect), or all at
// start-up from QP numbers published through the bootstrap. kAuto: rdma_cm
// where the device has an IPv4 RoCE address, the exchange otherwise.
enum class VerbsConnectChoice { kAuto, kCm, kExchange };
// Who decides a send cancel: the receiver's agent on a CANCEL_REQUEST, or
// the sender alone with a remote compare-and-swap on the message's slot
// descriptor (docs/architecture.md §4, engine/slot_word.h). Every rank must agree.
enum class CancelMode { kAgent, kOneSided };

struct Config {
  // Largest message sent eagerly; larger ones use rendezvous. Unless set
  // (TAGWIRE_EAGER_THRESHOLD), the engine takes the one its transport
  // registered as best for it (transport/registry.h), or this default
  // (verbs: its receive ring holds a slot of this size per message in
  // flight).
  std::size_t eager_threshold = 8192;
  bool eager_threshold_set = false;
  log::Level log_level = log::Level::kWarn;
  TransportChoice transport = TransportChoice::kAuto;
  NicMatchingChoice nic_matching = NicMatchingChoice::kAuto;
  VerbsConnectChoice verbs_connect = VerbsConnectChoice::kAuto;
  // Verbs: keep user buffers registered between operations, forgetting a
  // registration when its memory is unmapped (TAGWIRE_RCACHE).
  bool registration_cache = true;
  // Verbs: what the eager rings of all peers may take together
  // (TAGWIRE_VERBS_RING_BUDGET); each ring has 64 slots down to 4, as many
  // as the budget allows for the job's peers.
  std::size_t verbs_ring_budget = std::size_t{256} << 20;
  // Run a progress thread beside the application: it drives the transport
  // all the time (and serves cancels too).
  bool progress_thread = false;
  // Run the cancel agent: a thread that sleeps on the transport's event fd
  // and serves the transport only while the application is outside the
  // library, so that a peer's send cancel is answered even when this rank
  // computes or sleeps (MPI_Cancel must be local).
  bool cancel_agent = true;
  CancelMode cancel_mode = CancelMode::kAgent;
  // RDMA device name ("mlx5_0", "rxe0"); empty picks the nearest one.
  std::string device;
  // How long an operation with a silent peer may wait before it fails.
  std::chrono::milliseconds peer_timeout{10000};

  // Reads the process environment.
  static Result<Config> from_environment();
  // Reads the given name -> value pairs (only TAGWIRE_* names are looked at).
  static Result<Config> from_variables(const std::map<std::string, std::string>& variables);

  // Names of every setting, for messages and --help.
  static const std::vector<std::string_view>& setting_names();
  // What a setting is for, in a line (empty for an unknown name).
  static std::string_view setting_description(std::string_view name);
  // A setting's value in its variable's syntax: from_variables() of every
  // value_text() gives this config back (empty for an unknown name).
  std::string value_text(std::string_view name) const;
};

// Parsers shared with the command-line tools. Each names `what` in its error.
Result<std::size_t> parse_size(std::string_view what, std::string_view text);
Result<bool> parse_bool(std::string_view what, std::string_view text);
Result<std::chrono::milliseconds> parse_duration(std::string_view what, std::string_view text);

}  // namespace tagwire
