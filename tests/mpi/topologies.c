/* Cartesian and graph topologies, MPI_Dims_create, MPI_Comm_split_type and
 * MPI_Alltoallw through mpi.h, as a stencil code calls them (issue 28).
 * Last line from rank 0: "topologies: N checks passed on rank 0, N failed in all". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static int dims_are(int nnodes, int ndims, const int given[], const int want[]) {
  int d[8];
  memcpy(d, given, sizeof(int) * (size_t)ndims);
  if (MPI_Dims_create(nnodes, ndims, d) != MPI_SUCCESS) return 0;
  return memcmp(d, want, sizeof(int) * (size_t)ndims) == 0;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  /* Dims_create: balanced, non-increasing, fixed entries kept. */
  CHECK(dims_are(12, 2, (int[]){0, 0}, (int[]){4, 3}));
  CHECK(dims_are(12, 3, (int[]){0, 0, 0}, (int[]){3, 2, 2}));
  CHECK(dims_are(16, 2, (int[]){0, 0}, (int[]){4, 4}));
  CHECK(dims_are(7, 2, (int[]){0, 0}, (int[]){7, 1}));
  CHECK(dims_are(12, 2, (int[]){2, 0}, (int[]){2, 6}));
  CHECK(dims_are(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1}));
  CHECK(dims_are(6, 2, (int[]){3, 2}, (int[]){3, 2}));

  /* A 2-D grid over the ranks: columns periodic, rows not. */
  int dims[2] = {0, 0}, periods[2] = {0, 1};
  MPI_Dims_create(size, 2, dims);
  MPI_Comm cart;
  CHECK(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &cart) == MPI_SUCCESS);
  int status = -1;
  MPI_Topo_test(cart, &status);
  CHECK(status == MPI_CART);
  MPI_Topo_test(MPI_COMM_WORLD, &status);
  CHECK(status == MPI_UNDEFINED);
  int nd = 0, gd[2], gp[2], coords[2];
  MPI_Cartdim_get(cart, &nd);
  MPI_Cart_get(cart, 2, gd, gp, coords);
  CHECK(nd == 2 && gd[0] == dims[0] && gd[1] == dims[1] && gp[0] == 0 && gp[1] == 1);
  CHECK(coords[0] == rank / dims[1] && coords[1] == rank % dims[1]); /* row-major */
  int back = -1;
  MPI_Cart_rank(cart, coords, &back);
  CHECK(back == rank);
  int ok = 1;
  for (int r = 0; r < size; ++r) {
    int c[2];
    MPI_Cart_coords(cart, r, 2, c);
    int rr = -1;
    MPI_Cart_rank(cart, c, &rr);
    ok &= rr == r;
  }
  CHECK(ok);
  /* Shifts: along the periodic dimension they wrap, along the other they
   * fall off the edge as MPI_PROC_NULL. */
  int src, dst;
  MPI_Cart_shift(cart, 1, 1, &src, &dst);
  CHECK(dst == coords[0] * dims[1] + (coords[1] + 1) % dims[1]);
  CHECK(src == coords[0] * dims[1] + (coords[1] + dims[1] - 1) % dims[1]);
  MPI_Cart_shift(cart, 0, 1, &src, &dst);
  CHECK(dst == (coords[0] + 1 < dims[0] ? rank + dims[1] : MPI_PROC_NULL));
  CHECK(src == (coords[0] > 0 ? rank - dims[1] : MPI_PROC_NULL));
  /* A halo exchange over the shift: each rank gets its left neighbour's rank. */
  MPI_Cart_shift(cart, 1, 1, &src, &dst);
  int from_left = -1;
  MPI_Sendrecv(&rank, 1, MPI_INT, dst, 0, &from_left, 1, MPI_INT, src, 0, cart, MPI_STATUS_IGNORE);
  CHECK(from_left == src);
  /* Periodic coordinates wrap in Cart_rank. */
  int wrapped[2] = {coords[0], coords[1] + dims[1]};
  MPI_Cart_rank(cart, wrapped, &back);
  CHECK(back == rank);

  /* Cart_sub: the rows. */
  MPI_Comm row;
  CHECK(MPI_Cart_sub(cart, (int[]){0, 1}, &row) == MPI_SUCCESS);
  int rsize = 0, rrank = -1;
  MPI_Comm_size(row, &rsize);
  MPI_Comm_rank(row, &rrank);
  CHECK(rsize == dims[1] && rrank == coords[1]);
  MPI_Cartdim_get(row, &nd);
  CHECK(nd == 1);
  int sum = 0;
  MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, row);
  int want = 0;
  for (int j = 0; j < dims[1]; ++j) want += coords[0] * dims[1] + j;
  CHECK(sum == want);
  MPI_Comm_free(&row);

  /* Comm_dup keeps the topology. */
  MPI_Comm dup;
  MPI_Comm_dup(cart, &dup);
  MPI_Topo_test(dup, &status);
  CHECK(status == MPI_CART);
  MPI_Comm_free(&dup);
  MPI_Comm_free(&cart);

  /* A grid smaller than the communicator: the rest get MPI_COMM_NULL. */
  if (size > 1) {
    int one[1] = {size - 1}, per[1] = {0};
    MPI_Comm part;
    CHECK(MPI_Cart_create(MPI_COMM_WORLD, 1, one, per, 0, &part) == MPI_SUCCESS);
    CHECK((rank == size - 1) == (part == MPI_COMM_NULL));
    if (part != MPI_COMM_NULL) MPI_Comm_free(&part);
  }

  /* Comm_split_type: every rank here shares this host. */
  MPI_Comm node;
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, size - rank, MPI_INFO_NULL,
                            &node) == MPI_SUCCESS);
  int nsize = 0, nrank = -1;
  MPI_Comm_size(node, &nsize);
  MPI_Comm_rank(node, &nrank);
  CHECK(nsize == size && nrank == size - 1 - rank); /* ordered by key */
  MPI_Comm_free(&node);
  CHECK(MPI_Comm_split_type(MPI_COMM_WORLD, MPI_UNDEFINED, 0, MPI_INFO_NULL, &node) == MPI_SUCCESS);
  CHECK(node == MPI_COMM_NULL);

  /* Alltoallw: an int to each even rank, a double to each odd one, at
   * byte displacements 64 apart. */
  int* sc = malloc(sizeof(int) * (size_t)size);
  int* sd = malloc(sizeof(int) * (size_t)size);
  int* rc = malloc(sizeof(int) * (size_t)size);
  int* rd = malloc(sizeof(int) * (size_t)size);
  MPI_Datatype* st = malloc(sizeof(MPI_Datatype) * (size_t)size);
  MPI_Datatype* rt = malloc(sizeof(MPI_Datatype) * (size_t)size);
  char* sbuf = malloc(64 * (size_t)size);
  char* rbuf = malloc(64 * (size_t)size);
  for (int p = 0; p < size; ++p) {
    sc[p] = 1, sd[p] = 64 * p, st[p] = p % 2 ? MPI_DOUBLE : MPI_INT;
    rc[p] = 1, rd[p] = 64 * p, rt[p] = rank % 2 ? MPI_DOUBLE : MPI_INT;
    if (p % 2) {
      double v = rank * 10.0 + p;
      memcpy(sbuf + 64 * p, &v, sizeof v);
    } else {
      int v = rank * 10 + p;
      memcpy(sbuf + 64 * p, &v, sizeof v);
    }
  }
  CHECK(MPI_Alltoallw(sbuf, sc, sd, st, rbuf, rc, rd, rt, MPI_COMM_WORLD) == MPI_SUCCESS);
  ok = 1;
  for (int p = 0; p < size; ++p) {
    if (rank % 2) {
      double v;
      memcpy(&v, rbuf + 64 * p, sizeof v);
      ok &= v == p * 10.0 + rank;
    } else {
      int v;
      memcpy(&v, rbuf + 64 * p, sizeof v);
      ok &= v == p * 10 + rank;
    }
  }
  CHECK(ok);

  /* A distributed graph: a ring, each rank hearing from its left
   * neighbour (weight = that rank + 1) and sending to its right one; the
   * queries give back what was given, a duplicate keeps it, and a
   * neighbour exchange over it reaches the right ranks. */
  {
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    const int src[1] = {left}, srcw[1] = {left + 1}, dst[1] = {right}, dstw[1] = {rank + 1};
    MPI_Comm ring, ring_dup;
    CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, srcw, 1, dst, dstw, MPI_INFO_NULL,
                                         0, &ring) == MPI_SUCCESS);
    MPI_Topo_test(ring, &status);
    CHECK(status == MPI_DIST_GRAPH);
    int indeg = -1, outdeg = -1, weighted = -1;
    CHECK(MPI_Dist_graph_neighbors_count(ring, &indeg, &outdeg, &weighted) == MPI_SUCCESS);
    CHECK(indeg == 1 && outdeg == 1 && weighted == 1);
    int gs[1] = {-1}, gsw[1] = {-1}, gdst[1] = {-1}, gdw[1] = {-1};
    CHECK(MPI_Dist_graph_neighbors(ring, 1, gs, gsw, 1, gdst, gdw) == MPI_SUCCESS);
    CHECK(gs[0] == left && gsw[0] == left + 1 && gdst[0] == right && gdw[0] == rank + 1);
    MPI_Comm_dup(ring, &ring_dup);
    MPI_Topo_test(ring_dup, &status);
    CHECK(status == MPI_DIST_GRAPH);
    int got = -1;
    MPI_Sendrecv(&rank, 1, MPI_INT, gdst[0], 5, &got, 1, MPI_INT, gs[0], 5, ring_dup,
                 MPI_STATUS_IGNORE);
    CHECK(got == left);
    MPI_Comm_free(&ring_dup);
    MPI_Comm_free(&ring);
    /* Unweighted, and a rank with no edges at all. */
    MPI_Comm lonely;
    CHECK(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 0, NULL, MPI_UNWEIGHTED, 0, NULL,
                                         MPI_UNWEIGHTED, MPI_INFO_NULL, 1, &lonely) == MPI_SUCCESS);
    CHECK(MPI_Dist_graph_neighbors_count(lonely, &indeg, &outdeg, &weighted) == MPI_SUCCESS);
    CHECK(indeg == 0 && outdeg == 0 && weighted == 0);
    MPI_Comm_free(&lonely);
  }

  /* Neighborhood collectives. On the ring graph (from the left, to the
   * right) and on a periodic 1-D grid (neighbours below then above; at 2
   * ranks both are the same rank, so only per-direction tags put each
   * block in its place). Each rank sends values naming itself and the
   * block, so a block in the wrong place or from the wrong rank shows. */
  {
    const int left = (rank + size - 1) % size, right = (rank + 1) % size;
    const int src[1] = {left}, dst[1] = {right};
    MPI_Comm ring, line;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, src, MPI_UNWEIGHTED, 1, dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &ring);
    int one_dim[1] = {size}, periodic[1] = {1};
    MPI_Cart_create(MPI_COMM_WORLD, 1, one_dim, periodic, 0, &line);
    int mine = 100 * rank, got[2] = {-1, -1};
    CHECK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, ring) == MPI_SUCCESS);
    CHECK(got[0] == 100 * left);
    CHECK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, line) == MPI_SUCCESS);
    CHECK(got[0] == 100 * left && got[1] == 100 * right);
    /* alltoall on the grid: block 0 goes down, block 1 goes up. */
    int blocks[2] = {100 * rank + 1, 100 * rank + 2};
    got[0] = got[1] = -1;
    CHECK(MPI_Neighbor_alltoall(blocks, 1, MPI_INT, got, 1, MPI_INT, line) == MPI_SUCCESS);
    CHECK(got[0] == 100 * left + 2 && got[1] == 100 * right + 1);
    /* alltoallv with the blocks swapped in memory, and allgatherv. */
    int swapped[2] = {blocks[1], blocks[0]}, counts[2] = {1, 1}, sd[2] = {1, 0}, rd[2] = {1, 0};
    got[0] = got[1] = -1;
    CHECK(MPI_Neighbor_alltoallv(swapped, counts, sd, MPI_INT, got, counts, rd, MPI_INT, line) ==
          MPI_SUCCESS);
    CHECK(got[1] == 100 * left + 2 && got[0] == 100 * right + 1);
    got[0] = got[1] = -1;
    CHECK(MPI_Neighbor_allgatherv(&mine, 1, MPI_INT, got, counts, rd, MPI_INT, line) ==
          MPI_SUCCESS);
    CHECK(got[1] == 100 * left && got[0] == 100 * right);
    /* alltoallw: an int down, a double up, byte displacements. */
    unsigned char out[16], in[16];
    const int iv = 100 * rank + 7;
    const double dv = rank + 0.5;
    memcpy(out, &iv, sizeof iv);
    memcpy(out + 8, &dv, sizeof dv);
    const MPI_Aint sdw[2] = {0, 8}, rdw[2] = {8, 0};
    const MPI_Datatype st[2] = {MPI_INT, MPI_DOUBLE}, rt[2] = {MPI_DOUBLE, MPI_INT};
    memset(in, 0, sizeof in);
    CHECK(MPI_Neighbor_alltoallw(out, counts, sdw, st, in, counts, rdw, rt, line) == MPI_SUCCESS);
    double from_below;
    int from_above;
    memcpy(&from_below, in + 8, sizeof from_below);
    memcpy(&from_above, in, sizeof from_above);
    CHECK(from_below == left + 0.5 && from_above == 100 * right + 7);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(tw_class(MPI_Neighbor_alltoall(blocks, 1, MPI_INT, got, 1, MPI_INT, MPI_COMM_WORLD)) ==
          MPI_ERR_TOPOLOGY);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_free(&ring);
    MPI_Comm_free(&line);
  }

  /* Errors under MPI_ERRORS_RETURN. */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  {
    int indeg, outdeg, weighted;
    CHECK(tw_class(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &indeg, &outdeg, &weighted)) ==
          MPI_ERR_TOPOLOGY);
    const int bad[1] = {size};
    MPI_Comm none2;
    CHECK(tw_class(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, bad, MPI_UNWEIGHTED, 0, NULL,
                                                  MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &none2)) ==
          MPI_ERR_RANK);
  }
  int nd2 = 0;
  CHECK(tw_class(MPI_Cartdim_get(MPI_COMM_WORLD, &nd2)) == MPI_ERR_TOPOLOGY);
  CHECK(tw_class(MPI_Dims_create(7, 2, (int[]){2, 0})) == MPI_ERR_DIMS);
  int too_big[1] = {size + 1}, per1[1] = {0};
  MPI_Comm none;
  CHECK(tw_class(MPI_Cart_create(MPI_COMM_WORLD, 1, too_big, per1, 0, &none)) == MPI_ERR_DIMS);
  CHECK(tw_class(MPI_Comm_split_type(MPI_COMM_WORLD, 99, 0, MPI_INFO_NULL, &none)) == MPI_ERR_ARG);
  /* Graphs (MPI-1): a ring of every rank but the last (so one rank is left
   * out), each node's neighbours left then right; its queries, a neighbour
   * allgather over it, the map calls, and bad graphs refused. */
  {
    const int nodes = size > 1 ? size - 1 : 1;
    int* index = malloc(sizeof(int) * (size_t)nodes);
    int* edges = malloc(sizeof(int) * 2 * (size_t)nodes);
    for (int i = 0; i < nodes; ++i) {
      index[i] = 2 * (i + 1);
      edges[2 * i] = (i + nodes - 1) % nodes;
      edges[2 * i + 1] = (i + 1) % nodes;
    }
    int mapped = -2;
    CHECK(MPI_Graph_map(MPI_COMM_WORLD, nodes, index, edges, &mapped) == MPI_SUCCESS);
    CHECK(mapped == (rank < nodes ? rank : MPI_UNDEFINED));
    MPI_Comm graph;
    CHECK(MPI_Graph_create(MPI_COMM_WORLD, nodes, index, edges, 1, &graph) == MPI_SUCCESS);
    CHECK((graph == MPI_COMM_NULL) == (rank >= nodes));
    if (graph != MPI_COMM_NULL) {
      int status = -1, nn = -1, ne = -1, count = -1, me = -1;
      MPI_Comm_rank(graph, &me);
      CHECK(me == rank);
      CHECK(MPI_Topo_test(graph, &status) == MPI_SUCCESS && status == MPI_GRAPH);
      CHECK(MPI_Graphdims_get(graph, &nn, &ne) == MPI_SUCCESS && nn == nodes && ne == 2 * nodes);
      int* index_back = malloc(sizeof(int) * (size_t)nodes);
      int* edges_back = malloc(sizeof(int) * 2 * (size_t)nodes);
      CHECK(MPI_Graph_get(graph, nodes, 2 * nodes, index_back, edges_back) == MPI_SUCCESS);
      CHECK(memcmp(index_back, index, sizeof(int) * (size_t)nodes) == 0);
      CHECK(memcmp(edges_back, edges, sizeof(int) * 2 * (size_t)nodes) == 0);
      const int last = nodes - 1;
      CHECK(MPI_Graph_neighbors_count(graph, last, &count) == MPI_SUCCESS && count == 2);
      int nb[2] = {-1, -1};
      CHECK(MPI_Graph_neighbors(graph, last, 2, nb) == MPI_SUCCESS);
      CHECK(nb[0] == (last + nodes - 1) % nodes && nb[1] == 0 % nodes);
      /* Neighbours in MPI_Graph_neighbors' order: left's rank, then right's. */
      int mine = 100 + rank, got[2] = {-1, -1};
      CHECK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, got, 1, MPI_INT, graph) == MPI_SUCCESS);
      CHECK(got[0] == 100 + (rank + nodes - 1) % nodes && got[1] == 100 + (rank + 1) % nodes);
      MPI_Comm graph_dup;
      CHECK(MPI_Comm_dup(graph, &graph_dup) == MPI_SUCCESS);
      CHECK(MPI_Topo_test(graph_dup, &status) == MPI_SUCCESS && status == MPI_GRAPH);
      CHECK(tw_class(MPI_Graph_neighbors(graph, nodes, 2, nb)) == MPI_ERR_RANK);
      CHECK(tw_class(MPI_Cartdim_get(graph, &nn)) == MPI_ERR_TOPOLOGY);
      MPI_Comm_free(&graph_dup);
      MPI_Comm_free(&graph);
      free(index_back), free(edges_back);
    }
    int cart_rank = -2, dims1[1] = {nodes}, per0[1] = {1};
    CHECK(MPI_Cart_map(MPI_COMM_WORLD, 1, dims1, per0, &cart_rank) == MPI_SUCCESS);
    CHECK(cart_rank == (rank < nodes ? rank : MPI_UNDEFINED));
    CHECK(tw_class(MPI_Graphdims_get(MPI_COMM_WORLD, &mapped, &mapped)) == MPI_ERR_TOPOLOGY);
    MPI_Comm none3;
    edges[0] = nodes; /* not a node */
    CHECK(tw_class(MPI_Graph_create(MPI_COMM_WORLD, nodes, index, edges, 0, &none3)) ==
          MPI_ERR_RANK);
    edges[0] = 0;
    CHECK(tw_class(MPI_Graph_create(MPI_COMM_WORLD, size + 1, index, edges, 0, &none3)) ==
          MPI_ERR_DIMS);
    if (nodes > 1) {
      index[1] = index[0] - 1; /* decreasing */
      CHECK(tw_class(MPI_Graph_map(MPI_COMM_WORLD, nodes, index, edges, &mapped)) == MPI_ERR_ARG);
    }
    free(index), free(edges);
  }
  /* The general MPI_Dist_graph_create: the ring left -> me -> right, named
   * once by each edge's source (weighted) and once all by rank 0
   * (unweighted); both give every rank the same neighbours. */
  for (int by_root = 0; by_root < 2; ++by_root) {
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int* srcs = malloc(sizeof(int) * (size_t)size);
    int* degs = malloc(sizeof(int) * (size_t)size);
    int* dsts = malloc(sizeof(int) * (size_t)size);
    int n = 0;
    int weight = 10 + rank;
    if (!by_root) {
      srcs[0] = rank, degs[0] = 1, dsts[0] = right, n = 1;
    } else if (rank == 0) {
      for (int k = 0; k < size; ++k) srcs[k] = k, degs[k] = 1, dsts[k] = (k + 1) % size;
      n = size;
    }
    MPI_Comm dg;
    CHECK(MPI_Dist_graph_create(MPI_COMM_WORLD, n, srcs, degs, dsts,
                                by_root ? MPI_UNWEIGHTED : &weight, MPI_INFO_NULL, 0,
                                &dg) == MPI_SUCCESS);
    int indeg = -1, outdeg = -1, weighted = -1, status = -1;
    CHECK(MPI_Topo_test(dg, &status) == MPI_SUCCESS && status == MPI_DIST_GRAPH);
    CHECK(MPI_Dist_graph_neighbors_count(dg, &indeg, &outdeg, &weighted) == MPI_SUCCESS);
    CHECK(indeg == 1 && outdeg == 1 && weighted == !by_root);
    int from = -1, from_w = -1, toward = -1, toward_w = -1;
    CHECK(MPI_Dist_graph_neighbors(dg, 1, &from, &from_w, 1, &toward, &toward_w) == MPI_SUCCESS);
    CHECK(from == left && toward == right);
    if (!by_root) CHECK(from_w == 10 + left && toward_w == 10 + rank);
    int mine = 100 + rank, got = -1;
    CHECK(MPI_Neighbor_allgather(&mine, 1, MPI_INT, &got, 1, MPI_INT, dg) == MPI_SUCCESS);
    CHECK(got == 100 + left);
    MPI_Comm_free(&dg);
    free(srcs), free(degs), free(dsts);
  }
  {
    const int bad_src[1] = {size}, one[1] = {1}, zero[1] = {0};
    MPI_Comm none4;
    CHECK(tw_class(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, bad_src, one, zero, MPI_UNWEIGHTED,
                                         MPI_INFO_NULL, 0, &none4)) == MPI_ERR_RANK);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);

  free(sc), free(sd), free(rc), free(rd), free(st), free(rt), free(sbuf), free(rbuf);
  return tw_finish("topologies");
}
