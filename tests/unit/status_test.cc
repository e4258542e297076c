#include <gtest/gtest.h>

#include <set>

#include "common/status.h"

namespace tagwire {
namespace {

TEST(Status, DefaultIsSuccess) {
  Status s;
  EXPECT_TRUE(s.is_ok());
  EXPECT_EQ(s.code(), ErrorCode::kOk);
  EXPECT_EQ(s.to_string(), "ok");
}

TEST(Status, ErrorCarriesCodeAndMessage) {
  Status s(ErrorCode::kInvalidRank, "rank 7 is outside a communicator of size 4");
  EXPECT_FALSE(s.is_ok());
  EXPECT_EQ(s.to_string(), "invalid-rank: rank 7 is outside a communicator of size 4");
  Status wrapped = s.with_context("MPI_Send");
  EXPECT_EQ(wrapped.code(), ErrorCode::kInvalidRank);
  EXPECT_EQ(wrapped.message(), "MPI_Send: rank 7 is outside a communicator of size 4");
  EXPECT_TRUE(Status::ok().with_context("x").is_ok());
}

TEST(Status, EveryCodeHasADistinctName) {
  std::set<std::string_view> names;
  for (int c = 0; c <= static_cast<int>(ErrorCode::kInternal); ++c) {
    auto name = error_code_name(static_cast<ErrorCode>(c));
    EXPECT_NE(name, "unknown");
    EXPECT_TRUE(names.insert(name).second) << name;
  }
}

Status fails_then_stops(bool fail, int* reached) {
  TAGWIRE_RETURN_IF_ERROR(fail ? Status(ErrorCode::kTruncate, "x") : Status::ok());
  *reached = 1;
  return Status::ok();
}

TEST(Status, ReturnIfErrorStopsOnlyOnError) {
  int reached = 0;
  EXPECT_EQ(fails_then_stops(true, &reached).code(), ErrorCode::kTruncate);
  EXPECT_EQ(reached, 0);
  EXPECT_TRUE(fails_then_stops(false, &reached).is_ok());
  EXPECT_EQ(reached, 1);
}

TEST(Result, HoldsValueOrStatus) {
  Result<int> good = 5;
  ASSERT_TRUE(good.is_ok());
  EXPECT_EQ(*good, 5);
  Result<int> bad = Status(ErrorCode::kNotFound, "nothing");
  EXPECT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kNotFound);
}

}  // namespace
}  // namespace tagwire
