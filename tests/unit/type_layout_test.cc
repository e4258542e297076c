// TypeLayout (src/mpi_api/datatype.h): repeated runs, what folds into one,
// contiguity across runs that stay apart, the data span, and external32's
// sizes over them.
#include "mpi_api/datatype.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

#include "mpi.h"
#include "mpi_api/external32.h"

namespace tagwire::mpi {
namespace {

TypeLayout basic_of(int type, std::size_t size) {
  return TypeLayout::basic(size, size, size, type);
}

TEST(TypeLayout, AVectorOfAnyCountIsOneRepeatedRun) {
  const TypeLayout ints = basic_of(MPI_INT, 4);
  auto v = TypeLayout::strided(1000, 1, 8, ints);
  ASSERT_TRUE(v.has_value());
  ASSERT_EQ(v->runs().size(), 1u);
  EXPECT_EQ(v->runs()[0].repeat, 1000u);
  EXPECT_EQ(v->runs()[0].stride, 8);
  EXPECT_EQ(v->size(), 4000u);
  EXPECT_EQ(v->extent(), 999 * 8 + 4);
  EXPECT_FALSE(v->contiguous());
  std::vector<std::int32_t> in(2000), out(1000, -1);
  std::iota(in.begin(), in.end(), 0);
  v->pack(in.data(), 1, reinterpret_cast<std::uint8_t*>(out.data()));
  for (int k = 0; k < 1000; ++k) ASSERT_EQ(out[k], 2 * k);
  // A stride equal to the block: one plain run, contiguous.
  auto dense = TypeLayout::strided(1000, 2, 8, ints);
  ASSERT_TRUE(dense.has_value());
  EXPECT_EQ(dense->runs().size(), 1u);
  EXPECT_EQ(dense->runs()[0].repeat, 1u);
  EXPECT_TRUE(dense->contiguous());
}

TEST(TypeLayout, PlaceFoldsCopiesAndStridesIntoOneRun) {
  const TypeLayout ints = basic_of(MPI_INT, 4);
  // Three blocks of one int at 0, 12, 24 (an indexed type): one run.
  const int blocks[] = {1, 1, 1};
  const std::ptrdiff_t at[] = {0, 12, 24};
  const TypeLayout* types[] = {&ints, &ints, &ints};
  auto t = TypeLayout::place(blocks, at, types, false);
  ASSERT_TRUE(t.is_ok());
  ASSERT_EQ(t->runs().size(), 1u);
  EXPECT_EQ(t->runs()[0].repeat, 3u);
  // A fourth off the stride starts a run of its own.
  const int four[] = {1, 1, 1, 1};
  const std::ptrdiff_t off[] = {0, 12, 24, 40};
  const TypeLayout* types4[] = {&ints, &ints, &ints, &ints};
  auto u = TypeLayout::place(four, off, types4, false);
  ASSERT_TRUE(u.is_ok());
  EXPECT_EQ(u->runs().size(), 2u);
  const auto pieces = u->pieces(1);
  ASSERT_EQ(pieces.size(), 4u);
  EXPECT_EQ(pieces[3].offset, 40);
}

TEST(TypeLayout, RunsThatConvertApartAreStillContiguous) {
  // struct { long l; double d; }: a long is 4 bytes in external32 and a
  // double 8, so the two runs stay apart; sent, they are one block.
  const TypeLayout l = basic_of(MPI_LONG, sizeof(long));
  const TypeLayout d = basic_of(MPI_DOUBLE, 8);
  const int blocks[] = {1, 1};
  const std::ptrdiff_t at[] = {0, 8};
  const TypeLayout* types[] = {&l, &d};
  auto s = TypeLayout::place(blocks, at, types, true);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->runs().size(), 2u);
  EXPECT_TRUE(s->contiguous());
  EXPECT_EQ(external32::packed_size(*s, 3), 3u * 12);
  // An int beside a float converts alike: one run.
  const TypeLayout i = basic_of(MPI_INT, 4);
  const TypeLayout f = basic_of(MPI_FLOAT, 4);
  const TypeLayout* alike[] = {&i, &f};
  const std::ptrdiff_t at4[] = {0, 4};
  auto g = TypeLayout::place(blocks, at4, alike, true);
  ASSERT_TRUE(g.is_ok());
  EXPECT_EQ(g->runs().size(), 1u);
}

TEST(TypeLayout, DataSpanFollowsANegativeStride) {
  const TypeLayout ints = basic_of(MPI_INT, 4);
  auto v = TypeLayout::strided(4, 1, -16, ints);
  ASSERT_TRUE(v.has_value());
  const TypeLayout::Span span = v->data_span();
  EXPECT_EQ(span.lo, -48);
  EXPECT_EQ(span.hi, 4);
  EXPECT_EQ(v->lower_bound(), -48);
  EXPECT_EQ(v->extent(), 52);
}

}  // namespace
}  // namespace tagwire::mpi
