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

TEST(SpscRing, SizedForTwoOfTheLargestRecords) {
  EXPECT_GE(ring_bytes_for(128, 32768), 2 * record_bytes(128, 32768));
  const std::size_t b = ring_bytes_for(128, 8192);
  EXPECT_EQ(b & (b - 1), 0u) << "a power of two";
}

}  // namespace
}  // namespace tagwire::shm
