// The eager ring's layout and credit bookkeeping (verbs/eager_ring.h), with
// plain memory standing in for the RDMA WRITE: staging a message into a
// local slot image and copying the staged bytes to the "remote" slot is
// exactly what the WRITE does. Runs on any machine.
#include "verbs/eager_ring.h"

#include <gtest/gtest.h>

#include "../support/byte_patterns.h"

#include <cstring>
#include <numeric>
#include <string>
#include <vector>

// stage_frame inlines copy_small, whose branches for other lengths GCC 12
// follows into the tests' fixed-size images and reports as writes past
// their end (-Warray-bounds, -Wstringop-overflow): a false positive,
// since every frame here fits (the tests check the offsets they get back).
#pragma GCC diagnostic ignored "-Warray-bounds"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

namespace tagwire::verbs {
namespace {

using tagwire::testing::bytes;
std::string text(std::span<const std::uint8_t> b) {
  return {reinterpret_cast<const char*>(b.data()), b.size()};
}

// A receiver's ring and a sender's slot image, the WRITE as a memcpy.
struct Wire {
  RingLayout layout = RingLayout::for_messages(56, 100, 4);
  std::vector<std::uint64_t> ring_words = std::vector<std::uint64_t>(layout.ring_bytes() / 8);
  std::vector<std::uint8_t> staging = std::vector<std::uint8_t>(layout.slot_size);

  std::span<std::uint8_t> remote_slot(std::uint64_t serial) {
    auto* base = reinterpret_cast<std::uint8_t*>(ring_words.data());
    return {base + layout.slot_offset(serial), layout.slot_size};
  }
  StagedWrite stage(std::uint64_t serial, std::uint32_t ack, const std::string& header,
                    const std::string& payload) {
    return stage_frame(staging, frame_ends(ring_marker(serial), ack, header.size(), payload.size()),
                       bytes(header), bytes(payload));
  }
  void write(std::uint64_t serial, StagedWrite w, std::size_t only = SIZE_MAX) {
    const std::size_t n = std::min(only, w.length);
    std::memcpy(remote_slot(serial).data() + w.offset, staging.data() + w.offset, n);
  }
  // Places the WRITE back to front: the trailer first, the prefix last.
  void write_tail_only(std::uint64_t serial, StagedWrite w) {
    const std::size_t tail = w.offset + w.length - kRingTrailer;
    std::memcpy(remote_slot(serial).data() + tail, staging.data() + tail, kRingTrailer);
  }
};

TEST(RingLayout, SlotsFitTheLargestMessageAndStayAligned) {
  const RingLayout l = RingLayout::for_messages(64, 8192, 64);
  EXPECT_EQ(l.slot_size % 64, 0u);
  EXPECT_GE(l.max_frame(), kRingPrefix + 64 + 8192);
  EXPECT_EQ(l.ring_bytes(), std::size_t{64} * l.slot_size);
  EXPECT_EQ(l.slot_offset(1), 0u);
  EXPECT_EQ(l.slot_offset(64), 63u * l.slot_size);
  EXPECT_EQ(l.slot_offset(65), 0u);  // the ring wraps
}

TEST(RingMarker, NeverZeroAndDiffersBetweenLaps) {
  EXPECT_NE(ring_marker(0xfffffffeull), 0u);
  EXPECT_NE(ring_marker(0xffffffffull), 0u);
  EXPECT_NE(ring_marker(1), ring_marker(5));  // same slot of a 4-slot ring, next lap
  for (std::uint64_t s = 0xfffffff0ull; s < 0x100000010ull; ++s) EXPECT_NE(ring_marker(s), 0u);
}

// The receiver keeps the next marker by increments (VerbsEndpoint's poll):
// it must stay ring_marker() of the serial across the 32-bit wrap.
TEST(RingMarker, TheIncrementKeepsStepWithTheSerialAcrossTheWrap) {
  std::uint32_t kept = ring_marker(1);
  for (std::uint64_t s = 1; s < 1000; ++s) {
    kept = next_ring_marker(kept);
    ASSERT_EQ(kept, ring_marker(s + 1)) << "serial " << s + 1;
  }
  for (std::uint64_t s = 0xfffffff0ull; s < 0x200000010ull;
       s += (s == 0x100000010ull ? 0xffffffe0ull : 1)) {
    kept = ring_marker(s);
    ASSERT_EQ(next_ring_marker(kept), ring_marker(s + 1)) << "serial " << s + 1;
  }
}

// The poll's fast test sees the trailer, and only the trailer of the
// message it waits for: the previous lap's marker is not it.
TEST(EagerRing, TheTrailerTestSeesOnlyTheMessageItWaitsFor) {
  Wire w;
  std::uint8_t* end1 = w.remote_slot(1).data() + w.layout.slot_size;
  EXPECT_FALSE(trailer_carries(end1, ring_marker(1))) << "an empty slot";
  const StagedWrite sw = w.stage(1, 0, "hdr", "data");
  w.write_tail_only(1, sw);
  EXPECT_TRUE(trailer_carries(end1, ring_marker(1)));
  const std::uint64_t next_lap = 1 + w.layout.slots;
  EXPECT_FALSE(trailer_carries(end1, ring_marker(next_lap)));
}

// A small message goes inline, laid out in an image of its own rather
// than a staging slot (VerbsEndpoint::write_inline), an image smaller than
// the slot: the bytes it puts at the slot's end must be the staged ones,
// and read back the same.
TEST(EagerRing, AnInlineImageLandsAsTheStagedFrameDoes) {
  for (std::uint64_t serial : {1ull, 2ull, 5ull, 0xffffffffull}) {
    Wire staged;
    const StagedWrite sw = staged.stage(serial, 9, "header-bytes", "8 bytes!");
    std::uint8_t image[256];
    const StagedWrite iw = stage_frame(image, frame_ends(ring_marker(serial), 9, 12, 8),
                                       bytes("header-bytes"), bytes("8 bytes!"));
    ASSERT_EQ(iw.length, sw.length);
    EXPECT_EQ(iw.offset + iw.length, sizeof(image)) << "the frame ends the image";
    // Placed where write_inline aims it: the slot's end less its length.
    Wire inlined;
    std::span<std::uint8_t> slot = inlined.remote_slot(serial);
    std::memcpy(slot.data() + slot.size() - iw.length, image + iw.offset, iw.length);
    EXPECT_EQ(0, std::memcmp(slot.data() + sw.offset, staged.staging.data() + sw.offset, sw.length))
        << "serial " << serial;
    ArrivedMessage m;
    ASSERT_EQ(peek_message(slot, serial, &m), Arrival::kReady) << "serial " << serial;
    EXPECT_EQ(text(m.header), "header-bytes");
    EXPECT_EQ(text(m.payload), "8 bytes!");
    EXPECT_EQ(m.ack, 9u);
  }
}

// A gathered WRITE places head, payload and trailer one after another at
// the slot's end: the same bytes as a staged frame, read back alike.
TEST(EagerRing, AGatheredFrameLandsAsTheStagedFrameDoes) {
  const std::string payload(90, 'p');  // Wire's slots take 100 bytes of payload
  for (std::uint64_t serial : {1ull, 2ull, 0xffffffffull}) {
    Wire staged;
    const StagedWrite sw = staged.stage(serial, 4, "header-bytes", payload);
    std::uint8_t image[256];
    const GatheredEnds g = stage_frame_ends(
        image, frame_ends(ring_marker(serial), 4, 12, payload.size()), bytes("header-bytes"));
    ASSERT_EQ(g.length, sw.length);
    Wire gathered;
    std::span<std::uint8_t> slot = gathered.remote_slot(serial);
    std::uint8_t* at = slot.data() + slot.size() - g.length;
    std::memcpy(at, image, g.head);
    std::memcpy(at + g.head, payload.data(), payload.size());
    std::memcpy(at + g.head + payload.size(), image + g.head, kRingTrailer);
    EXPECT_EQ(0, std::memcmp(slot.data() + sw.offset, staged.staging.data() + sw.offset, sw.length))
        << "serial " << serial;
    ArrivedMessage m;
    ASSERT_EQ(peek_message(slot, serial, &m), Arrival::kReady) << "serial " << serial;
    EXPECT_EQ(text(m.header), "header-bytes");
    EXPECT_EQ(text(m.payload), payload);
    EXPECT_EQ(m.ack, 4u);
  }
}

TEST(EagerRing, AWrittenMessageReadsBackWithItsAck) {
  Wire w;
  ArrivedMessage m;
  EXPECT_EQ(peek_message(w.remote_slot(1), 1, &m), Arrival::kEmpty);
  const StagedWrite sw = w.stage(1, 7, "header-bytes", "the payload");
  EXPECT_EQ(sw.offset + sw.length, w.layout.slot_size);  // ends at the trailer
  w.write(1, sw);
  ASSERT_EQ(peek_message(w.remote_slot(1), 1, &m), Arrival::kReady);
  EXPECT_EQ(text(m.header), "header-bytes");
  EXPECT_EQ(text(m.payload), "the payload");
  EXPECT_EQ(m.ack, 7u);
}

// A message sent as a WRITE with immediate says so in its frame (the
// receiver then reaps the receive it consumed at once), and the flag
// changes neither its header's length nor anything else read back.
TEST(EagerRing, AWakeUpSaysSoAndReadsBackTheSame) {
  for (bool woke : {false, true}) {
    std::uint8_t image[256];
    const StagedWrite iw = stage_frame(image, frame_ends(ring_marker(3), 5, 12, 8, woke),
                                       bytes("header-bytes"), bytes("8 bytes!"));
    Wire w;
    std::span<std::uint8_t> slot = w.remote_slot(3);
    std::memcpy(slot.data() + slot.size() - iw.length, image + iw.offset, iw.length);
    ArrivedMessage m;
    ASSERT_EQ(peek_message(slot, 3, &m), Arrival::kReady) << "woke " << woke;
    EXPECT_EQ(m.woke, woke);
    EXPECT_EQ(text(m.header), "header-bytes");
    EXPECT_EQ(text(m.payload), "8 bytes!");
    EXPECT_EQ(m.ack, 5u);
  }
  // A plain message never reads as a wake-up, whatever its lengths.
  Wire w;
  w.write(1, w.stage(1, 0, std::string(40, 'h'), std::string(100, 'p')));
  ArrivedMessage m;
  ASSERT_EQ(peek_message(w.remote_slot(1), 1, &m), Arrival::kReady);
  EXPECT_FALSE(m.woke);
  EXPECT_EQ(m.header.size(), 40u);
}

TEST(EagerRing, EmptyHeaderAndPayloadAndTheLargestFrame) {
  Wire w;
  ArrivedMessage m;
  w.write(1, w.stage(1, 0, "", ""));
  ASSERT_EQ(peek_message(w.remote_slot(1), 1, &m), Arrival::kReady);
  EXPECT_TRUE(m.header.empty());
  EXPECT_TRUE(m.payload.empty());
  const std::string big(w.layout.max_frame() - kRingPrefix - 56, 'x');
  const StagedWrite sw = w.stage(2, 0, std::string(56, 'h'), big);
  EXPECT_EQ(sw.offset, 0u);  // fills the slot exactly
  w.write(2, sw);
  ASSERT_EQ(peek_message(w.remote_slot(2), 2, &m), Arrival::kReady);
  EXPECT_EQ(text(m.payload), big);
}

TEST(EagerRing, AHalfPlacedWriteIsNotReadUntilItsHeadIsIn) {
  Wire w;
  ArrivedMessage m;
  const StagedWrite sw = w.stage(1, 0, "hdr", "data");
  w.write_tail_only(1, sw);
  EXPECT_EQ(peek_message(w.remote_slot(1), 1, &m), Arrival::kEmpty);
  w.write(1, sw);
  EXPECT_EQ(peek_message(w.remote_slot(1), 1, &m), Arrival::kReady);
}

TEST(EagerRing, ThePreviousLapIsNotTheNextMessage) {
  Wire w;
  ArrivedMessage m;
  // Message 1 sits in slot 0 unreleased; message 5 (next lap) is awaited.
  w.write(1, w.stage(1, 0, "old", "lap one"));
  EXPECT_EQ(peek_message(w.remote_slot(5), 5, &m), Arrival::kEmpty);
  release_slot(w.remote_slot(1));
  EXPECT_EQ(peek_message(w.remote_slot(1), 1, &m), Arrival::kEmpty);  // cleared
  // A shorter message in a slot where a longer one was: read exactly.
  w.write(5, w.stage(5, 0, "new", "x"));
  ASSERT_EQ(peek_message(w.remote_slot(5), 5, &m), Arrival::kReady);
  EXPECT_EQ(text(m.header), "new");
  EXPECT_EQ(text(m.payload), "x");
}

TEST(EagerRing, ImpossibleLengthsAreMalformedNotRead) {
  Wire w;
  ArrivedMessage m;
  const StagedWrite sw = w.stage(1, 0, "hdr", "data");
  w.write(1, sw);
  auto slot = w.remote_slot(1);
  // Frame length beyond the slot.
  std::uint32_t bad = w.layout.slot_size;
  std::memcpy(slot.data() + slot.size() - kRingTrailer, &bad, 4);
  EXPECT_EQ(peek_message(slot, 1, &m), Arrival::kMalformed);
  // A header length beyond the frame.
  w.write(1, sw);
  std::uint32_t hlen = 1000;
  std::memcpy(slot.data() + sw.offset, &hlen, 4);
  EXPECT_EQ(peek_message(slot, 1, &m), Arrival::kMalformed);
}

TEST(CreditWindow, StopsAtTheRingSizeAndReopensOnAcks) {
  CreditWindow c(4);
  for (std::uint64_t n = 1; n <= 4; ++n) {
    ASSERT_TRUE(c.can_send());
    EXPECT_EQ(c.take(), n);
  }
  EXPECT_FALSE(c.can_send());
  c.on_ack(1);
  EXPECT_TRUE(c.can_send());
  EXPECT_EQ(c.take(), 5u);
  EXPECT_FALSE(c.can_send());
  c.on_ack(5);
  EXPECT_EQ(c.unconsumed(), 0u);
}

TEST(CreditWindow, StaleAndImpossibleAcksAreIgnored) {
  CreditWindow c(4);
  for (int i = 0; i < 4; ++i) c.take();
  c.on_ack(3);
  c.on_ack(2);  // an older count arriving late (piggy-back after the credit word)
  EXPECT_EQ(c.unconsumed(), 1u);
  c.on_ack(9);  // more than was ever sent
  EXPECT_EQ(c.unconsumed(), 1u);
}

TEST(CreditWindow, CountsWrapAt32Bits) {
  // A window that has already carried 2^32 - 10 messages, all consumed.
  CreditWindow c(64, (std::uint64_t{1} << 32) - 10);
  for (int i = 0; i < 20; ++i) c.take();
  EXPECT_EQ(c.unconsumed(), 20u);
  c.on_ack(0xfffffffeu);  // 2^32 - 2: eight consumed, before the wrap
  EXPECT_EQ(c.unconsumed(), 12u);
  c.on_ack(10);  // (2^32 + 10) mod 2^32: all of them, after the wrap
  EXPECT_EQ(c.unconsumed(), 0u);
  c.on_ack(0xfffffffeu);  // the older count, late: ignored
  EXPECT_EQ(c.unconsumed(), 0u);
}

TEST(CreditReturn, AWriteIsDueOnlyWhenNotToldForTheThreshold) {
  CreditReturn r(3);
  r.consumed_one();
  r.consumed_one();
  EXPECT_FALSE(r.write_due());
  EXPECT_EQ(r.tell(), 2u);  // piggy-backed on an outgoing message
  r.consumed_one();
  r.consumed_one();
  EXPECT_FALSE(r.write_due());
  r.consumed_one();
  EXPECT_TRUE(r.write_due());
  EXPECT_EQ(r.tell(), 5u);
  EXPECT_FALSE(r.write_due());
}

// A whole exchange: a sender that only writes when it has credit, and a
// receiver that consumes in order and returns credit when due, never
// overwrite an unconsumed slot and deliver every message once, in order.
TEST(EagerRing, SenderAndReceiverKeepStepOverManyLaps) {
  Wire w;
  CreditWindow window(w.layout.slots);
  CreditReturn back(w.layout.slots / 2);
  std::uint32_t credit_word = 0;  // the sender's word the receiver writes
  std::uint64_t expected = 1, delivered = 0;
  std::uint64_t sent_payloads = 0;
  for (int step = 0; step < 10000; ++step) {
    // The sender sends what its window allows (sometimes only one).
    window.on_ack(credit_word);
    const int burst = step % 7;
    for (int i = 0; i < burst && window.can_send(); ++i) {
      const std::uint64_t n = window.take();
      // The slot it is about to overwrite must have been consumed.
      ArrivedMessage stale;
      ASSERT_NE(peek_message(w.remote_slot(n), n - w.layout.slots, &stale), Arrival::kReady)
          << "overwrote unconsumed message " << n - w.layout.slots;
      w.write(n, w.stage(n, 0, "h", std::to_string(n)));
      ++sent_payloads;
    }
    // The receiver consumes some of what is there.
    for (int i = 0; i < (step % 3); ++i) {
      ArrivedMessage m;
      if (peek_message(w.remote_slot(expected), expected, &m) != Arrival::kReady) break;
      ASSERT_EQ(text(m.payload), std::to_string(expected));
      release_slot(w.remote_slot(expected));
      ++expected;
      ++delivered;
      back.consumed_one();
      if (back.write_due()) credit_word = back.tell();
    }
  }
  EXPECT_GT(delivered, 1000u);
  EXPECT_LE(sent_payloads - delivered, w.layout.slots);
}

}  // namespace
}  // namespace tagwire::verbs

namespace tagwire::verbs {
namespace {

// Rings shrink as the job grows so that all of them fit the budget, down to
// a floor below which credits would stall every sender.
TEST(RingSizing, FullRingsWhileTheyFitThenShrinkingToTheFloor) {
  const std::uint32_t slot = 8256;
  const std::size_t budget = std::size_t{256} << 20;
  EXPECT_EQ(RingLayout::slots_for_job(1, slot, budget), kRingMaxSlots);
  EXPECT_EQ(RingLayout::slots_for_job(400, slot, budget), kRingMaxSlots);
  const std::uint32_t at_1000 = RingLayout::slots_for_job(1000, slot, budget);
  EXPECT_LT(at_1000, kRingMaxSlots);
  EXPECT_LE(std::size_t{at_1000} * slot * 1000, budget) << "the rings fit the budget";
  EXPECT_GT(std::size_t{at_1000 + 1} * slot * 1000, budget) << "and take as much of it as fits";
  EXPECT_EQ(RingLayout::slots_for_job(100000, slot, budget), kRingMinSlots);
  EXPECT_EQ(RingLayout::slots_for_job(3, slot, 64 * 1024), kRingMinSlots);
  // Never more with more peers.
  std::uint32_t last = kRingMaxSlots;
  for (std::size_t peers = 1; peers < 20000; peers += 97) {
    const std::uint32_t n = RingLayout::slots_for_job(peers, slot, budget);
    EXPECT_LE(n, last) << peers << " peers";
    last = n;
  }
}

}  // namespace
}  // namespace tagwire::verbs
