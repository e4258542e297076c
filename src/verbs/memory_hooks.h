// Memory hooks: the registration cache must forget a registration before
// the pages behind its addresses can change, or a later RDMA would move
// the old pages' bytes (silent corruption). The NIC pinned the pages at
// registration; the virtual range can still be unmapped, remapped, or
// emptied (MADV_DONTNEED) and then refilled with new pages.
//
// Where UCX is installed (the usual case; libucm is part of it), the events
// come from UCX's memory hooks (ucm_set_event_handler, UCM_EVENT_VM_UNMAPPED):
// they patch munmap, mremap, madvise, shmdt and brk in every loaded object
// and, where glibc's malloc unmaps internally, install malloc hooks of their
// own; UCX's registration cache rests on the same events.
//
// Without libucm, this library defines mmap (MAP_FIXED replaces pages),
// munmap, mremap and madvise itself
// (the dynamic linker finds them before libc's), tells the listeners which
// range is going, and makes the system call. What calls libc without the
// PLT cannot be seen then: glibc's own malloc returning memory (free of an
// mmapped chunk, heap trimming), so keep_malloc_memory_mapped() asks glibc
// to keep what it maps (no mmapped chunks, no trimming), as MPI libraries
// with a registration cache do. Still unseen there: raw syscall(SYS_munmap)
// and malloc_trim(3).
#pragma once

#include <cstddef>
#include <cstdint>

namespace tagwire::verbs {

// Called with the range [start, start + length) before it changes; from
// any thread, so the listener locks what it needs (and must not unmap).
using UnmapListener = void (*)(void* ctx, std::uintptr_t start, std::size_t length);

// At most a few listeners (one per live verbs transport).
bool add_unmap_listener(UnmapListener fn, void* ctx);
// Returns once no call to the listener is running any more.
void remove_unmap_listener(void* ctx);

// mallopt: no mmapped chunks and no trimming, so that free() never hands
// pages back to the kernel behind the hooks. Once per process.
void keep_malloc_memory_mapped();

}  // namespace tagwire::verbs
