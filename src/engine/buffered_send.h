// The buffered send (MPI_Bsend, MPI_Ibsend, MPI_Bsend_init): the message is
// copied into the attached buffer and sent from the copy on an internal
// request, and the user's request completes at once. The copy's block
// goes back when the internal send completes (release()).
#pragma once

#include "engine/bsend_buffer.h"
#include "engine/protocol_site.h"

namespace tagwire::engine {

class BufferedSend {
 public:
  explicit BufferedSend(ProtocolSite& site) : site_(site) {}

  // Starts r (a buffered send under way): a block is taken, the internal
  // send started, r complete. Refused, with nothing taken, when the
  // attached buffer has no room.
  Status start(Request* r);
  // The internal send `internal` completed: its copy's block goes back.
  void release(Request* internal) {
    if (internal->bsend_copy == nullptr) return;
    buffer_.release(internal->bsend_copy);
    internal->bsend_copy = nullptr;
  }

  // MPI_Buffer_attach / MPI_Buffer_detach's buffer.
  BsendBuffer& buffer() { return buffer_; }

 private:
  ProtocolSite& site_;
  BsendBuffer buffer_;
};

}  // namespace tagwire::engine
