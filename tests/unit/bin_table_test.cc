// BinTable against std::unordered_map under random inserts and erases,
// with a hash that collides on purpose so that probe runs are long, wrap
// around the end of the table and get shifted back on every erase.
#include <gtest/gtest.h>

#include <random>
#include <unordered_map>

#include "matching/bin_table.h"
#include "matching/envelope.h"  // mix64

namespace tagwire::matching {
namespace {

struct CollidingHash {
  std::size_t operator()(int key) const { return static_cast<std::size_t>(key % 5) + 61; }
};
struct GoodHash {
  std::size_t operator()(int key) const { return mix64(static_cast<std::uint64_t>(key)); }
};

template <typename Hash>
void run_against_reference(std::uint64_t seed, int key_range, int steps) {
  BinTable<int, int, Hash> table;
  std::unordered_map<int, int> reference;
  std::mt19937_64 rng(seed);
  for (int step = 0; step < steps; ++step) {
    int key = static_cast<int>(rng() % static_cast<unsigned>(key_range));
    switch (rng() % 3) {
      case 0:
        table[key] += 1;
        reference[key] += 1;
        break;
      case 1:
        ASSERT_EQ(table.erase(key), reference.erase(key) == 1) << "step " << step;
        break;
      default: {
        const int* found = table.find(key);
        auto it = reference.find(key);
        ASSERT_EQ(found != nullptr, it != reference.end()) << "step " << step;
        if (found != nullptr) {
          ASSERT_EQ(*found, it->second) << "step " << step;
        }
      }
    }
    ASSERT_EQ(table.size(), reference.size()) << "step " << step;
  }
  // Everything left is reachable.
  for (const auto& [key, value] : reference) {
    ASSERT_NE(table.find(key), nullptr) << key;
    EXPECT_EQ(*table.find(key), value);
  }
}

TEST(BinTable, AgreesWithUnorderedMapUnderCollisions) {
  run_against_reference<CollidingHash>(1, 200, 20000);
}

TEST(BinTable, AgreesWithUnorderedMapWhileGrowingAndShrinking) {
  run_against_reference<GoodHash>(2, 5000, 200000);
}

TEST(BinTable, ShrinksBackAfterABurst) {
  BinTable<int, int, GoodHash> table;
  std::size_t initial = table.capacity();
  for (int i = 0; i < 100000; ++i) table[i] = i;
  EXPECT_GE(table.capacity(), 200000u);
  for (int i = 0; i < 100000; ++i) ASSERT_TRUE(table.erase(i));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_LE(table.capacity(), initial * 2);
}

TEST(BinTable, RemoveIfKeepsEveryOtherKeyReachable) {
  BinTable<int, int, CollidingHash> table;
  for (int k = 0; k < 300; ++k) table[k] = k;
  table.remove_if([](int v) { return v % 3 == 0; });
  EXPECT_EQ(table.size(), 200u);
  for (int k = 0; k < 300; ++k) {
    const int* v = table.find(k);
    if (k % 3 == 0) {
      EXPECT_EQ(v, nullptr) << k;
    } else {
      ASSERT_NE(v, nullptr) << k;
      EXPECT_EQ(*v, k);
    }
  }
}

TEST(BinTable, RemoveIfLeavesTheRoomAskedForButShrinksAfterABurst) {
  BinTable<int, int, GoodHash> table;
  for (int k = 0; k < 1000; ++k) table[k] = k;
  const std::size_t full = table.capacity();
  table.remove_if([](int v) { return v >= 10; }, 1000);
  EXPECT_EQ(table.size(), 10u);
  EXPECT_EQ(table.capacity(), full) << "room for 1000 more: the size it had";
  for (int k = 0; k < 10; ++k) ASSERT_NE(table.find(k), nullptr) << k;

  for (int k = 0; k < 100000; ++k) table[k] = k;
  table.remove_if([](int v) { return v >= 10; }, 1000);
  EXPECT_LE(table.capacity(), full) << "the room asked for, not the burst's size";
  for (int k = 0; k < 10; ++k) ASSERT_NE(table.find(k), nullptr) << k;
}

// A "bin" that is empty at zero.
struct Count {
  int n = 0;
  bool empty() const { return n == 0; }
};

TEST(KeptBins, AnEmptiedBinIsReusedNotRemade) {
  KeptBins<int, Count, GoodHash> bins;
  for (int round = 0; round < 10000; ++round) {
    Count& bin = bins.for_insert(7);
    ++bin.n;
    ASSERT_EQ(bins.find(7), &bin);
    --bin.n;
    bins.emptied();
    EXPECT_EQ(bins.find(7), nullptr) << "an empty bin must look absent";
  }
  EXPECT_EQ(bins.bins(), 1u) << "one key, one bin, however often it empties";
}

TEST(KeptBins, CyclingThroughTagsHoldsABoundedNumberOfEmptyBins) {
  using Bins = KeptBins<int, Count, GoodHash>;
  Bins bins;
  ++bins.for_insert(-1).n;  // one bin that stays busy throughout
  for (int tag = 0; tag < 100000; ++tag) {
    Count& bin = bins.for_insert(tag);
    ++bin.n;
    --bin.n;
    bins.emptied();
    ASSERT_LE(bins.bins(), Bins::kSweepAt + 1) << "at tag " << tag;
  }
  const Count* busy = bins.find(-1);
  ASSERT_NE(busy, nullptr) << "a sweep removed a bin in use";
  EXPECT_EQ(busy->n, 1);
}

// A sweep leaves the table the size the next kSweepAt bins need: shrinking
// it made it regrow through every power of two between sweeps.
TEST(KeptBins, CyclingThroughTagsKeepsTheTableSizeFromSweepToSweep) {
  using Bins = KeptBins<int, Count, GoodHash>;
  Bins bins;
  ++bins.for_insert(-1).n;
  std::size_t settled = 0;
  for (int tag = 0; tag < 100000; ++tag) {
    Count& bin = bins.for_insert(tag);
    ++bin.n;
    --bin.n;
    bins.emptied();
    if (tag == 3 * static_cast<int>(Bins::kSweepAt)) settled = bins.capacity();
    if (settled != 0) {
      ASSERT_EQ(bins.capacity(), settled) << "at tag " << tag;
    }
  }
  EXPECT_LE(settled, 4 * Bins::kSweepAt + 64);
  const Count* busy = bins.find(-1);
  ASSERT_NE(busy, nullptr);
  EXPECT_EQ(busy->n, 1);
}

// The last-used bin is remembered (found again without hashing). Bins move
// when the table grows and when a sweep rebuilds it: a stale memory would
// show here as a count that disagrees with the reference, or a crash under
// ASan.
TEST(KeptBins, TheRememberedBinSurvivesGrowthAndSweeps) {
  KeptBins<int, Count, GoodHash> bins;
  std::unordered_map<int, int> reference;
  std::mt19937_64 rng(42);
  int key = 0;
  for (int step = 0; step < 400000; ++step) {
    // Runs of one key (the remembered bin), with jumps over a range wide
    // enough to grow the table and gather kSweepAt empty bins.
    if (rng() % 4 == 0) key = static_cast<int>(rng() % 5000);
    switch (rng() % 3) {
      case 0:
        ++bins.for_insert(key).n;
        ++reference[key];
        break;
      case 1:
        if (Count* bin = bins.find(key)) {
          ASSERT_GT(reference[key], 0) << "step " << step;
          --bin->n;
          --reference[key];
          if (bin->empty()) bins.emptied();
        } else {
          ASSERT_EQ(reference[key], 0) << "step " << step;
        }
        break;
      default: {
        const Count* bin = bins.find(key);
        ASSERT_EQ(bin == nullptr ? 0 : bin->n, reference[key]) << "step " << step;
      }
    }
  }
  for (const auto& [k, n] : reference) {
    const Count* bin = bins.find(k);
    ASSERT_EQ(bin == nullptr ? 0 : bin->n, n) << "key " << k;
  }
}

}  // namespace
}  // namespace tagwire::matching
