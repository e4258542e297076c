#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
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
}  // namespace tagwire
