#include "verbs/memory_hooks.h"

#include <malloc.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <climits>
#include <cstdarg>
#include <mutex>

#ifdef TAGWIRE_HAVE_UCM
#include <ucm/api/ucm.h>
#endif

namespace tagwire::verbs {

namespace {

struct Listener {
  UnmapListener fn = nullptr;
  void* ctx = nullptr;
};

// Function-local statics: a hook may run before this file's globals are
// constructed (a library's constructor unmapping something).
std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::array<Listener, 4>& listeners() {
  static std::array<Listener, 4> l;
  return l;
}
std::atomic<int> g_listener_count{0};
thread_local bool t_in_hook = false;

void notify(const void* address, std::size_t length) {
  // The common case, every munmap in the process: one atomic load.
  if (g_listener_count.load(std::memory_order_acquire) == 0 || t_in_hook || length == 0) return;
  t_in_hook = true;
  {
    std::lock_guard lock(registry_mutex());
    for (const Listener& l : listeners()) {
      if (l.fn != nullptr) l.fn(l.ctx, reinterpret_cast<std::uintptr_t>(address), length);
    }
  }
  t_in_hook = false;
}

#ifdef TAGWIRE_HAVE_UCM
// UCX's memory hooks (libucm) report every unmapping, glibc malloc's own
// included (it replaces the allocator's hooks where it must); UCX's own
// registration cache depends on them, and ours rides on the same events
// rather than competing with them for munmap.
void on_ucm_event(ucm_event_type_t, ucm_event_t* event, void*) {
  notify(event->vm_unmapped.address, event->vm_unmapped.size);
}

// Installed once and never removed, and never under registry_mutex():
// libucm dispatches an event holding its handler lock (read), and notify()
// then takes registry_mutex(); setting or unsetting a handler takes that
// lock for writing, so doing either under registry_mutex() deadlocks
// against any thread's munmap (seen: two transports finalizing in two
// threads, one unsetting while the other's ibv_destroy_cq unmapped). With
// no listener left, the handler costs one atomic load per unmapping.
bool install_ucm_handler() {
  static const bool installed =
      ucm_set_event_handler(UCM_EVENT_VM_UNMAPPED, 0, &on_ucm_event, nullptr) == UCS_OK;
  return installed;
}
#endif

}  // namespace

bool add_unmap_listener(UnmapListener fn, void* ctx) {
#ifdef TAGWIRE_HAVE_UCM
  if (!install_ucm_handler()) return false;
#endif
  std::lock_guard lock(registry_mutex());
  for (Listener& l : listeners()) {
    if (l.fn == nullptr) {
      l = {fn, ctx};
      g_listener_count.fetch_add(1, std::memory_order_release);
      return true;
    }
  }
  return false;
}

void remove_unmap_listener(void* ctx) {
  std::lock_guard lock(registry_mutex());
  for (Listener& l : listeners()) {
    if (l.fn != nullptr && l.ctx == ctx) {
      l = {};
      g_listener_count.fetch_sub(1, std::memory_order_release);
    }
  }
}

void keep_malloc_memory_mapped() {
#ifndef TAGWIRE_HAVE_UCM  // libucm sees malloc's own unmapping
  static std::once_flag once;
  std::call_once(once, [] {
    mallopt(M_MMAP_MAX, 0);
    mallopt(M_TRIM_THRESHOLD, INT_MAX);
  });
#endif
}

}  // namespace tagwire::verbs

// Without libucm, the hooks are ours: same signatures as <sys/mman.h>; the
// system call itself is made directly, so that nothing recurses into the
// hook. (With libucm they must not exist: UCX's hooks would find ours as
// "the original" in some objects and not in others.)
#ifndef TAGWIRE_HAVE_UCM
extern "C" {

void* mmap(void* address, size_t length, int prot, int flags, int fd, off_t offset) noexcept {
  // MAP_FIXED replaces whatever was mapped there.
  if ((flags & MAP_FIXED) != 0) tagwire::verbs::notify(address, length);
  return reinterpret_cast<void*>(syscall(SYS_mmap, address, length, prot, flags, fd, offset));
}

int munmap(void* address, size_t length) noexcept {
  tagwire::verbs::notify(address, length);
  return static_cast<int>(syscall(SYS_munmap, address, length));
}

void* mremap(void* old_address, size_t old_size, size_t new_size, int flags, ...) noexcept {
  void* new_address = nullptr;
  if ((flags & MREMAP_FIXED) != 0) {
    va_list ap;
    va_start(ap, flags);
    new_address = va_arg(ap, void*);
    va_end(ap);
  }
  // The old range moves or shrinks: its pages are no longer at those
  // addresses (a fixed target loses what it had too).
  tagwire::verbs::notify(old_address, old_size);
  if (new_address != nullptr) tagwire::verbs::notify(new_address, new_size);
  return reinterpret_cast<void*>(
      syscall(SYS_mremap, old_address, old_size, new_size, flags, new_address));
}

int madvise(void* address, size_t length, int advice) noexcept {
  // Advice that drops the pages: the next touch maps fresh ones.
  if (advice == MADV_DONTNEED || advice == MADV_FREE || advice == MADV_REMOVE) {
    tagwire::verbs::notify(address, length);
  }
  return static_cast<int>(syscall(SYS_madvise, address, length, advice));
}

}  // extern "C"
#endif  // TAGWIRE_HAVE_UCM
