// BinomialTree: one rank's place in the binomial tree over a group's n
// ranks, rooted at `root`, that the rooted collectives (broadcast,
// reduction) run along: ceil(log2 n) steps from the root to the farthest
// rank, where a linear fan-out or fan-in through the root takes n - 1.
//
// Ranks are numbered from the root (v = rank - root mod n). Rank v's
// parent is v without its lowest set bit; its children are v + 1, v + 2,
// v + 4, ... below that bit (every power of two for the root). So the
// subtree under v + 2^k holds exactly the ranks v + 2^k ... v + 2^(k+1) - 1:
// with the root at rank 0, combining a node's own operand with its
// children's results, smallest child first, is combining in rank order,
// which a non-commutative operation needs.
#pragma once

#include <vector>

namespace tagwire::mpi {

struct BinomialTree {
  int parent = -1;            // a rank of the group; -1 at the root
  std::vector<int> children;  // ranks of the group, the smallest subtree first

  static BinomialTree of(int n, int rank, int root) {
    BinomialTree tree;
    const int v = (rank - root + n) % n;
    int low = 1;  // v's lowest set bit; for the root, the first power of two >= n
    if (v == 0) {
      while (low < n) low <<= 1;
    } else {
      low = v & -v;
      tree.parent = (v - low + root) % n;
    }
    for (int step = 1; step < low && v + step < n; step <<= 1) {
      tree.children.push_back((v + step + root) % n);
    }
    return tree;
  }
};

}  // namespace tagwire::mpi
