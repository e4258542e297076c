// MessageRma: one-sided operations (read, write, compare-and-swap) done
// with active messages, for endpoints whose UCX lanes have no RDMA (TCP).
//
// There UCX emulates ucp_get_nbx, ucp_put_nbx and its atomics with messages
// of its own, answered inside UCX (ucp_get_req_handler, ucp_put_handler),
// and UCX 1.13 aborts the process that answers when the origin died
// meanwhile (docs/using-tagwire.md, "A rank that dies"): a survivor killed
// by a death it had nothing to do with. Here the origin sends a request
// (with the data, for a write), the target does it and answers with a
// message of ours, and an answer to a dead origin is an ordinary failed
// send. The target acts only on memory it registered, with the access it
// registered (RemoteRegions): a peer cannot read or write the rest of its
// address space.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "transport/transport.h"

namespace tagwire::ucx {

// The memory of this process that peers may reach: every live registration
// and what it allows. Shared between the transport and its registrations,
// so either may go first.
class RemoteRegions {
 public:
  void add(std::uint64_t address, std::size_t length, transport::RemoteAccess access);
  void remove(std::uint64_t address, std::size_t length);
  // Whether [address, address + length) lies inside one registration that
  // allows at least `access` (kRead < kReadAndAtomic < kReadAndWrite).
  bool covers(std::uint64_t address, std::uint64_t length, transport::RemoteAccess access) const;

 private:
  struct Region {
    std::uint64_t end;
    transport::RemoteAccess access;
  };
  std::multimap<std::uint64_t, Region> regions_;  // by start
};

class MessageRma {
 public:
  // `counters`: bytes_helped (read answers sent) and bytes_helped_by_peers
  // (read answers received) count here, as for the shm transport's shared
  // reads.
  MessageRma(ucp_worker_h worker, transport::TransportCounters* counters);
  MessageRma(const MessageRma&) = delete;
  MessageRma& operator=(const MessageRma&) = delete;

  // Installs the requests' and the answers' active-message handlers.
  Status install_handlers();

  // As Transport::read, write and compare_and_swap, to `peer` reached by
  // `ep`. A write completes when the target has the bytes (its answer), so
  // flush() need only wait for the writes still unanswered.
  Result<transport::Issued> read(ucp_ep_h ep, transport::PeerId peer, std::span<std::uint8_t> local,
                                 std::uint64_t remote_address, transport::Completion done);
  Result<transport::Issued> write(ucp_ep_h ep, transport::PeerId peer,
                                  std::span<const std::uint8_t> local, std::uint64_t remote_address,
                                  transport::Completion done);
  Result<transport::Issued> compare_and_swap(ucp_ep_h ep, transport::PeerId peer,
                                             std::uint64_t remote_address, std::uint64_t expected,
                                             std::uint64_t desired, std::uint64_t* old_value,
                                             transport::Completion done);

  // Completes `done` once every write issued before this call has been
  // answered (or failed); kDone when none is outstanding.
  transport::Issued flush_writes(transport::Completion done);

  // `peer` died: its operations fail now. Nothing is written into their
  // buffers afterwards (an answer arrives whole in one callback, or not
  // at all).
  void peer_failed(transport::PeerId peer);

  // The transport is going: completions from here on tell nobody.
  void close() { closing_ = true; }

  const std::shared_ptr<RemoteRegions>& regions() const { return regions_; }

 private:
  enum class Kind : std::uint32_t { kRead = 1, kWrite = 2, kCas = 3 };
  struct Pending {
    Kind kind;
    transport::PeerId peer;
    ucp_ep_h ep;
    std::uint8_t* into;        // read: where the bytes go
    const std::uint8_t* from;  // write: the bytes
    std::uint64_t* old_value;  // CAS: where the old value goes
    std::uint64_t length;
    std::uint64_t remote_address;
    std::uint64_t asked;     // bytes asked for or sent so far (pieces in order)
    std::uint64_t answered;  // bytes answered
    transport::Completion done;
  };
  struct RequestHeader;
  // What a send's callback finds: the message header, which must live until
  // UCX completes the send.
  struct Ticket {
    std::uint8_t bytes[64];
    MessageRma* owner;
  };
  // A flush waiting for the writes up to `last` (tokens).
  struct FlushWaiter {
    std::uint64_t last;
    transport::Completion done;
  };

  static ucs_status_t on_request(void* arg, const void* header, std::size_t header_length,
                                 void* data, std::size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t on_answer(void* arg, const void* header, std::size_t header_length,
                                void* data, std::size_t length, const ucp_am_recv_param_t* param);
  static void on_sent(void* request, ucs_status_t status, void* user_data);

  std::uint64_t start(const Pending& p);
  Status send(ucp_ep_h ep, unsigned id, std::span<const std::uint8_t> header, const void* data,
              std::size_t length, std::uint32_t flags);
  Status ask(Pending& p, std::uint64_t token);  // the next pieces, up to the window
  void serve(ucp_ep_h origin, const RequestHeader& request, const void* data, std::size_t length);
  void finish(std::uint64_t token, const Status& status);
  Ticket* take_ticket();

  ucp_worker_h worker_;
  transport::TransportCounters* counters_;
  std::shared_ptr<RemoteRegions> regions_ = std::make_shared<RemoteRegions>();
  std::unordered_map<std::uint64_t, Pending> pending_;  // by token
  std::set<std::uint64_t> writes_;                      // tokens of unanswered writes
  std::vector<FlushWaiter> flushes_;
  std::uint64_t next_token_ = 1;
  // Every Ticket made: in flight only UCX's request points to one.
  std::vector<std::unique_ptr<Ticket>> tickets_;
  std::vector<Ticket*> free_tickets_;
  bool closing_ = false;
};

// Whether one-sided operations over `ep` would be UCX's emulation by
// messages: none of its lanes carries RMA. UCX 1.13 has no query for an
// endpoint's lanes; its ucp_ep_print_info lists them, one "lane[i]" line
// each with what it is used for ("rma", "rma_bw", "am", ...). An output
// without lane lines answers false: UCX's own calls, as before.
bool rma_is_emulated(ucp_ep_h ep);

}  // namespace tagwire::ucx
