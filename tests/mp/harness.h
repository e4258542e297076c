// The SPMD harness shared by the multi-process tests: the engine every
// rank runs, rank arithmetic, payload patterns and assertion helpers.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "engine/engine.h"

namespace tagwire::engine {

inline Engine* g_engine = nullptr;

inline Engine& E() {
  return *g_engine;
}
inline Communicator* W() {
  return E().world();
}
inline int me() {
  return W()->rank();
}
inline int nranks() {
  return W()->size();
}
inline int right() {
  return (me() + 1) % nranks();
}
inline int left() {
  return (me() + nranks() - 1) % nranks();
}
inline std::size_t threshold() {
  return E().config().eager_threshold;
}

inline std::uint8_t pattern_byte(std::uint64_t seed, std::size_t i) {
  return static_cast<std::uint8_t>((seed * 131 + i * 7 + (i >> 9)) & 0xff);
}

// The pattern written into `v` (resized to n; its capacity is kept, so a
// buffer reused for growing sizes is allocated once).
inline void fill_payload(std::vector<std::uint8_t>& v, std::size_t n, std::uint64_t seed) {
  v.resize(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = pattern_byte(seed, i);
}

inline std::vector<std::uint8_t> make_payload(std::size_t n, std::uint64_t seed) {
  std::vector<std::uint8_t> v;
  fill_payload(v, n, seed);
  return v;
}

// First index where `data` differs from the pattern, or npos.
inline std::size_t first_mismatch(const std::uint8_t* data, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = 0; i < n; ++i) {
    if (data[i] != pattern_byte(seed, i)) return i;
  }
  return std::string::npos;
}

// A TAGWIRE_TEST_* number from the environment, or `fallback`.
inline std::uint64_t env_number(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  return v != nullptr ? std::strtoull(v, nullptr, 10) : fallback;
}

inline void barrier() {
  ASSERT_TRUE(E().barrier(W()).is_ok());
}

#define ASSERT_OK(expr)                        \
  do {                                         \
    ::tagwire::Status s_ = (expr);             \
    ASSERT_TRUE(s_.is_ok()) << s_.to_string(); \
  } while (0)

template <typename T>
T take(Result<T> r) {
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? std::move(r).value() : T{};
}

inline std::string mode_name(SendMode m) {
  switch (m) {
    case SendMode::kStandard:
      return "standard";
    case SendMode::kSynchronous:
      return "synchronous";
    case SendMode::kReady:
      return "ready";
    case SendMode::kBuffered:
      return "buffered";
  }
  return "?";
}

}  // namespace tagwire::engine
