// RootedTree: one rank's place in the tree over a group's n ranks, rooted
// at `root`, that the rooted collectives (broadcast, reduction) run along.
//
// Binomial: ceil(log2 n) send times from the root to the last rank, where
// a flat fan-out or fan-in through the root takes n - 1. Ranks are
// numbered from the root (v = rank - root mod n). Rank v's parent is v
// without its lowest set bit; its children are v + 1, v + 2, v + 4, ...
// below that bit (every power of two for the root). So the subtree under
// v + 2^k holds exactly the ranks v + 2^k ... v + 2^(k+1) - 1: with the
// root at rank 0, combining a node's own operand with its children's
// results, smallest child first, is combining in rank order, which a
// non-commutative operation needs.
//
// Flat: every other rank is the root's child, in the same order; the
// shape the engine picks when ranks outnumber cores (engine_config.h).
#pragma once

#include <vector>

namespace tagwire::mpi {

struct RootedTree {
  int parent = -1;            // a rank of the group; -1 at the root
  std::vector<int> children;  // ranks of the group, the smallest subtree first

  static RootedTree binomial(int n, int rank, int root) {
    RootedTree tree;
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

  static RootedTree flat(int n, int rank, int root) {
    RootedTree tree;
    if (rank != root) {
      tree.parent = root;
      return tree;
    }
    for (int v = 1; v < n; ++v) tree.children.push_back((v + root) % n);
    return tree;
  }

  static RootedTree of(int n, int rank, int root, bool flat_shape) {
    return flat_shape ? flat(n, rank, root) : binomial(n, rank, root);
  }
};

}  // namespace tagwire::mpi
