// RequestTable: wire ids that a stale id cannot misread, and slots that
// double as MPI handles (Engine::hand_out / by_handle).
#include "engine/request.h"

#include <gtest/gtest.h>

#include <vector>

namespace tagwire::engine {
namespace {

TEST(RequestTable, AStaleIdFindsNothingOnceItsSlotIsReused) {
  RequestTable table;
  Request a, b;
  const std::uint64_t id_a = table.add(&a);
  EXPECT_EQ(table.find(id_a), &a);
  table.remove(id_a);
  EXPECT_EQ(table.find(id_a), nullptr);
  const std::uint64_t id_b = table.add(&b);
  EXPECT_EQ(static_cast<std::uint32_t>(id_b), static_cast<std::uint32_t>(id_a));  // slot reused
  EXPECT_NE(id_b, id_a);
  EXPECT_EQ(table.find(id_a), nullptr);
  EXPECT_EQ(table.find(id_b), &b);
  table.remove(id_a);  // a stale remove leaves the new owner alone
  EXPECT_EQ(table.find(id_b), &b);
  EXPECT_EQ(table.live(), 1u);
}

TEST(RequestTable, RenameKeepsTheSlotAndRetiresTheOldId) {
  // A persistent send's next operation: a new wire id, the same MPI handle.
  RequestTable table;
  Request r;
  const std::uint64_t first = table.add(&r);
  const std::uint64_t second = table.rename(first);
  EXPECT_NE(second, first);
  EXPECT_EQ(static_cast<std::uint32_t>(second), static_cast<std::uint32_t>(first));
  EXPECT_EQ(table.find(first), nullptr);
  EXPECT_EQ(table.find(second), &r);
  EXPECT_EQ(table.at_slot(static_cast<std::uint32_t>(second)), &r);
  table.remove(first);  // the old id no longer owns the slot
  EXPECT_EQ(table.find(second), &r);
  table.remove(second);
  EXPECT_EQ(table.at_slot(static_cast<std::uint32_t>(second)), nullptr);
}

TEST(RequestTable, SlotsPastOneChunkStayWhereTheyWere) {
  // Entries live in fixed chunks so that at_slot() (any thread) never
  // reads moved memory: pointers found before growth stay valid after it.
  RequestTable table;
  std::vector<Request> requests(10000);
  std::vector<std::uint64_t> ids;
  for (Request& r : requests) ids.push_back(table.add(&r));
  for (std::size_t i = 0; i < requests.size(); ++i) {
    ASSERT_EQ(table.find(ids[i]), &requests[i]);
    ASSERT_EQ(table.at_slot(static_cast<std::uint32_t>(ids[i])), &requests[i]);
  }
  EXPECT_EQ(table.at_slot(static_cast<std::uint32_t>(requests.size())), nullptr);
  EXPECT_EQ(table.find(std::uint64_t{1} << 32 | 123456789u), nullptr);
  int seen = 0;
  table.for_each([&](Request*) { ++seen; });
  EXPECT_EQ(seen, 10000);
}

}  // namespace
}  // namespace tagwire::engine
