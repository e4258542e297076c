// MPI groups: ordered sets of processes, kept as the world ranks of their
// members (MPI_GROUP_EMPTY is the empty set, never stored). Group
// operations are local; only communicator creation from a group talks.
#include <algorithm>
#include <string>
#include <vector>

#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

Result<const std::vector<int>*> group_of(MPI_Group group) {
  static const std::vector<int> empty;
  if (group == MPI_GROUP_EMPTY) return &empty;
  const std::vector<int>* members = state().groups.find(group);
  if (members == nullptr) {
    return Status(ErrorCode::kInvalidGroup,
                  "group handle " + std::to_string(group) + " is not a valid group");
  }
  return members;
}

MPI_Group make_group(std::vector<int> members) {
  return members.empty() ? MPI_GROUP_EMPTY : state().groups.add(std::move(members));
}

bool contains(const std::vector<int>& members, int world_rank) {
  return std::find(members.begin(), members.end(), world_rank) != members.end();
}

// The ranks a range list names, in order: (first, last, stride) triplets,
// each rank in the group and named once (MPI 6.3.2).
Result<std::vector<int>> expand_ranges(int group_size, int n, int ranges[][3]) {
  std::vector<int> out;
  std::vector<bool> seen(static_cast<std::size_t>(group_size), false);
  for (int i = 0; i < n; ++i) {
    const int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0 || (stride > 0 && first > last) || (stride < 0 && first < last)) {
      return Status(ErrorCode::kInvalidArgument,
                    "range (" + std::to_string(first) + ", " + std::to_string(last) + ", " +
                        std::to_string(stride) + ") is empty or has stride 0");
    }
    for (long r = first; stride > 0 ? r <= last : r >= last; r += stride) {
      if (r < 0 || r >= group_size || seen[static_cast<std::size_t>(r)]) {
        return Status(ErrorCode::kInvalidRank,
                      "range rank " + std::to_string(r) + " is out of the group or repeated");
      }
      seen[static_cast<std::size_t>(r)] = true;
      out.push_back(static_cast<int>(r));
    }
  }
  return out;
}

// Ranks listed must be in the group and distinct.
Status check_ranks(int group_size, int n, const int ranks[], const char* what) {
  if (n < 0) return {ErrorCode::kInvalidArgument, std::string(what) + ": n is negative"};
  for (int i = 0; i < n; ++i) {
    if (ranks[i] < 0 || ranks[i] >= group_size || std::count(ranks, ranks + i, ranks[i]) != 0) {
      return {ErrorCode::kInvalidRank, std::string(what) + " rank " + std::to_string(ranks[i]) +
                                           " is out of range or repeated"};
    }
  }
  return Status::ok();
}

std::vector<int> members_at(const std::vector<int>& group, const std::vector<int>& ranks) {
  std::vector<int> out;
  for (int r : ranks) out.push_back(group[static_cast<std::size_t>(r)]);
  return out;
}

std::vector<int> members_except(const std::vector<int>& group, const std::vector<int>& ranks) {
  std::vector<int> out;
  for (std::size_t i = 0; i < group.size(); ++i) {
    if (std::find(ranks.begin(), ranks.end(), static_cast<int>(i)) == ranks.end()) {
      out.push_back(group[i]);
    }
  }
  return out;
}

// group1's members that are (or are not) in group2, in group1's order.
std::vector<int> members_where(const std::vector<int>& a, const std::vector<int>& b, bool in_b) {
  std::vector<int> out;
  for (int w : a) {
    if (contains(b, w) == in_b) out.push_back(w);
  }
  return out;
}

// The two-group operations: look both up, combine, hand out the result.
template <typename Combine>
int set_operation(const char* function, MPI_Group group1, MPI_Group group2, MPI_Group* newgroup,
                  Combine combine) {
  auto a = group_of(group1);
  if (!a) return report(MPI_COMM_WORLD, function, a.status());
  auto b = group_of(group2);
  if (!b) return report(MPI_COMM_WORLD, function, b.status());
  *newgroup = make_group(combine(**a, **b));
  return MPI_SUCCESS;
}

}  // namespace

extern "C" {

int MPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  auto c = comm_of(comm);
  TW_MPI_TRY(comm, c.status());
  *group = make_group((*c)->world_ranks());
  return MPI_SUCCESS;
}

int MPI_Group_size(MPI_Group group, int* size) {
  auto g = group_of(group);
  TW_MPI_TRY(MPI_COMM_WORLD, g.status());
  *size = static_cast<int>((*g)->size());
  return MPI_SUCCESS;
}

int MPI_Group_rank(MPI_Group group, int* rank) {
  auto g = group_of(group);
  TW_MPI_TRY(MPI_COMM_WORLD, g.status());
  auto it = std::find((*g)->begin(), (*g)->end(), state().engine->world_rank());
  *rank = it == (*g)->end() ? MPI_UNDEFINED : static_cast<int>(it - (*g)->begin());
  return MPI_SUCCESS;
}

int MPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  auto g = group_of(group);
  TW_MPI_TRY(MPI_COMM_WORLD, g.status());
  TW_MPI_TRY(MPI_COMM_WORLD, check_ranks(static_cast<int>((*g)->size()), n, ranks, "Group_incl"));
  *newgroup = make_group(members_at(**g, {ranks, ranks + n}));
  return MPI_SUCCESS;
}

int MPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  auto g = group_of(group);
  TW_MPI_TRY(MPI_COMM_WORLD, g.status());
  TW_MPI_TRY(MPI_COMM_WORLD, check_ranks(static_cast<int>((*g)->size()), n, ranks, "Group_excl"));
  *newgroup = make_group(members_except(**g, {ranks, ranks + n}));
  return MPI_SUCCESS;
}

int MPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  auto g = group_of(group);
  TW_MPI_TRY(MPI_COMM_WORLD, g.status());
  auto ranks = expand_ranges(static_cast<int>((*g)->size()), n, ranges);
  TW_MPI_TRY(MPI_COMM_WORLD, ranks.status());
  *newgroup = make_group(members_at(**g, *ranks));
  return MPI_SUCCESS;
}

int MPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  auto g = group_of(group);
  TW_MPI_TRY(MPI_COMM_WORLD, g.status());
  auto ranks = expand_ranges(static_cast<int>((*g)->size()), n, ranges);
  TW_MPI_TRY(MPI_COMM_WORLD, ranks.status());
  *newgroup = make_group(members_except(**g, *ranks));
  return MPI_SUCCESS;
}

// Union: group1's members in order, then group2's that group1 lacks.
int MPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return set_operation(__func__, group1, group2, newgroup, [](const auto& a, const auto& b) {
    std::vector<int> out = a;
    for (int w : b) {
      if (!contains(a, w)) out.push_back(w);
    }
    return out;
  });
}

// Intersection and difference keep group1's order.
int MPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return set_operation(__func__, group1, group2, newgroup,
                       [](const auto& a, const auto& b) { return members_where(a, b, true); });
}

int MPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  return set_operation(__func__, group1, group2, newgroup,
                       [](const auto& a, const auto& b) { return members_where(a, b, false); });
}

int MPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  auto a = group_of(group1);
  TW_MPI_TRY(MPI_COMM_WORLD, a.status());
  auto b = group_of(group2);
  TW_MPI_TRY(MPI_COMM_WORLD, b.status());
  *result = compare_members(**a, **b);
  return MPI_SUCCESS;
}

int MPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                              int ranks2[]) {
  auto a = group_of(group1);
  TW_MPI_TRY(MPI_COMM_WORLD, a.status());
  auto b = group_of(group2);
  TW_MPI_TRY(MPI_COMM_WORLD, b.status());
  for (int i = 0; i < n; ++i) {
    if (ranks1[i] == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    if (ranks1[i] < 0 || ranks1[i] >= static_cast<int>((*a)->size())) {
      return report(MPI_COMM_WORLD, __func__,
                    {ErrorCode::kInvalidRank,
                     "rank " + std::to_string(ranks1[i]) + " is not in the first group"});
    }
    int world = (**a)[static_cast<std::size_t>(ranks1[i])];
    auto it = std::find((*b)->begin(), (*b)->end(), world);
    ranks2[i] = it == (*b)->end() ? MPI_UNDEFINED : static_cast<int>(it - (*b)->begin());
  }
  return MPI_SUCCESS;
}

int MPI_Group_free(MPI_Group* group) {
  if (*group != MPI_GROUP_EMPTY) {
    TW_MPI_TRY(MPI_COMM_WORLD, group_of(*group).status());
    state().groups.remove(*group);
  }
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"

namespace tagwire::mpi {

int compare_members(const std::vector<int>& a, const std::vector<int>& b) {
  if (a == b) return MPI_IDENT;
  std::vector<int> x = a, y = b;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y ? MPI_SIMILAR : MPI_UNEQUAL;
}

Result<std::vector<int>> group_members(MPI_Group group) {
  auto g = group_of(group);
  if (!g) return g.status();
  return **g;
}

}  // namespace tagwire::mpi
