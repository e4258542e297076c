// coarse_now() is steady_clock's clock, read to the kernel's last tick: the
// engine compares its time points with steady_clock's (common/coarse_clock.h).
#include "common/coarse_clock.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace tagwire {
namespace {

using namespace std::chrono_literals;

TEST(CoarseClock, IsSteadyClockATickBehind) {
  for (int i = 0; i < 100; ++i) {
    const auto coarse = coarse_now();
    const auto fine = std::chrono::steady_clock::now();
    // Never ahead of the fine clock, and never more than a tick or two
    // behind it (a tick is 1-10 ms; a wrong clock would be off by years).
    EXPECT_LE(coarse, fine + 1ms);
    EXPECT_LT(fine - coarse, 50ms);
  }
}

TEST(CoarseClock, Advances) {
  const auto before = coarse_now();
  std::this_thread::sleep_for(30ms);
  const auto after = coarse_now();
  EXPECT_GE(after - before, 15ms);
  EXPECT_LT(after - before, 5s);
}

}  // namespace
}  // namespace tagwire
