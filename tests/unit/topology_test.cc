#include <gtest/gtest.h>

#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "common/topology.h"

namespace tagwire {
namespace {

int affinity_count() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return -1;
  return CPU_COUNT(&set);
}

TEST(Topology, SeesTheSamePUsAsTheKernel) {
  auto topology = Topology::load();
  ASSERT_TRUE(topology.is_ok()) << topology.status().to_string();
  auto pus = topology->allowed_pus();
  EXPECT_EQ(static_cast<int>(pus.size()), affinity_count());
  EXPECT_TRUE(std::is_sorted(pus.begin(), pus.end()));
}

TEST(Topology, UnknownDeviceIsNotFound) {
  auto topology = Topology::load();
  ASSERT_TRUE(topology.is_ok());
  auto near = topology->pus_near_device("no_such_hca_0");
  ASSERT_FALSE(near.is_ok());
  EXPECT_EQ(near.status().code(), ErrorCode::kNotFound);
  EXPECT_NE(near.status().message().find("no_such_hca_0"), std::string::npos);
}

TEST(Topology, EveryListedRdmaDeviceHasNearbyPUs) {
  auto topology = Topology::load();
  ASSERT_TRUE(topology.is_ok());
  auto devices = topology->rdma_devices();
  if (devices.empty()) GTEST_SKIP() << "no RDMA device on this machine (hwloc lists none)";
  for (const auto& d : devices) {
    auto near = topology->pus_near_device(d);
    ASSERT_TRUE(near.is_ok()) << d;
    EXPECT_FALSE(near->empty()) << d;
  }
}

TEST(Topology, HelperPUAvoidsTheCallerWhenItCan) {
  auto topology = Topology::load();
  ASSERT_TRUE(topology.is_ok());
  auto pus = topology->allowed_pus();
  ASSERT_FALSE(pus.empty());
  int pu = topology->pick_helper_pu("", pus.front());
  EXPECT_NE(std::find(pus.begin(), pus.end(), pu), pus.end());
  if (pus.size() > 1) {
    EXPECT_NE(pu, pus.front());
  }
  // An unknown device falls back to the whole machine.
  int fallback = topology->pick_helper_pu("no_such_hca_0", -1);
  EXPECT_NE(std::find(pus.begin(), pus.end(), fallback), pus.end());
}

TEST(Topology, BindsAThreadAndRejectsANonexistentPU) {
  auto topology = Topology::load();
  ASSERT_TRUE(topology.is_ok());
  int pu = topology->allowed_pus().back();
  std::thread t([&] {
    EXPECT_TRUE(topology->bind_current_thread(pu).is_ok());
    EXPECT_EQ(sched_getcpu(), pu);
  });
  t.join();
  EXPECT_FALSE(topology->bind_current_thread(100000).is_ok());
}

}  // namespace
// MPI_Init loads the topology on the application's thread: nothing may
// move that thread, not even for a moment. hwloc's x86 backend binds the
// caller to each PU in turn to run cpuid there (and so put both ranks of a
// job on one core); a watcher that reads the caller's placement throughout
// the load saw it moved in about half of its looks.
TEST(Topology, LoadingNeverMovesTheCaller) {
  if (affinity_count() < 2) GTEST_SKIP() << "one PU: nothing could move";
  cpu_set_t before;
  ASSERT_EQ(sched_getaffinity(0, sizeof(before), &before), 0);
  const pid_t caller = static_cast<pid_t>(::syscall(SYS_gettid));
  std::atomic<bool> stop{false};
  std::atomic<bool> watching{false};
  std::atomic<long> looks{0};
  std::atomic<long> moved{0};
  std::thread watcher([&] {
    while (!stop.load()) {
      cpu_set_t now;
      if (sched_getaffinity(caller, sizeof(now), &now) == 0 && !CPU_EQUAL(&now, &before)) ++moved;
      ++looks;
      watching = true;
    }
  });
  while (!watching.load()) std::this_thread::yield();
  for (bool with_io : {false, true}) {
    auto topology = Topology::load(with_io);
    ASSERT_TRUE(topology.is_ok()) << topology.status().to_string();
  }
  stop = true;
  watcher.join();
  cpu_set_t after;
  ASSERT_EQ(sched_getaffinity(0, sizeof(after), &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after)) << "the caller ends on " << CPU_COUNT(&after) << " PU(s)";
  EXPECT_EQ(moved.load(), 0) << "the caller was elsewhere in " << moved.load() << " of "
                             << looks.load() << " looks during the load";
}

}  // namespace tagwire
