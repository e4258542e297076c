// PMI-2 bootstrap (built when Slurm's libpmi2-0-dev is present).
#pragma once

#include <memory>

#include "bootstrap/bootstrap.h"

namespace tagwire::bootstrap {

Result<std::unique_ptr<Bootstrap>> create_pmi2_bootstrap();

}  // namespace tagwire::bootstrap
