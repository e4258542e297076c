// Process topologies (MPI-3.1 §7.5): MPI_Dims_create, MPI_Cart_create and
// the calls that read one, MPI_Cart_sub, MPI_Cart_map, graphs (MPI-1's
// MPI_Graph_create, its queries and MPI_Graph_map), distributed graphs given
// by each rank's adjacency or by any rank's edges
// (MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create) and their
// queries, MPI_Topo_test. A topology communicator is an ordinary one (a
// split of the old, `reorder` ignored: ranks keep their order, which the
// map calls say too) with its topology in its CommEntry; the general
// MPI_Dist_graph_create first sends each edge to both of its ends.
#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <vector>

#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

Status dims_error(std::string message) {
  return {ErrorCode::kInvalidDims, std::move(message)};
}

// The topology `member` of comm's entry, or MPI_ERR_TOPOLOGY naming `what`.
template <typename Topology>
Result<const Topology*> topology_of(MPI_Comm comm, std::optional<Topology> CommEntry::*member,
                                    const char* what) {
  TAGWIRE_RETURN_IF_ERROR(comm_of(comm).status());
  const CommEntry* entry = find_comm(comm);
  if (entry == nullptr || !(entry->*member)) {
    return Status(ErrorCode::kInvalidTopology, std::string("the communicator has no ") + what);
  }
  return &*(entry->*member);
}

Result<const CommEntry::Cartesian*> cart_of(MPI_Comm comm) {
  return topology_of(comm, &CommEntry::cart, "Cartesian topology");
}

Result<const CommEntry::DistGraph*> dist_graph_of(MPI_Comm comm) {
  return topology_of(comm, &CommEntry::dist_graph, "distributed graph");
}

Result<const CommEntry::Graph*> graph_of(MPI_Comm comm) {
  return topology_of(comm, &CommEntry::graph, "graph topology");
}

// MPI_Graph_create's and MPI_Graph_map's arguments: index non-decreasing
// from 0, every edge a node of the graph.
Status check_graph(int nnodes, const int index[], const int edges[], int ranks) {
  if (nnodes < 0) return dims_error("nnodes " + std::to_string(nnodes) + " is negative");
  if (nnodes > ranks) {
    return dims_error("the graph has " + std::to_string(nnodes) +
                      " nodes, more than the communicator's " + std::to_string(ranks) + " ranks");
  }
  if (nnodes > 0 && index == nullptr) return {ErrorCode::kInvalidArgument, "index is NULL"};
  int before = 0;
  for (int i = 0; i < nnodes; ++i) {
    if (index[i] < before) {
      return {ErrorCode::kInvalidArgument, "index[" + std::to_string(i) +
                                               "] = " + std::to_string(index[i]) +
                                               " is below index[" + std::to_string(i - 1) + "]"};
    }
    before = index[i];
  }
  if (before > 0 && edges == nullptr) return {ErrorCode::kInvalidArgument, "edges is NULL"};
  for (int e = 0; e < before; ++e) {
    if (edges[e] < 0 || edges[e] >= nnodes) {
      return {ErrorCode::kInvalidRank,
              "edges[" + std::to_string(e) + "] = " + std::to_string(edges[e]) +
                  " is not a node of a " + std::to_string(nnodes) + "-node graph"};
    }
  }
  return Status::ok();
}

// A node of `g` named by the caller, or MPI_ERR_RANK.
Status check_node(const CommEntry::Graph& g, int rank) {
  if (rank < 0 || rank >= static_cast<int>(g.index.size())) {
    return {ErrorCode::kInvalidRank, "rank " + std::to_string(rank) + " is not a node of a " +
                                         std::to_string(g.index.size()) + "-node graph"};
  }
  return Status::ok();
}

// Row-major: the last dimension varies fastest.
int rank_of(const CommEntry::Cartesian& cart, const std::vector<int>& coords) {
  int rank = 0;
  for (std::size_t i = 0; i < cart.dims.size(); ++i) rank = rank * cart.dims[i] + coords[i];
  return rank;
}

std::vector<int> coords_of(const CommEntry::Cartesian& cart, int rank) {
  std::vector<int> coords(cart.dims.size());
  for (std::size_t i = cart.dims.size(); i-- > 0;) {
    coords[i] = rank % cart.dims[i];
    rank /= cart.dims[i];
  }
  return coords;
}

// A coordinate along dimension d, wrapped where the grid is periodic;
// -1 if it falls off a non-periodic edge.
int wrap(const CommEntry::Cartesian& cart, std::size_t d, int c) {
  const int n = cart.dims[d];
  if (cart.periods[d] != 0) return ((c % n) + n) % n;
  return c >= 0 && c < n ? c : -1;
}

Status check_dims(int ndims, const int dims[]) {
  if (ndims < 0) return dims_error("ndims " + std::to_string(ndims) + " is negative");
  if (ndims > 0 && dims == nullptr) return {ErrorCode::kInvalidArgument, "dims is NULL"};
  return Status::ok();
}

// The nodes of a grid of `dims` (each above 0), at most `ranks` of them.
Result<int> grid_nodes(int ndims, const int dims[], int ranks) {
  TAGWIRE_RETURN_IF_ERROR(check_dims(ndims, dims));
  long long nodes = 1;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] <= 0) return dims_error("dims[" + std::to_string(i) + "] <= 0");
    nodes *= dims[i];
    if (nodes > ranks) {
      return dims_error("the grid has more nodes than the communicator's " + std::to_string(ranks) +
                        " ranks");
    }
  }
  return static_cast<int>(nodes);
}

// Splits `comm` (ranks 0 .. nodes-1 join, in order, the rest get
// MPI_COMM_NULL) and gives the new communicator the grid.
// Splits `comm` (color MPI_UNDEFINED: this rank gets MPI_COMM_NULL) and
// gives the new communicator `topology` in its entry's `member`.
template <typename Topology>
int make_topology(MPI_Comm comm, engine::Communicator* c, int color, int key,
                  std::optional<Topology> CommEntry::*member, Topology topology,
                  MPI_Comm* newcomm) {
  auto split = state().engine->comm_split(c, color, key);
  TW_MPI_TRY(comm, split.status());
  if (*split == nullptr) {
    *newcomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
  }
  *newcomm = add_comm(*split, comm);
  find_comm(*newcomm)->*member = std::move(topology);
  return MPI_SUCCESS;
}

// The intracommunicator behind `comm`, for a call that makes a topology.
Result<engine::Communicator*> intra_of(MPI_Comm comm, const char* topology) {
  auto c = comm_of(comm);
  if (!c) return c.status();
  if ((*c)->inter()) {
    return Status(ErrorCode::kInvalidComm,
                  std::string("a ") + topology + " needs an intracommunicator");
  }
  return *c;
}

// What both MPI_Dist_graph_create calls check first: the intracommunicator
// behind `comm_old`, and somewhere to put the new one.
Result<engine::Communicator*> dist_graph_base(MPI_Comm comm_old, MPI_Comm* comm_dist_graph) {
  auto c = intra_of(comm_old, "graph topology");
  if (!c) return c.status();
  if (comm_dist_graph == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "comm_dist_graph is NULL");
  }
  return *c;
}

}  // namespace

extern "C" {

int tagwire_mpi_unweighted[1];
int tagwire_mpi_weights_empty[1];

// Fills the zero entries of dims so that the product is nnodes, the sizes
// as close to each other as they can be, in non-increasing order.
int MPI_Dims_create(int nnodes, int ndims, int dims[]) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_dims(ndims, dims));
  if (nnodes < 1) TW_MPI_TRY(MPI_COMM_WORLD, dims_error("nnodes must be at least 1"));
  long long fixed = 1;
  int free_dims = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] < 0) TW_MPI_TRY(MPI_COMM_WORLD, dims_error("dims[" + std::to_string(i) + "] < 0"));
    if (dims[i] == 0) {
      ++free_dims;
    } else {
      fixed *= dims[i];
    }
  }
  if (nnodes % fixed != 0) {
    TW_MPI_TRY(MPI_COMM_WORLD,
               dims_error(std::to_string(nnodes) + " nodes do not divide into " +
                          "the given sizes (product " + std::to_string(fixed) + ")"));
  }
  int left = static_cast<int>(nnodes / fixed);
  if (free_dims == 0) {
    if (left != 1) TW_MPI_TRY(MPI_COMM_WORLD, dims_error("the sizes do not multiply to nnodes"));
    return MPI_SUCCESS;
  }
  // The prime factors, largest first, each given to the dimension that is
  // smallest so far: sizes as even as the factors allow.
  std::vector<int> primes;
  for (int p = 2; static_cast<long long>(p) * p <= left; ++p) {
    while (left % p == 0) {
      primes.push_back(p);
      left /= p;
    }
  }
  if (left > 1) primes.push_back(left);
  std::vector<int> sizes(static_cast<std::size_t>(free_dims), 1);
  for (auto it = primes.rbegin(); it != primes.rend(); ++it) {
    *std::min_element(sizes.begin(), sizes.end()) *= *it;
  }
  std::sort(sizes.begin(), sizes.end(), std::greater<>());
  std::size_t next = 0;
  for (int i = 0; i < ndims; ++i) {
    if (dims[i] == 0) dims[i] = sizes[next++];
  }
  return MPI_SUCCESS;
}

int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder,
                    MPI_Comm* comm_cart) {
  (void)reorder;  // ranks keep their order: a valid choice of the standard's
  auto c = intra_of(comm, "Cartesian topology");
  TW_MPI_TRY(comm, c.status());
  TW_MPI_TRY(comm, check_dims(ndims, dims));
  if (ndims > 0 && periods == nullptr) {
    TW_MPI_TRY(comm, Status(ErrorCode::kInvalidArgument, "periods is NULL"));
  }
  auto nodes = grid_nodes(ndims, dims, (*c)->size());
  TW_MPI_TRY(comm, nodes.status());
  CommEntry::Cartesian cart;
  cart.dims.assign(dims, dims + ndims);
  for (int i = 0; i < ndims; ++i) cart.periods.push_back(periods[i] != 0 ? 1 : 0);
  const int me = (*c)->rank();
  return make_topology(comm, *c, me < *nodes ? 0 : MPI_UNDEFINED, me, &CommEntry::cart,
                       std::move(cart), comm_cart);
}

int MPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  auto cart = cart_of(comm);
  TW_MPI_TRY(comm, cart.status());
  *ndims = static_cast<int>((*cart)->dims.size());
  return MPI_SUCCESS;
}

int MPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  auto cart = cart_of(comm);
  TW_MPI_TRY(comm, cart.status());
  const auto& g = **cart;
  const auto mine = coords_of(g, (*comm_of(comm))->rank());
  const int n = std::min(maxdims, static_cast<int>(g.dims.size()));
  for (int i = 0; i < n; ++i) {
    const auto d = static_cast<std::size_t>(i);
    if (dims != nullptr) dims[i] = g.dims[d];
    if (periods != nullptr) periods[i] = g.periods[d];
    if (coords != nullptr) coords[i] = mine[d];
  }
  return MPI_SUCCESS;
}

int MPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  auto cart = cart_of(comm);
  TW_MPI_TRY(comm, cart.status());
  const auto& g = **cart;
  std::vector<int> at(g.dims.size());
  for (std::size_t d = 0; d < g.dims.size(); ++d) {
    at[d] = wrap(g, d, coords[d]);
    if (at[d] < 0) {
      TW_MPI_TRY(comm, Status(ErrorCode::kInvalidRank, "coordinate " + std::to_string(coords[d]) +
                                                           " of dimension " + std::to_string(d) +
                                                           " is outside a non-periodic size of " +
                                                           std::to_string(g.dims[d])));
    }
  }
  *rank = rank_of(g, at);
  return MPI_SUCCESS;
}

int MPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  auto cart = cart_of(comm);
  TW_MPI_TRY(comm, cart.status());
  const auto& g = **cart;
  if (rank < 0 || rank >= (*comm_of(comm))->size()) {
    TW_MPI_TRY(comm, Status(ErrorCode::kInvalidRank,
                            "rank " + std::to_string(rank) + " is not in the grid"));
  }
  const auto at = coords_of(g, rank);
  for (int i = 0; i < std::min(maxdims, static_cast<int>(at.size())); ++i) {
    coords[i] = at[static_cast<std::size_t>(i)];
  }
  return MPI_SUCCESS;
}

int MPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  auto cart = cart_of(comm);
  TW_MPI_TRY(comm, cart.status());
  const auto& g = **cart;
  if (direction < 0 || direction >= static_cast<int>(g.dims.size())) {
    TW_MPI_TRY(comm, dims_error("direction " + std::to_string(direction) + " of a " +
                                std::to_string(g.dims.size()) + "-dimensional grid"));
  }
  const auto d = static_cast<std::size_t>(direction);
  auto at = coords_of(g, (*comm_of(comm))->rank());
  const int here = at[d];
  auto neighbour = [&](int step) {
    at[d] = wrap(g, d, here + step);
    return at[d] < 0 ? MPI_PROC_NULL : rank_of(g, at);
  };
  *rank_dest = neighbour(disp);
  *rank_source = neighbour(-disp);
  return MPI_SUCCESS;
}

int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  auto cart = cart_of(comm);
  TW_MPI_TRY(comm, cart.status());
  const CommEntry::Cartesian g = **cart;  // a copy: the split adds entries
  auto c = comm_of(comm);
  const auto at = coords_of(g, (*c)->rank());
  // Ranks that agree on every dropped coordinate share a subgrid (color);
  // within it they are ordered by the kept coordinates (key).
  int color = 0, key = 0;
  CommEntry::Cartesian sub;
  for (std::size_t d = 0; d < g.dims.size(); ++d) {
    if (remain_dims[d] != 0) {
      key = key * g.dims[d] + at[d];
      sub.dims.push_back(g.dims[d]);
      sub.periods.push_back(g.periods[d]);
    } else {
      color = color * g.dims[d] + at[d];
    }
  }
  return make_topology(comm, *c, color, key, &CommEntry::cart, std::move(sub), newcomm);
}

// Where this rank would be in a grid of `dims`: ranks keep their order, so
// its own rank, or MPI_UNDEFINED beyond the grid's nodes.
int MPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  (void)periods;  // the order does not depend on them
  auto c = intra_of(comm, "Cartesian topology");
  TW_MPI_TRY(comm, c.status());
  auto nodes = grid_nodes(ndims, dims, (*c)->size());
  TW_MPI_TRY(comm, nodes.status());
  *newrank = (*c)->rank() < *nodes ? (*c)->rank() : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                     int reorder, MPI_Comm* comm_graph) {
  (void)reorder;  // ranks keep their order: a valid choice of the standard's
  auto c = intra_of(comm_old, "graph topology");
  TW_MPI_TRY(comm_old, c.status());
  if (comm_graph == nullptr) {
    TW_MPI_TRY(comm_old, Status(ErrorCode::kInvalidArgument, "comm_graph is NULL"));
  }
  TW_MPI_TRY(comm_old, check_graph(nnodes, index, edges, (*c)->size()));
  CommEntry::Graph graph;
  graph.index.assign(index, index + nnodes);
  if (nnodes > 0) graph.edges.assign(edges, edges + index[nnodes - 1]);
  const int me = (*c)->rank();
  return make_topology(comm_old, *c, me < nnodes ? 0 : MPI_UNDEFINED, me, &CommEntry::graph,
                       std::move(graph), comm_graph);
}

int MPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  auto graph = graph_of(comm);
  TW_MPI_TRY(comm, graph.status());
  *nnodes = static_cast<int>((*graph)->index.size());
  *nedges = static_cast<int>((*graph)->edges.size());
  return MPI_SUCCESS;
}

int MPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  auto graph = graph_of(comm);
  TW_MPI_TRY(comm, graph.status());
  const auto& g = **graph;
  // As much as the caller has room for.
  std::copy_n(g.index.begin(), std::clamp(maxindex, 0, static_cast<int>(g.index.size())), index);
  std::copy_n(g.edges.begin(), std::clamp(maxedges, 0, static_cast<int>(g.edges.size())), edges);
  return MPI_SUCCESS;
}

int MPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  auto graph = graph_of(comm);
  TW_MPI_TRY(comm, graph.status());
  TW_MPI_TRY(comm, check_node(**graph, rank));
  *nneighbors = static_cast<int>((*graph)->neighbors(rank).size());
  return MPI_SUCCESS;
}

int MPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  auto graph = graph_of(comm);
  TW_MPI_TRY(comm, graph.status());
  TW_MPI_TRY(comm, check_node(**graph, rank));
  const auto mine = (*graph)->neighbors(rank);
  std::copy_n(mine.begin(), std::clamp(maxneighbors, 0, static_cast<int>(mine.size())), neighbors);
  return MPI_SUCCESS;
}

// As MPI_Cart_map: ranks keep their order.
int MPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  auto c = intra_of(comm, "graph topology");
  TW_MPI_TRY(comm, c.status());
  TW_MPI_TRY(comm, check_graph(nnodes, index, edges, (*c)->size()));
  *newrank = (*c)->rank() < nnodes ? (*c)->rank() : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int MPI_Topo_test(MPI_Comm comm, int* status) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  const CommEntry* entry = find_comm(comm);
  *status = entry == nullptr    ? MPI_UNDEFINED
            : entry->cart       ? MPI_CART
            : entry->graph      ? MPI_GRAPH
            : entry->dist_graph ? MPI_DIST_GRAPH
                                : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                   const int sourceweights[], int outdegree,
                                   const int destinations[], const int destweights[], MPI_Info info,
                                   int reorder, MPI_Comm* comm_dist_graph) {
  (void)info;     // hints only
  (void)reorder;  // ranks keep their order: a valid choice of the standard's
  auto c = dist_graph_base(comm_old, comm_dist_graph);
  TW_MPI_TRY(comm_old, c.status());
  // MPI_UNWEIGHTED on either side makes the graph unweighted (the standard
  // asks for both or neither); MPI_WEIGHTS_EMPTY stands for no weights of
  // no edges.
  const bool weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
  CommEntry::DistGraph graph;
  graph.weighted = weighted;
  const int size = (*c)->size();
  auto take = [&](const char* what, int degree, const int ranks[], const int weights[],
                  std::vector<int>* into, std::vector<int>* weights_into) -> Status {
    if (degree < 0) {
      return {ErrorCode::kInvalidArgument,
              std::string(what) + " degree " + std::to_string(degree) + " is negative"};
    }
    if (degree > 0 && ranks == nullptr) {
      return {ErrorCode::kInvalidArgument, std::string(what) + " ranks are NULL"};
    }
    const bool no_weights = weights == nullptr || weights == MPI_WEIGHTS_EMPTY;
    if (weighted && degree > 0 && no_weights) {
      return {ErrorCode::kInvalidArgument, std::string(what) + " weights are missing"};
    }
    for (int i = 0; i < degree; ++i) {
      if (ranks[i] < 0 || ranks[i] >= size) {
        return {ErrorCode::kInvalidRank, std::string(what) + " rank " + std::to_string(ranks[i]) +
                                             " is outside a communicator of size " +
                                             std::to_string(size)};
      }
      if (weighted && weights[i] < 0) {
        return {ErrorCode::kInvalidArgument,
                std::string(what) + " weight " + std::to_string(weights[i]) + " is negative"};
      }
      into->push_back(ranks[i]);
      if (weighted) weights_into->push_back(weights[i]);
    }
    return Status::ok();
  };
  TW_MPI_TRY(comm_old, take("source", indegree, sources, sourceweights, &graph.sources,
                            &graph.source_weights));
  TW_MPI_TRY(comm_old, take("destination", outdegree, destinations, destweights,
                            &graph.destinations, &graph.dest_weights));
  return make_topology(comm_old, *c, 0, (*c)->rank(), &CommEntry::dist_graph, std::move(graph),
                       comm_dist_graph);
}

// The general form: any rank may name any edge. Each edge goes to both
// its ends (an out-edge to its source, an in-edge to its destination) in
// one all-to-all; a rank's edges are then in the order of the ranks that
// named them, and each rank's in the order it gave them (MPI_Dist_graph_neighbors
// and the neighborhood collectives use that order).
int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                          const int destinations[], const int weights[], MPI_Info info, int reorder,
                          MPI_Comm* comm_dist_graph) {
  (void)info;     // hints only
  (void)reorder;  // ranks keep their order: a valid choice of the standard's
  auto c = dist_graph_base(comm_old, comm_dist_graph);
  TW_MPI_TRY(comm_old, c.status());
  if (n < 0) {
    TW_MPI_TRY(comm_old,
               Status(ErrorCode::kInvalidArgument, "n = " + std::to_string(n) + " is negative"));
  }
  if (n > 0 && (sources == nullptr || degrees == nullptr)) {
    TW_MPI_TRY(comm_old, Status(ErrorCode::kInvalidArgument, "sources or degrees is NULL"));
  }
  const int size = (*c)->size();
  const bool weighted = weights != MPI_UNWEIGHTED;
  auto out_of_range = [&](const char* what, int r) {
    return Status(ErrorCode::kInvalidRank, std::string(what) + " " + std::to_string(r) +
                                               " is outside a communicator of size " +
                                               std::to_string(size));
  };
  // Per peer: (kind, other end, weight) triples; kind 0 = the peer's
  // out-edge, 1 = its in-edge.
  std::vector<std::vector<int>> to(static_cast<std::size_t>(size));
  int edge = 0;
  for (int i = 0; i < n; ++i) {
    if (sources[i] < 0 || sources[i] >= size)
      TW_MPI_TRY(comm_old, out_of_range("source", sources[i]));
    if (degrees[i] < 0) {
      TW_MPI_TRY(comm_old, Status(ErrorCode::kInvalidArgument,
                                  "degrees[" + std::to_string(i) + "] is negative"));
    }
    if (degrees[i] > 0 && destinations == nullptr) {
      TW_MPI_TRY(comm_old, Status(ErrorCode::kInvalidArgument, "destinations is NULL"));
    }
    if (weighted && degrees[i] > 0 && (weights == nullptr || weights == MPI_WEIGHTS_EMPTY)) {
      TW_MPI_TRY(comm_old, Status(ErrorCode::kInvalidArgument, "weights are missing"));
    }
    for (int k = 0; k < degrees[i]; ++k, ++edge) {
      const int d = destinations[edge];
      if (d < 0 || d >= size) TW_MPI_TRY(comm_old, out_of_range("destination", d));
      const int w = weighted ? weights[edge] : 0;
      if (w < 0) {
        TW_MPI_TRY(comm_old, Status(ErrorCode::kInvalidArgument,
                                    "weight " + std::to_string(w) + " is negative"));
      }
      auto& at_source = to[static_cast<std::size_t>(sources[i])];
      at_source.insert(at_source.end(), {0, d, w});
      auto& at_destination = to[static_cast<std::size_t>(d)];
      at_destination.insert(at_destination.end(), {1, sources[i], w});
    }
  }
  std::vector<int> send_counts(static_cast<std::size_t>(size)), send_displs(send_counts.size());
  std::vector<int> flat;
  for (std::size_t r = 0; r < to.size(); ++r) {
    send_displs[r] = static_cast<int>(flat.size());
    send_counts[r] = static_cast<int>(to[r].size());
    flat.insert(flat.end(), to[r].begin(), to[r].end());
  }
  std::vector<int> receive_counts(send_counts.size()), receive_displs(send_counts.size());
  int rc =
      PMPI_Alltoall(send_counts.data(), 1, MPI_INT, receive_counts.data(), 1, MPI_INT, comm_old);
  if (rc != MPI_SUCCESS) return rc;
  int total = 0;
  for (std::size_t r = 0; r < receive_counts.size(); ++r) {
    receive_displs[r] = total;
    total += receive_counts[r];
  }
  std::vector<int> mine(static_cast<std::size_t>(total));
  rc = PMPI_Alltoallv(flat.data(), send_counts.data(), send_displs.data(), MPI_INT, mine.data(),
                      receive_counts.data(), receive_displs.data(), MPI_INT, comm_old);
  if (rc != MPI_SUCCESS) return rc;
  CommEntry::DistGraph graph;
  graph.weighted = weighted;
  for (std::size_t i = 0; i + 2 < mine.size(); i += 3) {
    const bool in = mine[i] == 1;
    (in ? graph.sources : graph.destinations).push_back(mine[i + 1]);
    if (weighted) (in ? graph.source_weights : graph.dest_weights).push_back(mine[i + 2]);
  }
  return make_topology(comm_old, *c, 0, (*c)->rank(), &CommEntry::dist_graph, std::move(graph),
                       comm_dist_graph);
}

int MPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  auto graph = dist_graph_of(comm);
  TW_MPI_TRY(comm, graph.status());
  *indegree = static_cast<int>((*graph)->sources.size());
  *outdegree = static_cast<int>((*graph)->destinations.size());
  *weighted = (*graph)->weighted ? 1 : 0;
  return MPI_SUCCESS;
}

int MPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                             int maxoutdegree, int destinations[], int destweights[]) {
  auto graph = dist_graph_of(comm);
  TW_MPI_TRY(comm, graph.status());
  const auto& g = **graph;
  // As many as the caller has room for, in the order they were given.
  auto give = [&](const std::vector<int>& ranks, const std::vector<int>& weights, int room,
                  int out[], int out_weights[]) {
    const std::size_t n =
        std::min<std::size_t>(ranks.size(), static_cast<std::size_t>(std::max(room, 0)));
    const bool with_weights =
        g.weighted && out_weights != MPI_UNWEIGHTED && out_weights != MPI_WEIGHTS_EMPTY;
    for (std::size_t i = 0; i < n; ++i) {
      out[i] = ranks[i];
      if (with_weights) out_weights[i] = weights[i];
    }
  };
  give(g.sources, g.source_weights, maxindegree, sources, sourceweights);
  give(g.destinations, g.dest_weights, maxoutdegree, destinations, destweights);
  return MPI_SUCCESS;
}

}  // extern "C"
