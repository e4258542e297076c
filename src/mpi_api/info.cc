// MPI_Info: ordered (key, value) string pairs, usable before MPI_Init and
// after MPI_Finalize (MPI-4 allows it, and a program may build its hints
// first). MPI_INFO_ENV, read-only, and MPI-4's MPI_Info_create_env say how
// the process was started: "command", "argv", "wdir", "host". Also
// MPI_Alloc_mem, the one call here that takes info.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

// The launch as MPI-4 §10.2 (MPI_INFO_ENV) names it: the program, its arguments
// (space-separated), the working directory and the host.
InfoEntries launch_entries(const std::vector<std::string>& args) {
  InfoEntries e;
  if (!args.empty()) {
    e.emplace_back("command", args[0]);
    std::string rest;
    for (std::size_t i = 1; i < args.size(); ++i) rest += (i > 1 ? " " : "") + args[i];
    e.emplace_back("argv", rest);
  }
  std::vector<char> buffer(4096);
  if (::getcwd(buffer.data(), buffer.size()) != nullptr) e.emplace_back("wdir", buffer.data());
  if (::gethostname(buffer.data(), buffer.size()) == 0) {
    buffer.back() = '\0';
    e.emplace_back("host", buffer.data());
  }
  return e;
}

// This process's arguments, from the kernel (MPI_INFO_ENV exists before
// MPI_Init is given argc and argv, if it ever is).
std::vector<std::string> own_arguments() {
  std::string all;
  if (const int fd = ::open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC); fd >= 0) {
    char chunk[4096];
    for (ssize_t n; (n = ::read(fd, chunk, sizeof chunk)) > 0;) {
      all.append(chunk, static_cast<std::size_t>(n));
    }
    ::close(fd);
  }
  std::vector<std::string> args;
  for (std::size_t at = 0; at < all.size();) {
    const std::size_t end = all.find('\0', at);
    args.push_back(all.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return args;
}

Result<InfoEntries*> info_of(MPI_Info info, bool writable) {
  if (info == MPI_INFO_ENV) {
    // Read from the system on first use of MPI_INFO_ENV itself, not of any info.
    static InfoEntries env = launch_entries(own_arguments());
    if (writable) return Status(ErrorCode::kInvalidInfo, "MPI_INFO_ENV is read-only");
    return &env;
  }
  InfoEntries* entries = state().infos.find(info);
  if (entries == nullptr) {
    return Status(ErrorCode::kInvalidInfo,
                  "info handle " + std::to_string(info) + " is not a live info object");
  }
  return entries;
}

Result<std::string> key_of(const char* key) {
  if (key == nullptr) return Status(ErrorCode::kInfoKey, "a null info key");
  const std::size_t n = std::strlen(key);
  if (n == 0 || n > MPI_MAX_INFO_KEY) {
    return Status(ErrorCode::kInfoKey, "info key of " + std::to_string(n) +
                                           " characters (1 to MPI_MAX_INFO_KEY allowed)");
  }
  return std::string(key, n);
}

InfoEntries::iterator find_key(InfoEntries& entries, const std::string& key) {
  return std::find_if(entries.begin(), entries.end(),
                      [&](const auto& e) { return e.first == key; });
}

}  // namespace

Result<const InfoEntries*> tagwire::mpi::info_entries(MPI_Info info) {
  static const InfoEntries none;
  if (info == MPI_INFO_NULL) return &none;
  auto entries = info_of(info, false);
  if (!entries) return entries.status();
  return *entries;
}

extern "C" {

int MPI_Info_create(MPI_Info* info) {
  if (info == nullptr) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "a null info pointer"});
  }
  *info = state().infos.add(InfoEntries{});
  return MPI_SUCCESS;
}

int MPI_Info_create_env(int argc, char* argv[], MPI_Info* info) {
  if (info == nullptr) {
    return report(MPI_COMM_WORLD, __func__, {ErrorCode::kInvalidArgument, "a null info pointer"});
  }
  std::vector<std::string> args;
  if (argv != nullptr) {
    for (int i = 0; i < argc && argv[i] != nullptr; ++i) args.emplace_back(argv[i]);
  } else {
    args = own_arguments();
  }
  *info = state().infos.add(launch_entries(args));
  return MPI_SUCCESS;
}

int MPI_Info_set(MPI_Info info, const char* key, const char* value) {
  auto entries = info_of(info, true);
  TW_MPI_TRY(MPI_COMM_WORLD, entries.status());
  auto k = key_of(key);
  TW_MPI_TRY(MPI_COMM_WORLD, k.status());
  if (value == nullptr || std::strlen(value) > MPI_MAX_INFO_VAL) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInfoValue, "info value null or longer than MPI_MAX_INFO_VAL"});
  }
  auto it = find_key(**entries, *k);
  if (it != (*entries)->end()) {
    it->second = value;
  } else {
    (*entries)->emplace_back(*k, value);
  }
  return MPI_SUCCESS;
}

int MPI_Info_get(MPI_Info info, const char* key, int valuelen, char* value, int* flag) {
  auto entries = info_of(info, false);
  TW_MPI_TRY(MPI_COMM_WORLD, entries.status());
  auto k = key_of(key);
  TW_MPI_TRY(MPI_COMM_WORLD, k.status());
  auto it = find_key(**entries, *k);
  *flag = it != (*entries)->end();
  if (*flag) {
    // valuelen excludes the terminating null (MPI-3 MPI_Info_get).
    int length;
    copy_string(it->second, value, valuelen + 1, &length);
  }
  return MPI_SUCCESS;
}

int MPI_Info_get_valuelen(MPI_Info info, const char* key, int* valuelen, int* flag) {
  auto entries = info_of(info, false);
  TW_MPI_TRY(MPI_COMM_WORLD, entries.status());
  auto k = key_of(key);
  TW_MPI_TRY(MPI_COMM_WORLD, k.status());
  auto it = find_key(**entries, *k);
  *flag = it != (*entries)->end();
  if (*flag) *valuelen = static_cast<int>(it->second.size());
  return MPI_SUCCESS;
}

// MPI-4: *buflen in is the buffer's size; out, the value's size plus one.
int MPI_Info_get_string(MPI_Info info, const char* key, int* buflen, char* value, int* flag) {
  auto entries = info_of(info, false);
  TW_MPI_TRY(MPI_COMM_WORLD, entries.status());
  auto k = key_of(key);
  TW_MPI_TRY(MPI_COMM_WORLD, k.status());
  auto it = find_key(**entries, *k);
  *flag = it != (*entries)->end();
  if (!*flag) return MPI_SUCCESS;
  if (*buflen > 0 && value != nullptr) {
    int length;
    copy_string(it->second, value, *buflen, &length);
  }
  *buflen = static_cast<int>(it->second.size()) + 1;
  return MPI_SUCCESS;
}

int MPI_Info_delete(MPI_Info info, const char* key) {
  auto entries = info_of(info, true);
  TW_MPI_TRY(MPI_COMM_WORLD, entries.status());
  auto k = key_of(key);
  TW_MPI_TRY(MPI_COMM_WORLD, k.status());
  auto it = find_key(**entries, *k);
  if (it == (*entries)->end()) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInfoNoKey, "info key '" + *k + "' is not set"});
  }
  (*entries)->erase(it);
  return MPI_SUCCESS;
}

int MPI_Info_dup(MPI_Info info, MPI_Info* newinfo) {
  auto entries = info_of(info, false);
  TW_MPI_TRY(MPI_COMM_WORLD, entries.status());
  InfoEntries copy = **entries;
  *newinfo = state().infos.add(std::move(copy));
  return MPI_SUCCESS;
}

int MPI_Info_get_nkeys(MPI_Info info, int* nkeys) {
  auto entries = info_of(info, false);
  TW_MPI_TRY(MPI_COMM_WORLD, entries.status());
  *nkeys = static_cast<int>((*entries)->size());
  return MPI_SUCCESS;
}

int MPI_Info_get_nthkey(MPI_Info info, int n, char* key) {
  auto entries = info_of(info, false);
  TW_MPI_TRY(MPI_COMM_WORLD, entries.status());
  if (n < 0 || n >= static_cast<int>((*entries)->size())) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "key number " + std::to_string(n) + " of " +
                                                    std::to_string((*entries)->size())});
  }
  int length;
  copy_string((**entries)[static_cast<std::size_t>(n)].first, key, MPI_MAX_INFO_KEY + 1, &length);
  return MPI_SUCCESS;
}

int MPI_Alloc_mem(MPI_Aint size, MPI_Info info, void* baseptr) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  if (info != MPI_INFO_NULL) TW_MPI_TRY(MPI_COMM_WORLD, info_of(info, false).status());
  if (size < 0) {
    return report(MPI_COMM_WORLD, __func__,
                  {ErrorCode::kInvalidArgument, "negative size " + std::to_string(size)});
  }
  auto memory = state().engine->alloc_registered(static_cast<std::size_t>(size));
  TW_MPI_TRY(MPI_COMM_WORLD, memory.status());
  *static_cast<void**>(baseptr) = *memory;
  return MPI_SUCCESS;
}

int MPI_Free_mem(void* base) {
  TW_MPI_TRY(MPI_COMM_WORLD, check_initialized());
  TW_MPI_TRY(MPI_COMM_WORLD, state().engine->free_registered(base));
  return MPI_SUCCESS;
}

int MPI_Info_free(MPI_Info* info) {
  TW_MPI_TRY(MPI_COMM_WORLD, info_of(*info, true).status());
  state().infos.remove(*info);
  *info = MPI_INFO_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"
