// The ring on its own: records of every size across many laps, padding at
// the end, a full ring that refuses and writes nothing, stale cells never
// taken for fresh ones.
#include "shm/spsc_ring.h"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

namespace tagwire::shm {
namespace {

struct Ring {
  explicit Ring(std::size_t bytes)
      : data(bytes),
        producer(data.data(), bytes, &control),
        consumer(data.data(), bytes, &control) {}
  std::vector<std::uint8_t> data;
  RingControl control;
  RingProducer producer;
  RingConsumer consumer;
};

std::vector<std::uint8_t> pattern(std::size_t n, std::uint32_t seed) {
  std::vector<std::uint8_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = static_cast<std::uint8_t>(seed * 31 + i);
  return v;
}

TEST(SpscRing, RecordsOfEverySizeSurviveManyLapsInOrder) {
  Ring ring(4096);
  std::mt19937 random(7);
  std::uint32_t sent = 0, received = 0;
  std::vector<std::pair<std::size_t, std::size_t>> in_flight;  // header, payload sizes
  for (int step = 0; step < 200000; ++step) {
    if (random() % 2 == 0) {
      const std::size_t h = 1 + random() % kMaxRecordHeader;
      const std::size_t p = random() % (4096 / 2 - 8 - h);
      if (record_bytes(h, p) > 4096 / 2) continue;
      auto header = pattern(h, sent);
      auto payload = pattern(p, ~sent);
      if (ring.producer.push(header, payload)) {
        in_flight.emplace_back(h, p);
        ++sent;
      }
    } else {
      RingRecord r;
      if (!ring.consumer.peek(&r)) {
        ASSERT_EQ(received, sent) << "a record was sent but is not seen";
        continue;
      }
      ASSERT_LT(received, sent) << "a record seen that was never sent";
      const auto [h, p] = in_flight[received];
      ASSERT_EQ(r.header.size(), h);
      ASSERT_EQ(r.payload.size(), p);
      ASSERT_TRUE(std::equal(r.header.begin(), r.header.end(), pattern(h, received).begin()));
      ASSERT_TRUE(std::equal(r.payload.begin(), r.payload.end(), pattern(p, ~received).begin()));
      ring.consumer.release();
      ++received;
    }
  }
  EXPECT_GT(received, 10000u);  // many laps of a 4 KiB ring
}

TEST(SpscRing, AFullRingRefusesAndWritesNothing) {
  Ring ring(4096);
  const std::vector<std::uint8_t> header(56, 1), payload(1000, 2);
  int pushed = 0;
  while (ring.producer.push(header, payload)) ++pushed;
  EXPECT_EQ(pushed, 4096 / static_cast<int>(record_bytes(56, 1000)));
  const auto before = ring.data;
  EXPECT_FALSE(ring.producer.push(header, payload));
  EXPECT_FALSE(ring.producer.has_room(56, 1000));
  EXPECT_EQ(ring.data, before);
  RingRecord r;
  ASSERT_TRUE(ring.consumer.peek(&r));
  ring.consumer.release();
  EXPECT_TRUE(ring.producer.has_room(56, 1000));  // the consumer's progress is seen
}

TEST(SpscRing, LastLapsBytesAreNotAFreshRecord) {
  Ring ring(4096);
  const std::vector<std::uint8_t> header(8, 3);
  // One lap of one-cell records, all consumed: every cell holds an old word.
  for (int i = 0; i < 64; ++i) {
    ASSERT_TRUE(ring.producer.push(header, {}));
    RingRecord r;
    ASSERT_TRUE(ring.consumer.peek(&r));
    ring.consumer.release();
  }
  RingRecord r;
  EXPECT_FALSE(ring.consumer.pending());
  EXPECT_FALSE(ring.consumer.peek(&r));
}

// A record that spans cells leaves payload bytes where next lap's records
// start. Payload is the application's: here it holds, at every cell start,
// exactly the word a fresh one-cell record would carry there next lap (an
// index array could hold such numbers). The consumer must not take any of
// them for a record before the producer has written it.
TEST(SpscRing, LastLapsPayloadIsNotAFreshRecord) {
  constexpr std::size_t kBytes = 4096;
  Ring ring(kBytes);
  const std::vector<std::uint8_t> header(8, 3);
  // A record of the whole first half (8 control + 8 header + payload).
  std::vector<std::uint8_t> payload(kBytes / 2 - 16);
  for (std::size_t cell = 1; cell < kBytes / 2 / kCell; ++cell) {
    // Next lap's absolute position of this cell, its stamp, a 1-byte
    // header and an empty payload: a well-formed control word.
    const std::uint64_t next_lap = kBytes + cell * kCell;
    const std::uint64_t word = (std::uint64_t{8} << 32) | (next_lap / kCell + 1);
    std::memcpy(payload.data() + cell * kCell - 16, &word, sizeof(word));
  }
  ASSERT_TRUE(ring.producer.push(header, payload));
  RingRecord r;
  ASSERT_TRUE(ring.consumer.peek(&r));
  ASSERT_EQ(r.payload.size(), payload.size());
  ring.consumer.release();
  // The second half in one-cell records, so that next lap starts at 0.
  for (std::size_t i = 0; i < kBytes / 2 / kCell; ++i) {
    ASSERT_TRUE(ring.producer.push(header, {}));
    ASSERT_TRUE(ring.consumer.peek(&r));
    ring.consumer.release();
  }
  // Next lap: one-cell records, each checked before it is written.
  for (std::size_t cell = 0; cell < kBytes / 2 / kCell; ++cell) {
    ASSERT_FALSE(ring.consumer.pending()) << "cell " << cell << ": last lap's payload seen as new";
    ASSERT_FALSE(ring.consumer.peek(&r)) << "cell " << cell << ": last lap's payload taken";
    ASSERT_TRUE(ring.producer.push(header, {}));
    ASSERT_TRUE(ring.consumer.peek(&r));
    ASSERT_EQ(r.header.size(), header.size());
    ring.consumer.release();
  }
}

TEST(SpscRing, SizedForTwoOfTheLargestRecords) {
  EXPECT_GE(ring_bytes_for(128, 32768), 2 * record_bytes(128, 32768));
  const std::size_t b = ring_bytes_for(128, 8192);
  EXPECT_EQ(b & (b - 1), 0u) << "a power of two";
}

}  // namespace
}  // namespace tagwire::shm
