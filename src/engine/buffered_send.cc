#include "engine/buffered_send.h"

#include <cstring>
#include <string>

namespace tagwire::engine {

Status BufferedSend::start(Request* r) {
  void* copy = buffer_.allocate(r->bytes);
  if (copy == nullptr) {
    return {ErrorCode::kInvalidBuffer,
            "buffered send of " + std::to_string(r->bytes) +
                " bytes does not fit the attached buffer (attach more with MPI_Buffer_attach)"};
  }
  if (r->bytes > 0) std::memcpy(copy, r->buffer, r->bytes);
  Request* internal = site_.protocol_new_send();
  internal->buffer = copy;
  internal->bytes = r->bytes;
  internal->peer = r->peer;
  internal->tag = r->tag;
  internal->comm = r->comm;
  internal->user_freed = true;  // nobody waits on it
  internal->bsend_copy = static_cast<std::uint8_t*>(copy);
  // Named before it starts: an eager internal send may finish, and be
  // released, inside start.
  r->bsend_wire_id = internal->id;
  Status s = site_.protocol_start_send(internal, &r->slot);
  if (!s.is_ok()) {
    release(internal);
    site_.protocol_release(internal);
    return s;
  }
  r->status.source = r->peer;
  r->set_phase(RequestPhase::kComplete);
  return Status::ok();
}

}  // namespace tagwire::engine
