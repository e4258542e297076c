// The rooted collectives' trees (mpi_api/rooted_tree.h): for every group
// size and root, both shapes reach everyone once and keep rank order under
// rank 0; the binomial one within ceil(log2 n) hops and send times.
#include "mpi_api/rooted_tree.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <vector>

namespace tagwire::mpi {
namespace {

int ceil_log2(int n) {
  int d = 0;
  while ((1 << d) < n) ++d;
  return d;
}

class EitherShape : public ::testing::TestWithParam<bool> {
 protected:
  static RootedTree at(int n, int rank, int root) {
    return RootedTree::of(n, rank, root, GetParam());
  }
};

TEST_P(EitherShape, EveryRankHasOneParentAndIsItsChild) {
  for (int n = 1; n <= 70; ++n) {
    for (int root = 0; root < n; ++root) {
      std::vector<int> heard(static_cast<std::size_t>(n), 0);
      for (int rank = 0; rank < n; ++rank) {
        const RootedTree t = at(n, rank, root);
        ASSERT_EQ(t.parent < 0, rank == root) << "n " << n << " root " << root << " rank " << rank;
        for (int c : t.children) {
          ASSERT_GE(c, 0);
          ASSERT_LT(c, n);
          ++heard[static_cast<std::size_t>(c)];
          EXPECT_EQ(at(n, c, root).parent, rank) << "n " << n << " child " << c;
        }
      }
      for (int rank = 0; rank < n; ++rank) {
        EXPECT_EQ(heard[static_cast<std::size_t>(rank)], rank == root ? 0 : 1)
            << "n " << n << " root " << root << " rank " << rank;
      }
    }
  }
}

// Under rank 0, the subtree of a rank v is v .. v + size - 1, and its
// children's subtrees follow v one after another, smallest first: so
// "own operand, then each child's result in order" is rank order.
int subtree_end(bool flat, int n, int v) {  // one past the last rank under v
  int end = v + 1;
  for (int c : RootedTree::of(n, v, 0, flat).children) {
    EXPECT_EQ(c, end) << "n " << n << ": a child of " << v << " does not follow its elder";
    end = subtree_end(flat, n, c);
  }
  return end;
}

TEST_P(EitherShape, SubtreesUnderRankZeroAreConsecutiveRanks) {
  for (int n = 1; n <= 130; ++n) EXPECT_EQ(subtree_end(GetParam(), n, 0), n) << "n " << n;
}

INSTANTIATE_TEST_SUITE_P(Shapes, EitherShape, ::testing::Values(false, true),
                         [](const auto& shape) { return shape.param ? "Flat" : "Binomial"; });

// A rank's distance from the root in hops: at most ceil(log2 n) (a chain
// would be n - 1).
TEST(BinomialTree, NoRankIsMoreThanCeilLog2HopsAway) {
  for (int n = 1; n <= 130; ++n) {
    for (int root : {0, n / 2, n - 1}) {
      int deepest = 0;
      for (int rank = 0; rank < n; ++rank) {
        int depth = 0;
        for (int at = rank; at != root; at = RootedTree::binomial(n, at, root).parent) {
          ASSERT_LE(++depth, n) << "a cycle at n " << n;
        }
        deepest = std::max(deepest, depth);
      }
      EXPECT_LE(deepest, ceil_log2(n)) << "n " << n << " root " << root;
      EXPECT_GE(deepest, ceil_log2(n) - 1) << "n " << n << " root " << root;
    }
  }
}

// A broadcast's length in sends: each rank sends to its children one after
// another, the largest subtree first (as collectives.cc does); the last
// rank hears after ceil(log2 n) send times in the binomial tree, n - 1 in
// the flat one.
int last_heard(bool flat, int n, int root, int rank, int at) {
  const RootedTree t = RootedTree::of(n, rank, root, flat);
  int last = at;
  int when = at;
  for (auto c = t.children.rbegin(); c != t.children.rend(); ++c) {
    last = std::max(last, last_heard(flat, n, root, *c, ++when));
  }
  return last;
}

TEST(BinomialTree, BroadcastTakesCeilLog2SendTimes) {
  for (int n = 1; n <= 130; ++n) {
    for (int root : {0, 1 % n, n - 1}) {
      EXPECT_EQ(last_heard(false, n, root, root, 0), ceil_log2(n)) << "n " << n << " root " << root;
      EXPECT_EQ(last_heard(true, n, root, root, 0), n - 1) << "flat, n " << n << " root " << root;
    }
  }
}

TEST(BinomialTree, RootsChildrenArePowersOfTwoAway) {
  const RootedTree t = RootedTree::binomial(11, 3, 3);
  EXPECT_EQ(t.children, (std::vector<int>{4, 5, 7, 0}));  // 3 + 1, 2, 4, 8 (mod 11)
  EXPECT_EQ(RootedTree::binomial(11, 10, 3).parent, 9);   // v 7: parent v 6, rank 9
  EXPECT_EQ(RootedTree::binomial(11, 1, 3).parent, 0);    // v 9: parent v 8, rank 0
  EXPECT_EQ(RootedTree::flat(11, 3, 3).children, (std::vector<int>{4, 5, 6, 7, 8, 9, 10, 0, 1, 2}));
}

}  // namespace
}  // namespace tagwire::mpi
