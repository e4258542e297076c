// The transports of a build, each registered once with what it can do.
//
// After UCT's transport entries (a name, capabilities and a constructor in
// one record): every transport folder defines one TransportEntry, the
// build lists the entries of the transports it compiled
// (engine/transport_list.h), and the engine chooses among them from what
// is true of the job and of each transport's capabilities, never from a
// transport's name. A transport that cannot do something says so here (or
// through a null nic_matching(), a -1 event_fd()), never by doing something
// else in its place.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "common/settings.h"
#include "common/status.h"
#include "transport/transport.h"

namespace tagwire::transport {

struct Capabilities {
  // Reaches only processes on this host (shared memory).
  bool one_host_only = false;
  // For TAGWIRE_TRANSPORT=auto: among the transports that reach every rank
  // of the job, the highest preference is taken; 0: only when named.
  int preference = 0;
  // The eager threshold it works best with, measured on it (used when
  // TAGWIRE_EAGER_THRESHOLD is not set); 0 keeps Config's default.
  std::size_t eager_threshold = 0;
  // A peer's compare_and_swap on this process's words is a CPU atomic, so
  // local_compare_and_swap is a plain atomic too (one-sided cancel costs
  // the receiver no message).
  bool cpu_atomics = false;
  // map_remote() may put a peer's window memory here (shared segments):
  // windows then agree at creation whether every rank maps every part.
  bool maps_peer_memory = false;
  // May offer the NIC's tag matching (nic_matching()), where the device
  // reports it and TAGWIRE_TM allows.
  bool may_match_in_nic = false;
  // Every kWake message makes the armed peer's event_fd() readable, so a
  // helper thread may sleep until one comes. Without it an event fd may
  // still work for some paths, but the sleeper must also look now and then.
  bool wake_events = false;
};

// What a transport is created with: its place in the job, what the engine
// decided for it, and the settings, of which it reads its own (those its
// entry declares: TAGWIRE_DEVICE, TAGWIRE_TM, ... for verbs).
struct TransportSetup {
  int rank = 0;
  int size = 1;
  // The largest payload of an eager message: the eager threshold, resolved
  // for this transport.
  std::size_t eager_threshold = 0;
  // The largest remote key the engine sends as a payload (a rendezvous's).
  std::size_t max_remote_key = 0;
  // A progress thread sleeps on event_fd() and must wake for every
  // message, not only for kWake ones.
  bool wake_on_every_message = false;
  // Some helper thread (progress thread or cancel agent) drives the
  // transport beside the application's thread.
  bool helper_thread = false;
  const Settings* settings = nullptr;
};

struct TransportEntry {
  std::string_view name;  // its TAGWIRE_TRANSPORT value
  std::string_view description;
  Capabilities capabilities;
  Result<std::unique_ptr<Transport>> (*create)(const TransportSetup& setup) = nullptr;
  // The settings it reads (empty: none); the engine refuses any of them
  // while another transport is chosen.
  SettingTable settings;
};

using TransportList = std::span<const TransportEntry* const>;

// The entry named `wanted`, or for "auto" the preferred one that reaches
// the whole job (`one_host`: every rank runs on this host). A name the
// build lacks is an error that lists what it has.
Result<const TransportEntry*> choose_transport(TransportList built, std::string_view wanted,
                                               bool one_host);

// "shm ucx verbs": the names in `built`, for messages.
std::string transport_names(TransportList built);

}  // namespace tagwire::transport
