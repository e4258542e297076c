/* Timed runs as the median of up to kChunks chunks, shared by osu_p2p.c and
 * coll_latency.c: a host that takes the CPUs away for 4-12 ms every ~8 ms
 * makes a whole run's mean say whether the run caught such a gap, where the
 * median chunk says what a call costs. Plain C, no Tagwire header: each
 * MPI's own wrapper builds these programs. */
#ifndef TAGWIRE_BENCH_CHUNKED_MEDIAN_H
#define TAGWIRE_BENCH_CHUNKED_MEDIAN_H

#include <stdlib.h>

enum { kChunks = 20 };

/* `iters` (>= 1) timed iterations in *count (<= kChunks) chunks of *per. */
static inline void chunk_split(int iters, int* per, int* count) {
  *per = iters / kChunks > 0 ? iters / kChunks : 1;
  *count = iters / *per < kChunks ? iters / *per : kChunks;
}

static inline int chunk_by_value(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

/* The median of v[0..n) (sorts v). */
static inline double median_of(double* v, int n) {
  qsort(v, (size_t)n, sizeof v[0], chunk_by_value);
  return v[n / 2];
}

#endif
