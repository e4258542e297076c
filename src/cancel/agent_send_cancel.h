// AgentSendCancel: send cancel by asking the receiver (CANCEL_REQUEST /
// CANCEL_REPLY), answered by its matcher, by its cancel agent while its
// application is away from the library (docs/architecture.md §4).
#pragma once

#include <string_view>

#include "engine/request.h"
#include "engine/send_cancel.h"

namespace tagwire::cancel {

class AgentSendCancel : public engine::SendCancel {
 public:
  explicit AgentSendCancel(engine::CancelSite& site) : site_(site) {}

  std::string_view name() const override { return "agent"; }
  Status cancel(engine::Request* r) override;
  void on_cancel_request(const engine::Header& h) override;
  void on_cancel_reply(const engine::Header& h) override;

 protected:
  // False when there is nothing to ask: already asked, already answered by
  // the receiver, never sent (PROC_NULL), or failed (it reports its error).
  static bool worth_asking(const engine::Request& r);
  // Sends CANCEL_REQUEST on the data's own ordered channel.
  Status ask_receiver(engine::Request* r);
  // A CANCEL_REQUEST naming `r`'s message (both modes send one: a request,
  // or the one-sided notice); the receiver's world rank in `peer`.
  static engine::Header cancel_header(const engine::Request& r, int* peer);
  // A send that completed locally (eager, buffered) but was not yet waited
  // for is open again once its cancel is under way: it completes by the
  // answer (request.h: the one edge back from complete to running).
  static void reopen(engine::Request* r);
  // The answer came (the receiver's reply, or our own CAS): the send
  // completes as cancelled, or by its message.
  void conclude(engine::Request* r, bool cancelled);
  // A message a CANCEL_REQUEST took out of the unexpected queue, before the
  // YES leaves (one-sided mode settles its slot descriptor here).
  virtual void on_taken(const engine::PendingMessage& m) { (void)m; }
  // A send the receiver (or our CAS) cancelled: it completes as cancelled.
  void complete_cancelled(engine::Request* r);

  engine::CancelSite& site_;
};

}  // namespace tagwire::cancel
