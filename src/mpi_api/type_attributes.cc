// Attribute caching on datatypes (MPI-3.1 §6.7.4): user keyvals with copy
// and delete callbacks, honoured by MPI_Type_dup and MPI_Type_free.
// Predefined datatypes may carry attributes too; they are never freed.
#include <string>

#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

Result<TypeKeyval*> type_keyval_of(int keyval) {
  TypeKeyval* k = state().type_keyvals.find(keyval);
  if (k == nullptr || k->freed) {
    return Status(ErrorCode::kInvalidKeyval,
                  "datatype attribute key " + std::to_string(keyval) + " is not a live keyval");
  }
  return k;
}

Status callback_failed(const char* which, int keyval, int rc) {
  return {ErrorCode::kApplication, std::string("the ") + which +
                                       " callback of datatype attribute key " +
                                       std::to_string(keyval) + " returned " + std::to_string(rc)};
}

// Runs the delete callback of `keyval`'s value on `type`, if it has one
// (a freed keyval keeps its callbacks for the attributes set under it).
Status run_delete(MPI_Datatype type, int keyval, void* value) {
  const TypeKeyval* k = state().type_keyvals.find(keyval);
  if (k == nullptr || k->erase == nullptr) return Status::ok();
  const int rc = k->erase(type, keyval, value, k->extra_state);
  return rc == MPI_SUCCESS ? Status::ok() : callback_failed("delete", keyval, rc);
}

}  // namespace

Status tagwire::mpi::copy_type_attributes(MPI_Datatype from, MPI_Datatype to) {
  auto found = state().type_attributes.find(from);
  if (found == state().type_attributes.end()) return Status::ok();
  const auto attributes = found->second;  // a callback may change the original
  for (const auto& [keyval, value] : attributes) {
    const TypeKeyval* k = state().type_keyvals.find(keyval);
    if (k == nullptr || k->copy == nullptr) continue;
    void* copied = nullptr;
    int flag = 0;
    const int rc = k->copy(from, keyval, k->extra_state, value, &copied, &flag);
    if (rc != MPI_SUCCESS) return callback_failed("copy", keyval, rc);
    if (flag != 0) state().type_attributes[to][keyval] = copied;
  }
  return Status::ok();
}

Status tagwire::mpi::delete_type_attributes(MPI_Datatype type) {
  auto found = state().type_attributes.find(type);
  if (found == state().type_attributes.end()) return Status::ok();
  while (!found->second.empty()) {
    auto first = found->second.begin();
    const int keyval = first->first;
    void* value = first->second;
    found->second.erase(first);
    TAGWIRE_RETURN_IF_ERROR(run_delete(type, keyval, value));
  }
  state().type_attributes.erase(found);
  return Status::ok();
}

extern "C" {

int MPI_TYPE_NULL_COPY_FN(MPI_Datatype, int, void*, void*, void*, int* flag) {
  *flag = 0;
  return MPI_SUCCESS;
}

int MPI_TYPE_DUP_FN(MPI_Datatype, int, void*, void* in, void* out, int* flag) {
  *static_cast<void**>(out) = in;
  *flag = 1;
  return MPI_SUCCESS;
}

int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype, int, void*, void*) {
  return MPI_SUCCESS;
}

int MPI_Type_create_keyval(MPI_Type_copy_attr_function* type_copy_attr_fn,
                           MPI_Type_delete_attr_function* type_delete_attr_fn, int* type_keyval,
                           void* extra_state) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (type_keyval == nullptr) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "a null keyval pointer"});
  }
  *type_keyval =
      state().type_keyvals.add(TypeKeyval{type_copy_attr_fn, type_delete_attr_fn, extra_state});
  return MPI_SUCCESS;
}

int MPI_Type_free_keyval(int* type_keyval) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  TW_MPI_TRY(MPI_COMM_WORLD, free_keyval(state().type_keyvals, type_keyval, "datatype"));
  return MPI_SUCCESS;
}

int MPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  TW_MPI_TRY(MPI_COMM_WORLD, layout_of(datatype, false).status());  // any live type
  TW_MPI_TRY(MPI_COMM_WORLD, type_keyval_of(type_keyval).status());
  auto& attributes = state().type_attributes[datatype];
  if (auto it = attributes.find(type_keyval); it != attributes.end()) {
    // Replacing a value deletes the old one first.
    TW_MPI_TRY(MPI_COMM_WORLD, run_delete(datatype, type_keyval, it->second));
  }
  attributes[type_keyval] = attribute_val;
  return MPI_SUCCESS;
}

int MPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void* attribute_val, int* flag) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  TW_MPI_TRY(MPI_COMM_WORLD, layout_of(datatype, false).status());  // any live type
  if (attribute_val == nullptr || flag == nullptr) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "a null output"});
  }
  *flag = 0;
  auto found = state().type_attributes.find(datatype);
  if (found != state().type_attributes.end()) {
    if (auto it = found->second.find(type_keyval); it != found->second.end()) {
      *static_cast<void**>(attribute_val) = it->second;
      *flag = 1;
      return MPI_SUCCESS;
    }
  }
  TW_MPI_TRY(MPI_COMM_WORLD, type_keyval_of(type_keyval).status());
  return MPI_SUCCESS;
}

int MPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  TW_MPI_TRY(MPI_COMM_WORLD, layout_of(datatype, false).status());  // any live type
  auto found = state().type_attributes.find(datatype);
  if (found == state().type_attributes.end() || found->second.count(type_keyval) == 0) {
    // (A freed keyval still names the attributes set under it.)
    TW_MPI_TRY(MPI_COMM_WORLD, type_keyval_of(type_keyval).status());
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidKeyval,
                   "no attribute under key " + std::to_string(type_keyval) + " on this datatype"});
  }
  void* value = found->second.at(type_keyval);
  TW_MPI_TRY(MPI_COMM_WORLD, run_delete(datatype, type_keyval, value));
  found->second.erase(type_keyval);
  return MPI_SUCCESS;
}

}  // extern "C"
