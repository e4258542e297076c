// Verbs failures as Status: the call, errno's text, and for a work
// completion its status name, so a log line says what the NIC said.
#pragma once

#include <infiniband/verbs.h>

#include <string_view>

#include "common/status.h"

namespace tagwire::verbs {

// A failed ibv_* call; `error` is the errno it returned or set.
Status verbs_error(std::string_view call, int error);

// A work completion that did not succeed (`what`: the operation).
Status completion_error(std::string_view what, const ibv_wc& wc);

}  // namespace tagwire::verbs
