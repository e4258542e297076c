// A collective's schedule as written down (engine/schedule.h): rounds
// split where next_round says and only there, a copy is a step of its own
// kind carrying its source, and scratch is distinct, aligned and lasting
// whether it comes from the schedule's own bytes or the heap, and large
// scratch is kept for the next schedule (ScratchPool).
#include "engine/schedule.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <set>
#include <vector>

namespace tagwire::engine {
namespace {

using Kind = Schedule::Step::Kind;

TEST(Schedule, RoundsSplitWhereAskedAndNeverEmpty) {
  Schedule s(nullptr);
  char a = 0, b = 0;
  s.next_round();  // nothing yet: no empty round
  s.send(&a, 1, 1, 7);
  s.receive(&b, 1, 1, 7);
  s.next_round();
  s.next_round();  // the new round is empty: still one more only
  s.copy(&a, &b, 1);
  s.close();
  ASSERT_EQ(s.round_count(), 2u);
  ASSERT_EQ(s.round(0).size(), 2u);
  EXPECT_EQ(s.round(0)[0].kind, Kind::kSend);
  EXPECT_EQ(s.round(0)[1].kind, Kind::kReceive);
  ASSERT_EQ(s.round(1).size(), 1u);
}

TEST(Schedule, ACopyIsItsOwnStepWithItsSource) {
  Schedule s(nullptr);
  char from[4] = {1, 2, 3, 4}, to[4] = {};
  s.copy(to, from, sizeof from);
  s.copy(to, to, sizeof to);  // onto itself: nothing to do, no step
  s.copy(to, from, 0);        // nothing to copy: no step
  s.close();
  ASSERT_EQ(s.round_count(), 1u);
  ASSERT_EQ(s.round(0).size(), 1u);
  const Schedule::Step& step = s.round(0)[0];
  EXPECT_EQ(step.kind, Kind::kCopy);
  EXPECT_EQ(step.buffer, to);
  EXPECT_EQ(step.from, from);
  EXPECT_EQ(step.bytes, sizeof from);
  EXPECT_FALSE(step.local);  // no std::function behind it
}

TEST(Schedule, AfterRoundStepsOpenTheNextRound) {
  Schedule s(nullptr);
  char a = 0;
  int ran = 0;
  s.receive(&a, 1, 0, 1);
  s.after_round([&ran] {
    ++ran;
    return Status::ok();
  });
  s.close();
  ASSERT_EQ(s.round_count(), 2u);
  ASSERT_EQ(s.round(1).size(), 1u);
  EXPECT_EQ(s.round(1)[0].kind, Kind::kLocal);
  EXPECT_TRUE(s.round(1)[0].local().is_ok());
  EXPECT_EQ(ran, 1);
}

TEST(Schedule, ScratchIsDistinctAlignedAndKeepsItsBytes) {
  Schedule s(nullptr);
  // Small pieces (the schedule's own bytes) and then large ones (the heap),
  // and zero-sized ones, which still get a distinct address.
  const std::vector<std::size_t> sizes = {8, 0, 1, 24, 100, 0, 64, 4096, 8, 1 << 20, 3};
  struct Piece {
    unsigned char* at;
    std::size_t bytes;
  };
  std::vector<Piece> pieces;
  std::set<unsigned char*> seen;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    unsigned char* p = s.scratch(sizes[i]);
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % 16, 0u) << "piece " << i;
    EXPECT_TRUE(seen.insert(p).second) << "piece " << i << " handed out twice";
    std::memset(p, static_cast<int>(i + 1), sizes[i]);
    pieces.push_back({p, sizes[i]});
  }
  // No piece overlaps another: each still holds its own fill.
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    for (std::size_t k = 0; k < pieces[i].bytes; ++k) {
      ASSERT_EQ(pieces[i].at[k], static_cast<unsigned char>(i + 1))
          << "piece " << i << " byte " << k;
    }
  }
  const char text[] = "kept";
  unsigned char* kept = s.keep(text, sizeof text);
  EXPECT_EQ(std::memcmp(kept, text, sizeof text), 0);
}

// Large scratch goes back to the pool when its schedule ends and is
// handed out again (the pages stay mapped: scratch_pool.h); small scratch
// and blocks past the pool's limit never enter it; the pool keeps at most
// its bytes and blocks, freeing the oldest first.
TEST(ScratchPool, LargeBlocksComeBackAndAreReused) {
  ScratchPool::clear();
  unsigned char* first = nullptr;
  {
    Schedule s(nullptr);
    first = s.scratch(1 << 20);
    std::memset(first, 7, 1 << 20);
    s.scratch(4096);  // below kPooledFrom: malloc's
    EXPECT_EQ(ScratchPool::kept_blocks(), 0u);
  }
  EXPECT_EQ(ScratchPool::kept_blocks(), 1u);
  EXPECT_EQ(ScratchPool::kept_bytes(), std::size_t{1} << 20);
  {
    Schedule s(nullptr);
    // Two at once: the kept one for the first, a new one for the second.
    unsigned char* again = s.scratch((1 << 20) - 100);
    unsigned char* other = s.scratch(1 << 20);
    EXPECT_EQ(again, first);
    EXPECT_NE(other, first);
    EXPECT_EQ(ScratchPool::kept_blocks(), 0u);
  }
  EXPECT_EQ(ScratchPool::kept_blocks(), 2u);
  // The smallest block that fits is taken, not the first one kept.
  auto big = ScratchPool::take(std::size_t{8} << 20);
  big.reset();
  auto fits = ScratchPool::take(std::size_t{1} << 20);
  EXPECT_EQ(fits.get_deleter().size, std::size_t{1} << 20);
  fits.reset();
  ScratchPool::clear();
  EXPECT_EQ(ScratchPool::kept_bytes(), 0u);
}

TEST(ScratchPool, KeepsNoMoreThanItsLimits) {
  ScratchPool::clear();
  {
    auto huge = ScratchPool::take(ScratchPool::kKeptBytes + 1);  // past the limit: freed
  }
  EXPECT_EQ(ScratchPool::kept_blocks(), 0u);
  {
    std::vector<ScratchPool::Block> many;
    for (std::size_t i = 0; i < ScratchPool::kKeptBlocks + 4; ++i) {
      many.push_back(ScratchPool::take(ScratchPool::kPooledFrom));
    }
  }
  EXPECT_EQ(ScratchPool::kept_blocks(), ScratchPool::kKeptBlocks);
  {
    // Four blocks of a quarter of the limit each push every older one out.
    std::vector<ScratchPool::Block> quarters;
    for (int i = 0; i < 4; ++i) quarters.push_back(ScratchPool::take(ScratchPool::kKeptBytes / 4));
  }
  EXPECT_EQ(ScratchPool::kept_blocks(), 4u);
  EXPECT_EQ(ScratchPool::kept_bytes(), ScratchPool::kKeptBytes);
  ScratchPool::clear();
}

}  // namespace
}  // namespace tagwire::engine
