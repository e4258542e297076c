/* Rendezvous from and into memory that changes under the registration
 * cache: the same buffer with new contents, a buffer freed and allocated
 * again (likely at the same address), an mmap unmapped and mapped again
 * (likely at the same address), one replaced in place by MAP_FIXED, pages
 * dropped with MADV_DONTNEED and written again,
 * and a buffer grown (and so moved) by mremap. Over verbs every one of these is a cache
 * hit or an invalidation; a stale registration would deliver the old pages'
 * bytes, which the receiver checks for. Ranks pair up 0-1, 2-3, ...; an odd
 * last rank only joins the barrier. */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"

enum { kBytes = 1 << 20 }; /* far above any eager threshold: rendezvous */

static void fill(unsigned char* p, int round) {
  for (size_t i = 0; i < kBytes; ++i) p[i] = (unsigned char)(i * 7 + (size_t)round * 131);
}
static int intact(const unsigned char* p, int round) {
  for (size_t i = 0; i < kBytes; ++i) {
    if (p[i] != (unsigned char)(i * 7 + (size_t)round * 131)) return 0;
  }
  return 1;
}

static void* map_at(void* where) {
  int flags = MAP_PRIVATE | MAP_ANONYMOUS | (where != NULL ? MAP_FIXED : 0);
  void* p = mmap(where, kBytes, PROT_READ | PROT_WRITE, flags, -1, 0);
  return p == MAP_FAILED ? NULL : p;
}

/* One round: the sender fills its buffer with the round's pattern and sends,
 * the receiver receives into its buffer and checks. */
static void round_trip(int peer, int sender, unsigned char* buf, int round) {
  if (sender) {
    fill(buf, round);
    CHECK(MPI_Send(buf, kBytes, MPI_BYTE, peer, round, MPI_COMM_WORLD) == MPI_SUCCESS);
  } else {
    memset(buf, 0xee, kBytes);
    CHECK(MPI_Recv(buf, kBytes, MPI_BYTE, peer, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE) ==
          MPI_SUCCESS);
    CHECK(intact(buf, round));
  }
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int peer = rank ^ 1;
  if (peer < size) {
    const int sender = rank % 2 == 0;
    int round = 0;
    /* Both sides do the same to their buffers: the sender's is the
     * rendezvous source, the receiver's the READ destination. */
    unsigned char* heap = malloc(kBytes);
    CHECK(heap != NULL);
    for (int i = 0; i < 3; ++i) round_trip(peer, sender, heap, ++round); /* hits */
    free(heap);
    for (int i = 0; i < 3; ++i) {
      heap = malloc(kBytes); /* often the same address, new or reused pages */
      CHECK(heap != NULL);
      round_trip(peer, sender, heap, ++round);
      free(heap);
    }
    /* Never MAP_FIXED onto a range this program gave back: another thread
     * (UCX's, ASan's allocator) may have mapped it meanwhile. A fresh mmap
     * usually lands on the range just unmapped, which is the case wanted. */
    unsigned char* m = map_at(NULL);
    CHECK(m != NULL);
    round_trip(peer, sender, m, ++round);
    CHECK(munmap(m, kBytes) == 0);
    m = map_at(NULL); /* likely the same addresses, new pages */
    CHECK(m != NULL);
    round_trip(peer, sender, m, ++round);
    CHECK(map_at(m) == m); /* MAP_FIXED over our own live mapping: new pages, same addresses */
    round_trip(peer, sender, m, ++round);
    CHECK(madvise(m, kBytes, MADV_DONTNEED) == 0); /* the pages go; touching maps new ones */
    round_trip(peer, sender, m, ++round);
    /* Grow it with MREMAP_MAYMOVE (it moves unless the next pages are
     * free), then map fresh pages (likely where it was). (Not
     * MREMAP_FIXED: UCX 1.13's memory hooks drop mremap's fifth argument.) */
    unsigned char* moved = mremap(m, kBytes, 2 * kBytes, MREMAP_MAYMOVE);
    CHECK(moved != MAP_FAILED);
    round_trip(peer, sender, moved, ++round);
    unsigned char* fresh = map_at(NULL);
    CHECK(fresh != NULL);
    round_trip(peer, sender, fresh, ++round);
    CHECK(munmap(fresh, kBytes) == 0);
    CHECK(munmap(moved, 2 * kBytes) == 0);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return tw_finish("rcache") == 0 ? 0 : 1;
}
