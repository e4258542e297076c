// What this build of Tagwire is: its version and the optional parts it was
// built with. Meson writes the values (build_info.cc.in) from the project's
// version and the dependencies it found, so that tools and the MPI layer
// report what is true of the library they run, not what a header claims.
#pragma once

#include <span>
#include <string_view>

namespace tagwire::build_info {

// "0.1.0": the project's version.
std::string_view version();

// An optional part of the build: a transport, a bootstrap, a sanitizer.
struct Part {
  std::string_view name;      // "PMIx bootstrap"
  bool built;                 // compiled into this build
  std::string_view how_used;  // when it is used, in a line
};
std::span<const Part> parts();

// "shm ucx verbs": the transports compiled in.
std::string_view transports();

}  // namespace tagwire::build_info
