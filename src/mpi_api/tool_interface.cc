// MPI_T, the tool information interface (MPI-4.1 §15.3), so that a tool
// reads Tagwire's settings and counters without knowing Tagwire:
//  - control variables: the TAGWIRE_* settings, read-only strings in the
//    environment variable's syntax (set them in the environment);
//  - performance variables: the engine's, the matcher's and the
//    transport's counters, each a read-only, continuous
//    MPI_T_PVAR_CLASS_COUNTER of one unsigned long long, bound to no
//    object; sessions and handles only name which one to read.
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <mutex>
#include <set>
#include <string_view>
#include <unordered_map>

#include "cancel/send_cancel_factory.h"
#include "mpi_api/state.h"

using namespace tagwire;
using namespace tagwire::mpi;

namespace {

struct Snapshot {
  engine::EngineCounters engine;
  transport::TransportCounters transport;
};

struct Pvar {
  const char* name;
  const char* description;
  std::uint64_t (*read)(const Snapshot&);
};

std::uint64_t fallbacks(const matching::NicMatchingCounters& m) {
  return m.kept_full + m.kept_unencodable + m.kept_by_caller + m.kept_for_order + m.add_rejected;
}

// The order is the index: append, never reorder (tools may cache indices
// within a run; MPI_T_pvar_get_index is the stable way).
constexpr Pvar kPvars[] = {
    {"tagwire_matched_by_software", "messages matched to receives by the host's matcher",
     [](const Snapshot& s) { return s.engine.matching.matched_by_software; }},
    {"tagwire_matched_by_nic",
     "messages matched to receives by the NIC's tag matching (0 where the NIC does not match)",
     [](const Snapshot& s) { return s.engine.matching.matched_by_nic; }},
    {"tagwire_nic_tag_adds", "receives handed to the NIC (TAG_ADD)",
     [](const Snapshot& s) { return s.engine.matching.tag_adds; }},
    {"tagwire_nic_tag_dels", "receives taken back from the NIC (TAG_DEL: cancel or software match)",
     [](const Snapshot& s) { return s.engine.matching.tag_dels; }},
    {"tagwire_nic_syncs", "unexpected counts brought up to date in the NIC (TAG_SYNC)",
     [](const Snapshot& s) { return s.engine.matching.syncs; }},
    {"tagwire_nic_fallbacks",
     "receives the NIC could have held that stayed in software (full, unencodable, small "
     "buffer, MPI order, or refused)",
     [](const Snapshot& s) { return fallbacks(s.engine.matching); }},
    {"tagwire_nic_cancels_lost", "receive cancels the NIC's match beat",
     [](const Snapshot& s) { return s.engine.matching.cancel_lost_to_nic; }},
    {"tagwire_unexpected_messages", "messages that arrived before their receive",
     [](const Snapshot& s) { return s.engine.unexpected; }},
    {"tagwire_receives_unnamed",
     "blocking receives that took an eager message straight from the transport, without a "
     "request",
     [](const Snapshot& s) { return s.engine.receives_unnamed; }},
    {"tagwire_word_atomics",
     "8-byte window words accumulated word by word by atomics (the NIC's on verbs, the CPU's on a "
     "window every rank maps), not under the accumulate lock",
     [](const Snapshot& s) { return s.engine.word_atomics; }},
    {"tagwire_eager_sent", "messages sent eagerly",
     [](const Snapshot& s) { return s.engine.eager_sent; }},
    {"tagwire_rendezvous_sent", "messages sent by rendezvous",
     [](const Snapshot& s) { return s.engine.rendezvous_sent; }},
    {"tagwire_cancel_requests_sent", "send cancels asked of a receiver",
     [](const Snapshot& s) { return s.engine.cancel_requests_sent; }},
    {"tagwire_sends_cancelled", "sends whose cancel succeeded",
     [](const Snapshot& s) { return s.engine.sends_cancelled; }},
    {"tagwire_messages_cancelled", "messages this receiver dropped for their sender's cancel",
     [](const Snapshot& s) { return s.engine.messages_cancelled; }},
    {"tagwire_cancels_refused", "send cancels this receiver refused (already matched)",
     [](const Snapshot& s) { return s.engine.cancels_refused; }},
    {"tagwire_peers_failed", "ranks reported dead or unreachable",
     [](const Snapshot& s) { return s.engine.peers_failed; }},
    {"tagwire_dropped_messages", "messages that failed the wire checks",
     [](const Snapshot& s) { return s.engine.dropped_messages; }},
    {"tagwire_transport_messages_sent", "messages the transport sent",
     [](const Snapshot& s) { return s.transport.messages_sent; }},
    {"tagwire_transport_messages_received", "messages the transport received",
     [](const Snapshot& s) { return s.transport.messages_received; }},
    {"tagwire_transport_bytes_read", "bytes read from peers (rendezvous)",
     [](const Snapshot& s) { return s.transport.bytes_read; }},
    {"tagwire_transport_bytes_helped",
     "bytes copied into a peer's buffer for the peer's large read (shm)",
     [](const Snapshot& s) { return s.transport.bytes_helped; }},
    {"tagwire_transport_bytes_helped_by_peers",
     "bytes of this rank's large reads that their senders copied (shm)",
     [](const Snapshot& s) { return s.transport.bytes_helped_by_peers; }},
    {"tagwire_transport_connections", "connections made",
     [](const Snapshot& s) { return s.transport.connections; }},
    {"tagwire_rcache_hits", "registrations reused from the registration cache",
     [](const Snapshot& s) { return s.transport.rcache_hits; }},
    {"tagwire_rcache_misses", "registrations the registration cache had to make",
     [](const Snapshot& s) { return s.transport.rcache_misses; }},
    {"tagwire_unexpected_bytes_peak",
     "the most the unexpected queue held, in bytes (payloads and bookkeeping)",
     [](const Snapshot& s) { return s.engine.unexpected_bytes_peak; }},
    {"tagwire_helper_held_back",
     "times the helper thread left messages to the transport because the unexpected queue "
     "held TAGWIRE_UNEXPECTED_LIMIT",
     [](const Snapshot& s) { return s.engine.helper_held_back; }},
};
constexpr int kPvarCount = static_cast<int>(std::size(kPvars));

// MPI_T's own state: it lives apart from MPI_Init's (MPI_T may be used
// before, during and after it), under its own lock (any thread may call).
struct ToolState {
  std::mutex mutex;
  int init_count = 0;  // MPI_T_init_thread minus MPI_T_finalize
  int next_handle = 1;
  std::set<int> sessions;
  struct Handle {
    int session;
    int pvar;
  };
  std::unordered_map<int, Handle> handles;
  std::unordered_map<int, int> cvar_handles;  // handle -> setting index
};

// A control variable's value is at most this long (MPI_CHAR elements,
// terminator included): the count a handle reports.
constexpr int kCvarChars = 256;

ToolState& tool() {
  static ToolState t;
  return t;
}

Snapshot snapshot() {
  State& st = state();
  if (st.engine) return {st.engine->counters(), st.engine->transport_counters()};
  return {st.final_counters, st.final_transport_counters};  // zeros before MPI_Init
}

// The settings in effect: the engine's while it runs, what MPI_Finalize
// left, or (before MPI_Init) what the environment says.
Result<engine::Config> current_config() {
  State& st = state();
  if (st.engine) return st.engine->config();
  if (st.final_config) return *st.final_config;
  return engine::Config::from_environment(cancel::kSendCancelLayer.settings);
}

// Every setting of this build, in the order of the layers' tables: the
// control variables' indices.
const std::vector<const SettingInfo*>& all_settings() {
  static const std::vector<const SettingInfo*> all = [] {
    std::vector<const SettingInfo*> out;
    for (SettingTable table : engine::known_settings(cancel::kSendCancelLayer.settings)) {
      out.insert(out.end(), table.begin(), table.end());
    }
    return out;
  }();
  return all;
}

std::string lower_name(std::string_view name) {
  std::string out(name);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

// MPI_T's string convention: *len in is the buffer's size, out the string's
// length with its terminator; null pointers or a zero size return nothing.
void copy_out(std::string_view text, char* out, int* len) {
  if (len == nullptr) return;
  if (out != nullptr && *len > 0) {
    const std::size_t n = std::min(text.size(), static_cast<std::size_t>(*len - 1));
    std::memcpy(out, text.data(), n);
    out[n] = '\0';
  }
  *len = static_cast<int>(text.size() + 1);
}

// MPI_T_cvar_get_num and MPI_T_pvar_get_num.
int report_count(int* out, int count) {
  std::lock_guard lock(tool().mutex);
  if (tool().init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (out == nullptr) return MPI_T_ERR_INVALID;
  *out = count;
  return MPI_SUCCESS;
}

// The session and handle checks every per-handle call shares; `pvar` out.
int find_handle(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int* pvar) {
  ToolState& t = tool();
  if (t.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (t.sessions.count(session) == 0) return MPI_T_ERR_INVALID_SESSION;
  if (handle == MPI_T_PVAR_ALL_HANDLES) return MPI_SUCCESS;
  auto it = t.handles.find(handle);
  if (it == t.handles.end() || it->second.session != session) return MPI_T_ERR_INVALID_HANDLE;
  if (pvar != nullptr) *pvar = it->second.pvar;
  return MPI_SUCCESS;
}

// Start, stop, write and reset: every variable is continuous and read-only.
int refuse(MPI_T_pvar_session session, MPI_T_pvar_handle handle, int why) {
  std::lock_guard lock(tool().mutex);
  const int rc = find_handle(session, handle, nullptr);
  return rc != MPI_SUCCESS ? rc : why;
}

}  // namespace

extern "C" {

int MPI_T_init_thread(int required, int* provided) {
  std::lock_guard lock(tool().mutex);
  ++tool().init_count;
  if (provided != nullptr) {
    *provided = required < MPI_THREAD_SINGLE     ? MPI_THREAD_SINGLE
                : required > MPI_THREAD_MULTIPLE ? MPI_THREAD_MULTIPLE
                                                 : required;
  }
  return MPI_SUCCESS;
}

int MPI_T_finalize(void) {
  std::lock_guard lock(tool().mutex);
  ToolState& t = tool();
  if (t.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (--t.init_count == 0) {
    t.sessions.clear();
    t.handles.clear();
    t.cvar_handles.clear();
  }
  return MPI_SUCCESS;
}

int MPI_T_cvar_get_num(int* num_cvar) {
  return report_count(num_cvar, static_cast<int>(all_settings().size()));
}

int MPI_T_cvar_get_info(int cvar_index, char* name, int* name_len, int* verbosity,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                        int* bind, int* scope) {
  std::lock_guard lock(tool().mutex);
  if (tool().init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  const auto& settings = all_settings();
  if (cvar_index < 0 || cvar_index >= static_cast<int>(settings.size())) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  const SettingInfo& setting = *settings[static_cast<std::size_t>(cvar_index)];
  copy_out(lower_name(setting.name), name, name_len);
  copy_out(setting.description, desc, desc_len);
  if (verbosity != nullptr) *verbosity = MPI_T_VERBOSITY_USER_BASIC;
  if (datatype != nullptr) *datatype = MPI_CHAR;
  if (enumtype != nullptr) *enumtype = MPI_T_ENUM_NULL;
  if (bind != nullptr) *bind = MPI_T_BIND_NO_OBJECT;
  if (scope != nullptr) *scope = MPI_T_SCOPE_READONLY;
  return MPI_SUCCESS;
}

int MPI_T_cvar_get_index(const char* name, int* cvar_index) {
  std::lock_guard lock(tool().mutex);
  if (tool().init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (name == nullptr || cvar_index == nullptr) return MPI_T_ERR_INVALID;
  const auto& settings = all_settings();
  for (std::size_t i = 0; i < settings.size(); ++i) {
    if (lower_name(settings[i]->name) == name) {
      *cvar_index = static_cast<int>(i);
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}

int MPI_T_cvar_handle_alloc(int cvar_index, void* /*obj_handle*/, MPI_T_cvar_handle* handle,
                            int* count) {
  std::lock_guard lock(tool().mutex);
  ToolState& t = tool();
  if (t.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (cvar_index < 0 || cvar_index >= static_cast<int>(all_settings().size())) {
    return MPI_T_ERR_INVALID_INDEX;
  }
  if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
  *handle = t.next_handle++;
  t.cvar_handles[*handle] = cvar_index;
  *count = kCvarChars;
  return MPI_SUCCESS;
}

int MPI_T_cvar_handle_free(MPI_T_cvar_handle* handle) {
  std::lock_guard lock(tool().mutex);
  ToolState& t = tool();
  if (t.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (handle == nullptr || t.cvar_handles.erase(*handle) == 0) return MPI_T_ERR_INVALID_HANDLE;
  *handle = MPI_T_CVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

int MPI_T_cvar_read(MPI_T_cvar_handle handle, void* buf) {
  int index = -1;
  {
    std::lock_guard lock(tool().mutex);
    ToolState& t = tool();
    if (t.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
    auto it = t.cvar_handles.find(handle);
    if (it == t.cvar_handles.end()) return MPI_T_ERR_INVALID_HANDLE;
    index = it->second;
  }
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  // Outside MPI_T's lock, as in MPI_T_pvar_read: the engine's lock is next.
  auto config = current_config();
  if (!config) return MPI_T_ERR_INVALID;  // a TAGWIRE_* value MPI_Init would refuse
  const std::string text(config->settings.text(*all_settings()[static_cast<std::size_t>(index)]));
  int len = kCvarChars;
  copy_out(text, static_cast<char*>(buf), &len);
  return MPI_SUCCESS;
}

int MPI_T_cvar_write(MPI_T_cvar_handle handle, const void* /*buf*/) {
  std::lock_guard lock(tool().mutex);
  ToolState& t = tool();
  if (t.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (t.cvar_handles.count(handle) == 0) return MPI_T_ERR_INVALID_HANDLE;
  return MPI_T_ERR_CVAR_SET_NEVER;
}

int MPI_T_pvar_get_num(int* num_pvar) {
  return report_count(num_pvar, kPvarCount);
}

int MPI_T_pvar_get_info(int pvar_index, char* name, int* name_len, int* verbosity, int* var_class,
                        MPI_Datatype* datatype, MPI_T_enum* enumtype, char* desc, int* desc_len,
                        int* bind, int* readonly, int* continuous, int* atomic) {
  std::lock_guard lock(tool().mutex);
  if (tool().init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (pvar_index < 0 || pvar_index >= kPvarCount) return MPI_T_ERR_INVALID_INDEX;
  const Pvar& p = kPvars[pvar_index];
  copy_out(p.name, name, name_len);
  copy_out(p.description, desc, desc_len);
  if (verbosity != nullptr) *verbosity = MPI_T_VERBOSITY_USER_BASIC;
  if (var_class != nullptr) *var_class = MPI_T_PVAR_CLASS_COUNTER;
  if (datatype != nullptr) *datatype = MPI_UNSIGNED_LONG_LONG;
  if (enumtype != nullptr) *enumtype = MPI_T_ENUM_NULL;
  if (bind != nullptr) *bind = MPI_T_BIND_NO_OBJECT;
  if (readonly != nullptr) *readonly = 1;
  if (continuous != nullptr) *continuous = 1;
  if (atomic != nullptr) *atomic = 0;
  return MPI_SUCCESS;
}

int MPI_T_pvar_get_index(const char* name, int var_class, int* pvar_index) {
  std::lock_guard lock(tool().mutex);
  if (tool().init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (name == nullptr || pvar_index == nullptr) return MPI_T_ERR_INVALID;
  for (int i = 0; i < kPvarCount; ++i) {
    if (var_class == MPI_T_PVAR_CLASS_COUNTER && std::string_view(name) == kPvars[i].name) {
      *pvar_index = i;
      return MPI_SUCCESS;
    }
  }
  return MPI_T_ERR_INVALID_NAME;
}

int MPI_T_pvar_session_create(MPI_T_pvar_session* session) {
  std::lock_guard lock(tool().mutex);
  ToolState& t = tool();
  if (t.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (session == nullptr) return MPI_T_ERR_INVALID;
  *session = t.next_handle++;
  t.sessions.insert(*session);
  return MPI_SUCCESS;
}

int MPI_T_pvar_session_free(MPI_T_pvar_session* session) {
  std::lock_guard lock(tool().mutex);
  ToolState& t = tool();
  if (t.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (session == nullptr || t.sessions.erase(*session) == 0) return MPI_T_ERR_INVALID_SESSION;
  std::erase_if(t.handles, [&](const auto& h) { return h.second.session == *session; });
  *session = MPI_T_PVAR_SESSION_NULL;
  return MPI_SUCCESS;
}

int MPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void* /*obj_handle*/,
                            MPI_T_pvar_handle* handle, int* count) {
  std::lock_guard lock(tool().mutex);
  ToolState& t = tool();
  if (t.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (t.sessions.count(session) == 0) return MPI_T_ERR_INVALID_SESSION;
  if (pvar_index < 0 || pvar_index >= kPvarCount) return MPI_T_ERR_INVALID_INDEX;
  if (handle == nullptr || count == nullptr) return MPI_T_ERR_INVALID;
  *handle = t.next_handle++;
  t.handles[*handle] = {session, pvar_index};
  *count = 1;
  return MPI_SUCCESS;
}

int MPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle* handle) {
  std::lock_guard lock(tool().mutex);
  ToolState& t = tool();
  if (t.init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (t.sessions.count(session) == 0) return MPI_T_ERR_INVALID_SESSION;
  if (handle == nullptr) return MPI_T_ERR_INVALID_HANDLE;
  auto it = t.handles.find(*handle);
  if (it == t.handles.end() || it->second.session != session) return MPI_T_ERR_INVALID_HANDLE;
  t.handles.erase(it);
  *handle = MPI_T_PVAR_HANDLE_NULL;
  return MPI_SUCCESS;
}

int MPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return refuse(session, handle, MPI_T_ERR_PVAR_NO_STARTSTOP);
}

int MPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return refuse(session, handle, MPI_T_ERR_PVAR_NO_STARTSTOP);
}

int MPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void* /*buf*/) {
  return refuse(session, handle, MPI_T_ERR_PVAR_NO_WRITE);
}

int MPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle) {
  return refuse(session, handle, MPI_T_ERR_PVAR_NO_WRITE);
}

int MPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* /*buf*/) {
  return refuse(session, handle, MPI_T_ERR_PVAR_NO_WRITE);  // as reset: read-only
}

int MPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void* buf) {
  int pvar = -1;
  {
    std::lock_guard lock(tool().mutex);
    if (handle == MPI_T_PVAR_ALL_HANDLES) return MPI_T_ERR_INVALID_HANDLE;
    const int rc = find_handle(session, handle, &pvar);
    if (rc != MPI_SUCCESS) return rc;
  }
  if (buf == nullptr) return MPI_T_ERR_INVALID;
  // Outside MPI_T's lock: the engine's lock is taken here, and an MPI_T
  // call must never wait on the engine while holding MPI_T's.
  const unsigned long long value = kPvars[pvar].read(snapshot());
  std::memcpy(buf, &value, sizeof value);
  return MPI_SUCCESS;
}

// No variable has an enumerated type: every enumeration handle is invalid.
int MPI_T_enum_get_info(MPI_T_enum /*enumtype*/, int* /*num*/, char* /*name*/, int* /*name_len*/) {
  std::lock_guard lock(tool().mutex);
  return tool().init_count == 0 ? MPI_T_ERR_NOT_INITIALIZED : MPI_T_ERR_INVALID_HANDLE;
}

int MPI_T_enum_get_item(MPI_T_enum /*enumtype*/, int /*index*/, int* /*value*/, char* /*name*/,
                        int* /*name_len*/) {
  std::lock_guard lock(tool().mutex);
  return tool().init_count == 0 ? MPI_T_ERR_NOT_INITIALIZED : MPI_T_ERR_INVALID_HANDLE;
}

// One category, "tagwire", holds every control and performance variable;
// the set never changes while the process runs.
int MPI_T_category_get_num(int* num_cat) {
  return report_count(num_cat, 1);
}

int MPI_T_category_get_info(int cat_index, char* name, int* name_len, char* desc, int* desc_len,
                            int* num_cvars, int* num_pvars, int* num_categories) {
  std::lock_guard lock(tool().mutex);
  if (tool().init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (cat_index != 0) return MPI_T_ERR_INVALID_INDEX;
  copy_out("tagwire", name, name_len);
  copy_out("Tagwire's settings (TAGWIRE_*) and counters", desc, desc_len);
  if (num_cvars != nullptr) *num_cvars = static_cast<int>(all_settings().size());
  if (num_pvars != nullptr) *num_pvars = kPvarCount;
  if (num_categories != nullptr) *num_categories = 0;
  return MPI_SUCCESS;
}

int MPI_T_category_get_index(const char* name, int* cat_index) {
  std::lock_guard lock(tool().mutex);
  if (tool().init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (name == nullptr || cat_index == nullptr) return MPI_T_ERR_INVALID;
  if (std::string_view(name) != "tagwire") return MPI_T_ERR_INVALID_NAME;
  *cat_index = 0;
  return MPI_SUCCESS;
}

namespace {
// The first `len` of `count` variable indices (MPI_T_category_get_cvars /
// _pvars: every variable is in category 0).
int category_members(int cat_index, int len, int indices[], int count) {
  std::lock_guard lock(tool().mutex);
  if (tool().init_count == 0) return MPI_T_ERR_NOT_INITIALIZED;
  if (cat_index != 0) return MPI_T_ERR_INVALID_INDEX;
  if (len < 0 || (len > 0 && indices == nullptr)) return MPI_T_ERR_INVALID;
  for (int i = 0; i < std::min(len, count); ++i) indices[i] = i;
  return MPI_SUCCESS;
}
}  // namespace

int MPI_T_category_get_cvars(int cat_index, int len, int indices[]) {
  return category_members(cat_index, len, indices, static_cast<int>(all_settings().size()));
}

int MPI_T_category_get_pvars(int cat_index, int len, int indices[]) {
  return category_members(cat_index, len, indices, kPvarCount);
}

int MPI_T_category_get_categories(int cat_index, int len, int /*indices*/[]) {
  return category_members(cat_index, std::min(len, 0), nullptr, 0);
}

int MPI_T_category_changed(int* stamp) {
  return report_count(stamp, 0);
}

}  // extern "C"
