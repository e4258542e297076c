// Attribute caching on communicators: user keyvals with copy and delete
// callbacks (honoured by MPI_Comm_dup and MPI_Comm_free, and for
// MPI_COMM_SELF at MPI_Finalize), and the predefined attributes.
#include <string>
#include <vector>

#include "mpi_api/error_handlers.h"
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

Result<Keyval*> keyval_of(int keyval) {
  Keyval* k = state().keyvals.find(keyval);
  if (k == nullptr || k->freed) {
    return Status(ErrorCode::kInvalidKeyval,
                  "attribute key " + std::to_string(keyval) +
                      (keyval < kFirstUserKeyval ? " is predefined (read-only) or invalid"
                                                 : " is not a live keyval"));
  }
  return k;
}

// Predefined attributes: each value is a pointer to an int that lives as
// long as the program (MPI's rule for these keyvals).
bool predefined(int keyval, void* attribute_val) {
  static int tag_ub = engine::kTagUpperBound;
  static int wtime_is_global = 0;
  static int host = MPI_PROC_NULL;
  static int io = MPI_ANY_SOURCE;  // every process can do I/O
  static int appnum = 0;
  static int universe = 0;
  int* value = nullptr;
  switch (keyval) {
    case MPI_TAG_UB:
      value = &tag_ub;
      break;
    case MPI_WTIME_IS_GLOBAL:
      value = &wtime_is_global;
      break;
    case MPI_HOST:
      value = &host;
      break;
    case MPI_IO:
      value = &io;
      break;
    case MPI_APPNUM:
      // Known where we launched one program ourselves; mpirun and srun may
      // run several (MPMD) and do not tell us which we are.
      if (state().engine->bootstrap_kind() != "tagwire-run" &&
          state().engine->bootstrap_kind() != "singleton") {
        return false;
      }
      value = &appnum;
      break;
    case MPI_UNIVERSE_SIZE:
      universe = state().engine->world_size();
      value = &universe;
      break;
    case MPI_LASTUSEDCODE:
      value = last_used_code();
      break;
    default:
      return false;
  }
  *static_cast<int**>(attribute_val) = value;
  return true;
}

}  // namespace

namespace tagwire::mpi {

namespace {

// An attribute's value set (or set again) on `entry`: it becomes the last set.
void set_attribute(CommEntry& entry, int keyval, void* value) {
  std::erase(entry.attribute_order, keyval);
  entry.attribute_order.push_back(keyval);
  entry.attributes[keyval] = value;
}

void erase_attribute(CommEntry& entry, int keyval) {
  std::erase(entry.attribute_order, keyval);
  entry.attributes.erase(keyval);
}

}  // namespace

Status copy_attributes(MPI_Comm from, CommEntry& to) {
  const CommEntry& parent = *find_comm(from);
  const auto attributes = parent.attributes;  // a callback may change the original
  const auto order = parent.attribute_order;  // the duplicate sets them in the same order
  for (const int keyval : order) {
    void* value = attributes.at(keyval);
    Keyval* k = state().keyvals.find(keyval);
    if (k == nullptr || k->copy == nullptr) continue;
    void* copied = nullptr;
    int flag = 0;
    const int rc = k->copy(from, keyval, k->extra_state, value, &copied, &flag);
    if (rc != MPI_SUCCESS) {
      return {ErrorCode::kApplication, "the copy callback of attribute key " +
                                           std::to_string(keyval) + " returned " +
                                           std::to_string(rc)};
    }
    if (flag != 0) set_attribute(to, keyval, copied);
  }
  return Status::ok();
}

Status delete_attributes(MPI_Comm comm) {
  CommEntry* entry = find_comm(comm);
  while (!entry->attribute_order.empty()) {
    const int keyval = entry->attribute_order.back();  // the last set goes first
    void* value = entry->attributes.at(keyval);
    erase_attribute(*entry, keyval);
    Keyval* k = state().keyvals.find(keyval);
    if (k == nullptr || k->erase == nullptr) continue;
    const int rc = k->erase(comm, keyval, value, k->extra_state);
    if (rc != MPI_SUCCESS) {
      return {ErrorCode::kApplication, "the delete callback of attribute key " +
                                           std::to_string(keyval) + " returned " +
                                           std::to_string(rc)};
    }
  }
  return Status::ok();
}

}  // namespace tagwire::mpi

extern "C" {

int MPI_COMM_NULL_COPY_FN(MPI_Comm, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

int MPI_COMM_DUP_FN(MPI_Comm, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}

int MPI_COMM_NULL_DELETE_FN(MPI_Comm, int, void*, void*) {
  return MPI_SUCCESS;
}

int MPI_Comm_create_keyval(MPI_Comm_copy_attr_function* copy_fn,
                           MPI_Comm_delete_attr_function* delete_fn, int* keyval,
                           void* extra_state) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  *keyval = state().keyvals.add(Keyval{copy_fn, delete_fn, extra_state});
  return MPI_SUCCESS;
}

int MPI_Comm_free_keyval(int* keyval) {
  // Attributes already set under it live on with its callbacks (MPI 6.7.2).
  TW_MPI_TRY(MPI_COMM_WORLD, free_keyval(state().keyvals, keyval, "communicator"));
  return MPI_SUCCESS;
}

int MPI_Comm_set_attr(MPI_Comm comm, int keyval, void* attribute_val) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  auto k = keyval_of(keyval);
  TW_MPI_TRY(comm, k.status());
  CommEntry* entry = find_comm(comm);
  if (auto it = entry->attributes.find(keyval); it != entry->attributes.end()) {
    // Replacing a value deletes the old one first.
    if ((*k)->erase != nullptr) {
      const int rc = (*k)->erase(comm, keyval, it->second, (*k)->extra_state);
      if (rc != MPI_SUCCESS) return rc;
    }
  }
  set_attribute(*entry, keyval, attribute_val);
  return MPI_SUCCESS;
}

int MPI_Comm_get_attr(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  if (keyval < kFirstUserKeyval) {
    if (keyval == MPI_KEYVAL_INVALID) {
      return report(comm, __func__, {ErrorCode::kInvalidKeyval, "MPI_KEYVAL_INVALID"});
    }
    *flag = predefined(keyval, attribute_val) ? 1 : 0;
    return MPI_SUCCESS;
  }
  const CommEntry* entry = find_comm(comm);
  auto it = entry->attributes.find(keyval);
  if (it == entry->attributes.end()) {
    TW_MPI_TRY(comm, keyval_of(keyval).status());
    *flag = 0;
    return MPI_SUCCESS;
  }
  *static_cast<void**>(attribute_val) = it->second;
  *flag = 1;
  return MPI_SUCCESS;
}

int MPI_Comm_delete_attr(MPI_Comm comm, int keyval) {
  TW_MPI_TRY(comm, comm_of(comm).status());
  CommEntry* entry = find_comm(comm);
  auto it = entry->attributes.find(keyval);
  if (it == entry->attributes.end()) {
    TW_MPI_TRY(comm, keyval_of(keyval).status());
    return report(comm, __func__,
                  {ErrorCode::kInvalidKeyval,
                   "no attribute under key " + std::to_string(keyval) + " on this communicator"});
  }
  // A freed keyval still names the attributes set under it (MPI-3.1
  // §6.7.2: the free takes effect when the last of them goes).
  const Keyval* k = state().keyvals.find(keyval);
  void* value = it->second;
  if (k != nullptr && k->erase != nullptr) {
    const int rc = k->erase(comm, keyval, value, k->extra_state);
    if (rc != MPI_SUCCESS) return rc;
  }
  erase_attribute(*entry, keyval);
  return MPI_SUCCESS;
}

// MPI-1's names: the same calls (the profiling layer sees each once).
int MPI_Keyval_create(MPI_Copy_function* copy_fn, MPI_Delete_function* delete_fn, int* keyval,
                      void* extra_state) {
  return PMPI_Comm_create_keyval(copy_fn, delete_fn, keyval, extra_state);
}

int MPI_Keyval_free(int* keyval) {
  return PMPI_Comm_free_keyval(keyval);
}

int MPI_Attr_put(MPI_Comm comm, int keyval, void* attribute_val) {
  return PMPI_Comm_set_attr(comm, keyval, attribute_val);
}

int MPI_Attr_get(MPI_Comm comm, int keyval, void* attribute_val, int* flag) {
  return PMPI_Comm_get_attr(comm, keyval, attribute_val, flag);
}

int MPI_Attr_delete(MPI_Comm comm, int keyval) {
  return PMPI_Comm_delete_attr(comm, keyval);
}

}  // extern "C"
