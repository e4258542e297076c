// What the engine benchmarks share: a failed call ends the run with the
// call's name and status (a benchmark that goes on after an error measures
// nothing).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <utility>

#include "common/status.h"

namespace tagwire::bench {

[[noreturn]] inline void die(const Status& s, const char* what) {
  std::fprintf(stderr, "%s: %s\n", what, s.to_string().c_str());
  std::exit(1);
}

inline void check(const Status& s, const char* what) {
  if (!s.is_ok()) die(s, what);
}

template <typename T>
T check(Result<T> r, const char* what) {
  if (!r) die(r.status(), what);
  return std::move(r).value();
}

}  // namespace tagwire::bench
