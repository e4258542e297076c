// coarse_now(): the monotonic clock to the kernel's last tick (at most a
// tick old: 1-10 ms with the kernel's HZ), for what polls now and then and
// needs no finer time: the engine's look for dead peers every 10 ms and
// its millisecond clock, the verbs transport's rdma_cm looks.
//
// Why not steady_clock::now(): where the clock source has no vDSO read (a
// VM on HPET, as ci/rxe-vm's guest is) every such read is a system call
// and an emulated device access, about 1 us there (docs/measurements.md),
// and a waiting rank made one every few hundred polls. CLOCK_MONOTONIC_COARSE
// only reads the time the kernel last stored, from the vDSO, whatever the
// clock source. It is the same clock as steady_clock (CLOCK_MONOTONIC on
// Linux), so its time points compare with steady_clock's, a tick behind.
#pragma once

#include <time.h>

#include <chrono>

namespace tagwire {

inline std::chrono::steady_clock::time_point coarse_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
  return std::chrono::steady_clock::time_point(std::chrono::seconds(ts.tv_sec) +
                                               std::chrono::nanoseconds(ts.tv_nsec));
}

}  // namespace tagwire
