// MessageReads: a read of a peer's memory done with active messages, for
// endpoints whose UCX lanes have no RDMA (TCP).
//
// There UCX emulates ucp_get_nbx with messages of its own, answered inside
// UCX (ucp_get_req_handler), and UCX 1.13 aborts the process that answers
// when the reader died meanwhile (docs/using-tagwire.md, "A rank that
// dies"): a survivor killed by a death it had nothing to do with. Here the
// reader asks with a message, the owner answers with an eager
// ucp_am_send_nbx of the bytes, which arrives whole in one callback, and an
// answer to a dead reader is an ordinary failed send. The owner answers only for memory it
// registered (ReadableRegions): a peer cannot read the rest of its address space.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <unordered_map>
#include <vector>

#include "common/status.h"
#include "transport/transport.h"

namespace tagwire::ucx {

// The memory of this process that peers may read: every live registration.
// Shared between the transport and its registrations, so either may go
// first.
class ReadableRegions {
 public:
  void add(std::uint64_t address, std::size_t length);
  void remove(std::uint64_t address, std::size_t length);
  // Whether [address, address + length) lies inside one registration.
  bool covers(std::uint64_t address, std::uint64_t length) const;

 private:
  std::multimap<std::uint64_t, std::uint64_t> regions_;  // start -> end
};

class MessageReads {
 public:
  // `counters`: bytes_helped (answers sent) and bytes_helped_by_peers
  // (answers received) count here, as for the shm transport's shared reads.
  MessageReads(ucp_worker_h worker, transport::TransportCounters* counters);
  MessageReads(const MessageReads&) = delete;
  MessageReads& operator=(const MessageReads&) = delete;

  // Installs the request's and the answer's active-message handlers.
  Status install_handlers();

  // Reads local.size() bytes at `remote_address` of `peer`, reached by `ep`.
  Result<transport::Issued> read(ucp_ep_h ep, transport::PeerId peer, std::span<std::uint8_t> local,
                                 std::uint64_t remote_address, transport::Completion done);

  // `peer` died: its reads fail now. Nothing is written into their buffers
  // afterwards (an answer arrives whole in one callback, or not at all).
  void peer_failed(transport::PeerId peer);

  // The transport is going: completions from here on tell nobody.
  void close() { closing_ = true; }

  const std::shared_ptr<ReadableRegions>& regions() const { return regions_; }

 private:
  struct Pending {
    transport::PeerId peer;
    ucp_ep_h ep;
    std::uint8_t* into;
    std::uint64_t length;
    std::uint64_t remote_address;
    std::uint64_t asked;     // bytes asked for so far (pieces in order)
    std::uint64_t answered;  // bytes that arrived
    transport::Completion done;
  };
  struct RequestHeader;
  // What a send's callback finds: the message header, which must live until
  // UCX completes the send.
  struct Ticket {
    std::uint8_t bytes[32];
    MessageReads* owner;
  };

  static ucs_status_t on_request(void* arg, const void* header, std::size_t header_length,
                                 void* data, std::size_t length, const ucp_am_recv_param_t* param);
  static ucs_status_t on_answer(void* arg, const void* header, std::size_t header_length,
                                void* data, std::size_t length, const ucp_am_recv_param_t* param);
  static void on_sent(void* request, ucs_status_t status, void* user_data);

  Status send(ucp_ep_h ep, unsigned id, std::span<const std::uint8_t> header, const void* data,
              std::size_t length, std::uint32_t flags);
  Status ask(Pending& p, std::uint64_t token);  // the next pieces, up to the window
  void answer(ucp_ep_h reader, const RequestHeader& request);
  void finish(std::uint64_t token, const Status& status);
  Ticket* take_ticket();

  ucp_worker_h worker_;
  transport::TransportCounters* counters_;
  std::shared_ptr<ReadableRegions> regions_ = std::make_shared<ReadableRegions>();
  std::unordered_map<std::uint64_t, Pending> pending_;  // by token
  std::uint64_t next_token_ = 1;
  // Every Ticket made: in flight only UCX's request points to one.
  std::vector<std::unique_ptr<Ticket>> tickets_;
  std::vector<Ticket*> free_tickets_;
  bool closing_ = false;
};

// Whether reads over `ep` would be UCX's emulation by messages: none of its
// lanes carries RMA. UCX 1.13 has no query for an endpoint's lanes; its
// ucp_ep_print_info lists them, one "lane[i]" line each with what it is
// used for ("rma", "rma_bw", "am", ...). An output without lane lines
// answers false: ucp_get_nbx, as before.
bool reads_are_emulated(ucp_ep_h ep);

}  // namespace tagwire::ucx
