// PMIx bootstrap (built when libpmix-dev is present).
#pragma once

#include <memory>

#include "engine/bootstrap.h"

namespace tagwire::engine {

Result<std::unique_ptr<Bootstrap>> create_pmix_bootstrap();

}  // namespace tagwire::engine
