/* The floor for one-node latency: one cache line handed back and forth
 * between two processes on two cores, with nothing else. An MPI library's
 * 8-byte ping-pong cannot beat it; bench/compare prints it beside every
 * library as the "floor" column.
 *
 *   cacheline_floor [ITERATIONS]   prints "floor latency_us <one-way us>"
 *
 * The two processes are bound to the first two CPUs this one may use (as
 * tagwire-run and mpirun bind two ranks); with one CPU they share it and the
 * figure says so (the scheduler, not the cache, sets it then). */
#define _GNU_SOURCE
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

struct line {
  _Alignas(64) _Atomic uint64_t value;
};

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
}

static void bind_to(int nth) {
  cpu_set_t allowed, one;
  if (sched_getaffinity(0, sizeof(allowed), &allowed) != 0) return;
  int seen = 0, count = CPU_COUNT(&allowed);
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &allowed)) continue;
    if (seen++ == nth % count) {
      CPU_ZERO(&one);
      CPU_SET(c, &one);
      sched_setaffinity(0, sizeof(one), &one);
      return;
    }
  }
}

int main(int argc, char** argv) {
  const long iterations = argc > 1 ? atol(argv[1]) : 1000000;
  struct line* l =
      mmap(NULL, sizeof(*l), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (l == MAP_FAILED || iterations <= 0) return 1;
  atomic_store(&l->value, 0);
  pid_t child = fork();
  if (child < 0) return 1;
  bind_to(child == 0 ? 1 : 0);
  /* the parent writes odd values, the child answers with the next even one */
  const uint64_t mine = child == 0 ? 0 : 1;
  double start = 0;
  for (long i = 0; i < iterations + 1000; ++i) {
    if (i == 1000) start = now_us(); /* warm-up done */
    const uint64_t turn = 2 * (uint64_t)i + mine;
    if (mine == 1) {
      atomic_store_explicit(&l->value, turn, memory_order_release);
      while (atomic_load_explicit(&l->value, memory_order_acquire) != turn + 1) {
      }
    } else {
      while (atomic_load_explicit(&l->value, memory_order_acquire) != turn + 1) {
      }
      atomic_store_explicit(&l->value, turn + 2, memory_order_release);
    }
  }
  if (child == 0) _exit(0);
  const double elapsed = now_us() - start;
  int status = 0;
  waitpid(child, &status, 0);
  printf("floor latency_us %.4f\n", elapsed / (2.0 * (double)iterations));
  return 0;
}
