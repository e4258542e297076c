// PMIx bootstrap (built when libpmix-dev is present).
#pragma once

#include <memory>

#include "bootstrap/bootstrap.h"

namespace tagwire::bootstrap {

Result<std::unique_ptr<Bootstrap>> create_pmix_bootstrap();

}  // namespace tagwire::bootstrap
