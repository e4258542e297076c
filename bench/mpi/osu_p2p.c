/* Point-to-point benchmarks in the shape of the OSU micro-benchmarks,
 * written from their published behaviour, against mpi.h only, so the same
 * source builds with tagwire-cc, Open MPI's mpicc or MPICH's mpicc.
 *
 *   osu_p2p latency   ping-pong between ranks 0 and 1; one-way latency (us)
 *   osu_p2p bw        rank 0 posts a window of 64 sends, rank 1 64 receives,
 *                     then a 4-byte ack; MB/s
 *   osu_p2p bibw      both directions at once, window 64; MB/s
 *   osu_p2p mbw_mr    pairs (i, i + n/2) stream windows of 64; MB/s and
 *                     messages/s summed over the pairs
 *   osu_p2p fop_latency  rank 0 MPI_Fetch_and_op (MPI_SUM, MPI_INT64_T) on
 *                     rank 1's window, each followed by MPI_Win_flush, under
 *                     a shared MPI_Win_lock (osu_fop_latency's default);
 *                     us per operation, printed as size 8
 *   osu_p2p cas_latency  the same with MPI_Compare_and_swap
 *   osu_p2p put_latency, get_latency  the same with an 8-byte MPI_Put
 *                     (MPI_Get) of MPI_INT64_T (osu_put_latency -s flush)
 *   osu_p2p put_bw, get_bw  rank 0 issues a window of 64 MPI_Put (MPI_Get)
 *                     of the size into (from) rank 1's MPI_Win_allocate
 *                     memory, then one MPI_Win_flush, under a shared lock
 *                     (osu_put_bw -s flush); MB/s. Rank 1 checks what
 *                     arrived (rank 0 what it read).
 * Every latency, and the rates of bw, bibw and mbw_mr, is the median of up
 * to 20 chunks of the timed iterations (ping-pongs, windows, calls), not
 * OSU's mean of the whole run: 10,000 ping-pongs of 0.2 us are 4 ms, and a
 * host that takes the CPUs away for 4-12 ms every ~8 ms (the 2-core VM
 * this was written on) makes such a mean say whether the run caught a gap
 * (bench/mpi/coll_latency.c does the same for the collectives). The
 * one-way bandwidth of put_bw / get_bw stays the whole run's.
 * Options: -m MIN:MAX message sizes (default 0:4194304), -i ITERS for small
 * messages (default 10000 latency, 100 windows otherwise; fewer above
 * 8 KiB, see iters_for), -x WARMUP. Output: "# test" header, then "size value [rate]",
 * then a "# matching:" line with who matched the messages (the NIC or
 * software, summed over the ranks), read through MPI_T where the MPI
 * offers Tagwire's counters; bw and mbw_mr also print a "# cpu:" line, the
 * user and system CPU time (getrusage, every thread of the process) each
 * side of the first pair spent per message over the timed windows: where
 * the sender is busy all the time, that says whose work sets the rate (on
 * soft-RoCE, the kernel's per WRITE).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include "chunked_median.h"

#define WINDOW 64
#define LARGE 8192

static int rank, size;

static void die(const char* why) {
  if (rank == 0) fprintf(stderr, "osu_p2p: %s\n", why);
  MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Above LARGE the count shrinks with the size (the same bytes moved per
 * point), down to 20 (or -i, if smaller): a 4 MiB point then takes a
 * second, not a minute. */
static int iters_for(long bytes, int small) {
  if (bytes <= LARGE) return small;
  long n = (long)small * LARGE / bytes;
  int floor = small < 20 ? small : 20;
  return n > floor ? (int)n : floor;
}

/* Warm-up rounds before `n` timed ones: -x's, or a tenth of them (at least 2). */
static int warmup_for(int n, int warmup) {
  if (warmup >= 0) return warmup;
  return n / 10 > 2 ? n / 10 : 2;
}

/* The timed iterations in up to kChunks chunks (the last takes the
 * remainder): chunk_tick at the top of every iteration, chunk_median after
 * the last for the median seconds per iteration. */
struct chunks {
  int iters, per, count;
  double t0, seconds[kChunks];
};

static struct chunks chunks_for(int iters) {
  struct chunks c = {iters, 1, 1, 0, {0}};
  if (iters < 1) die("a timed run needs -i 1 or more");
  chunk_split(iters, &c.per, &c.count);
  return c;
}

static void chunk_tick(struct chunks* c, int timed) {
  if (timed < 0 || timed % c->per != 0 || timed / c->per >= c->count) return;
  const double now = MPI_Wtime();
  if (timed > 0) c->seconds[timed / c->per - 1] = (now - c->t0) / c->per;
  c->t0 = now;
}

static double chunk_median(struct chunks* c) {
  c->seconds[c->count - 1] = (MPI_Wtime() - c->t0) / (c->iters - (c->count - 1) * c->per);
  return median_of(c->seconds, c->count);
}

static double latency(char* s, char* r, long bytes, int iters, int warmup) {
  struct chunks c = chunks_for(iters);
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < iters + warmup; ++i) {
    chunk_tick(&c, i - warmup);
    if (rank == 0) {
      MPI_Send(s, (int)bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD);
      MPI_Recv(r, (int)bytes, MPI_CHAR, 1, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    } else if (rank == 1) {
      MPI_Recv(r, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      MPI_Send(s, (int)bytes, MPI_CHAR, 0, 1, MPI_COMM_WORLD);
    }
  }
  return chunk_median(&c) * 1e6 / 2.0;
}

enum one_sided { FOP, CAS, PUT, GET };

/* One-sided: rank 0 updates (or reads) a 64-bit word in rank 1's window,
 * flushing each; us per operation. */
static double one_sided_latency(enum one_sided op, int iters, int warmup) {
  long long* base = NULL;
  MPI_Win win;
  MPI_Win_allocate(sizeof(long long), sizeof(long long), MPI_INFO_NULL, MPI_COMM_WORLD, &base,
                   &win);
  *base = op == GET ? 42 : 0;
  MPI_Barrier(MPI_COMM_WORLD);
  struct chunks c = chunks_for(iters);
  double us = 0;
  if (rank == 0) {
    long long one = 1, old = 0, expect = 0;
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    for (int i = 0; i < iters + warmup; ++i) {
      chunk_tick(&c, i - warmup);
      if (op == CAS) {
        long long next = expect + 1;
        MPI_Compare_and_swap(&next, &expect, &old, MPI_INT64_T, 1, 0, win);
        expect = old == expect ? next : old;
      } else if (op == FOP) {
        MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 0, MPI_SUM, win);
      } else if (op == PUT) {
        long long value = i + 1; /* the count, as the atomics leave it */
        MPI_Put(&value, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win);
      } else {
        old = 0;
        MPI_Get(&old, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win);
      }
      MPI_Win_flush(1, win);
      if (op == GET && old != 42) {
        fprintf(stderr, "osu_p2p: MPI_Get read %lld, not 42\n", old);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
    }
    us = chunk_median(&c) * 1e6;
    MPI_Win_unlock(1, win);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank == 1 && op != GET) {
    /* read through MPI: a plain load need not see a NIC's update */
    long long now = -1;
    MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
    MPI_Fetch_and_op(NULL, &now, MPI_INT64_T, 1, 0, MPI_NO_OP, win);
    MPI_Win_unlock(1, win);
    if (now != (long long)(iters + warmup)) {
      fprintf(stderr, "osu_p2p: the word holds %lld after %d updates\n", now, iters + warmup);
      MPI_Abort(MPI_COMM_WORLD, 3);
    }
  }
  MPI_Win_free(&win);
  return us;
}

/* One-sided bandwidth: rank 0 puts (gets) windows of WINDOW transfers of
 * `bytes`, each window then flushed. Puts all land at displacement 0 (as
 * OSU's do); gets each fill their own part of `into`, which holds WINDOW *
 * `bytes`. Returns seconds for `iters` windows after warm-up, on rank 0. */
static double one_sided_stream(int get, const char* from, char* into, long bytes, int iters,
                               int warmup, MPI_Win win) {
  double t0 = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  if (rank != 0) return 0;
  MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
  for (int i = 0; i < iters + warmup; ++i) {
    if (i == warmup) t0 = MPI_Wtime();
    for (int j = 0; j < WINDOW; ++j) {
      if (get)
        MPI_Get(into + (size_t)j * (size_t)bytes, (int)bytes, MPI_CHAR, 1, 0, (int)bytes, MPI_CHAR,
                win);
      else
        MPI_Put(from, (int)bytes, MPI_CHAR, 1, 0, (int)bytes, MPI_CHAR, win);
    }
    MPI_Win_flush(1, win);
  }
  t0 = MPI_Wtime() - t0;
  MPI_Win_unlock(1, win);
  return t0;
}

/* Whether `bytes` of `p` are the pattern osu_p2p fills buffers with. */
static int is_pattern(const char* p, long bytes, char c) {
  for (long i = 0; i < bytes; ++i)
    if (p[i] != c) return 0;
  return 1;
}

static void one_sided_bw(int get, long min, long max, int iters, int warmup) {
  size_t room = (size_t)(max > 0 ? max : 1);
  char* window = NULL;
  MPI_Win win;
  MPI_Win_allocate((MPI_Aint)room, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
  char* from = malloc(room);
  char* into = malloc(room * WINDOW);
  if (from == NULL || into == NULL) die("out of memory");
  memset(from, 'p', room);
  for (long bytes = min > 0 ? min : 1; bytes <= max; bytes *= 2) {
    /* a put must change the target's bytes; a get must read them */
    MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
    memset(window, get ? 'g' : 0, room);
    MPI_Win_unlock(rank, win);
    memset(into, 0, room * WINDOW);
    int n = iters_for(bytes, iters);
    int w = warmup_for(n, warmup);
    double secs = one_sided_stream(get, from, into, bytes, n, w, win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (get && rank == 0 && !is_pattern(into, bytes * WINDOW, 'g'))
      die("MPI_Get read bytes the window does not hold");
    if (!get && rank == 1) {
      /* read through MPI: a plain load need not see a NIC's write */
      MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
      MPI_Get(into, (int)bytes, MPI_CHAR, 1, 0, (int)bytes, MPI_CHAR, win);
      MPI_Win_unlock(1, win);
      if (!is_pattern(into, bytes, 'p')) {
        fprintf(stderr, "osu_p2p: the window does not hold what MPI_Put wrote (%ld B)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
      }
    }
    if (rank == 0)
      printf("%-10ld %12.2f\n", bytes, (double)n * WINDOW * (double)bytes / secs / 1e6);
    fflush(stdout);
  }
  free(from);
  free(into);
  MPI_Win_free(&win);
}

/* CPU seconds (user, system) this process spent over the last stream()'s
 * timed windows. */
static double stream_cpu[2];

static void cpu_now(double out[2]) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  out[0] = (double)u.ru_utime.tv_sec + (double)u.ru_utime.tv_usec * 1e-6;
  out[1] = (double)u.ru_stime.tv_sec + (double)u.ru_stime.tv_usec * 1e-6;
}

/* One pair streams windows from `from` to `to` (both directions if bidir).
 * Returns seconds for `iters` windows after warm-up, at the median
 * window's pace. */
static double stream(char* s, char* r, long bytes, int iters, int warmup, int from, int to,
                     int bidir) {
  MPI_Request reqs[2 * WINDOW];
  /* Real statuses, not MPI_STATUSES_IGNORE: MPICH's header makes that a
   * pointer GCC warns about when it is passed as an array. */
  MPI_Status stats[2 * WINDOW];
  char ack = 0;
  struct chunks c = chunks_for(iters);
  int me_sends = rank == from || bidir, me_recvs = rank == to || bidir;
  int peer = rank == from ? to : from;
  double cpu0[2] = {0, 0};
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < iters + warmup; ++i) {
    chunk_tick(&c, i - warmup);
    if (i == warmup) cpu_now(cpu0);
    int n = 0;
    for (int w = 0; w < WINDOW && me_recvs; ++w)
      MPI_Irecv(r + (size_t)w * (size_t)bytes, (int)bytes, MPI_CHAR, peer, 100, MPI_COMM_WORLD,
                &reqs[n++]);
    for (int w = 0; w < WINDOW && me_sends; ++w)
      MPI_Isend(s, (int)bytes, MPI_CHAR, peer, 100, MPI_COMM_WORLD, &reqs[n++]);
    MPI_Waitall(n, reqs, stats);
    if (!bidir) {
      if (rank == to)
        MPI_Send(&ack, 1, MPI_CHAR, from, 101, MPI_COMM_WORLD);
      else
        MPI_Recv(&ack, 1, MPI_CHAR, to, 101, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
  }
  cpu_now(stream_cpu);
  stream_cpu[0] -= cpu0[0];
  stream_cpu[1] -= cpu0[1];
  return chunk_median(&c) * iters;
}

/* Sums the named MPI_T counters over the ranks into `out` (rank 0); 0 if
 * this MPI has no such variables (another implementation). */
static int read_counters(const char* const* names, int n, unsigned long long* out) {
  int provided = 0, ok;
  unsigned long long mine[8] = {0};
  if (n > 8 || MPI_T_init_thread(MPI_THREAD_SINGLE, &provided) != MPI_SUCCESS) return 0;
  MPI_T_pvar_session session;
  const int have_session = MPI_T_pvar_session_create(&session) == MPI_SUCCESS;
  ok = have_session;
  for (int i = 0; ok && i < n; ++i) {
    int index = -1, count = 0;
    MPI_T_pvar_handle handle;
    if (MPI_T_pvar_get_index(names[i], MPI_T_PVAR_CLASS_COUNTER, &index) != MPI_SUCCESS ||
        MPI_T_pvar_handle_alloc(session, index, NULL, &handle, &count) != MPI_SUCCESS) {
      ok = 0;
      break;
    }
    if (count != 1 || MPI_T_pvar_read(session, handle, &mine[i]) != MPI_SUCCESS) ok = 0;
    MPI_T_pvar_handle_free(session, &handle);
  }
  if (have_session) MPI_T_pvar_session_free(&session);
  MPI_T_finalize();
  int all_ok = 0;
  MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_ok) return 0;
  MPI_Reduce(mine, out, n, MPI_UNSIGNED_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  return 1;
}

static void report_matching(void) {
  static const char* const names[] = {"tagwire_matched_by_nic", "tagwire_matched_by_software",
                                      "tagwire_nic_fallbacks", "tagwire_nic_syncs"};
  /* Rendezvous bytes, and how many of them the senders copied themselves
   * (Tagwire's shared memory splits a large read with its sender). */
  static const char* const copies[] = {"tagwire_transport_bytes_read",
                                       "tagwire_transport_bytes_helped_by_peers"};
  unsigned long long c[4] = {0}, b[2] = {0};
  const int have = read_counters(names, 4, c);
  const int have_copies = read_counters(copies, 2, b);
  if (rank != 0) return;
  if (have)
    printf("# matching: by NIC %llu, by software %llu, NIC fallbacks %llu, syncs %llu\n", c[0],
           c[1], c[2], c[3]);
  else
    printf("# matching: this MPI offers no tagwire_* MPI_T counters\n");
  if (have_copies && b[0] > 0)
    printf("# copies: %llu bytes read by receivers, %llu of them copied by their senders\n", b[0],
           b[1]);
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc < 2)
    die("usage: osu_p2p latency|bw|bibw|mbw_mr|fop_latency|cas_latency|put_latency|get_latency"
        "|put_bw|get_bw [-m MIN:MAX] [-i ITERS] [-x WARMUP]");
  const char* test = argv[1];
  long min = 0, max = 4L << 20;
  const int fop = strcmp(test, "fop_latency") == 0, cas = strcmp(test, "cas_latency") == 0;
  const int put = strcmp(test, "put_latency") == 0, get = strcmp(test, "get_latency") == 0;
  const int one_sided = fop || cas || put || get;
  const int put_bw = strcmp(test, "put_bw") == 0, get_bw = strcmp(test, "get_bw") == 0;
  int iters = strcmp(test, "latency") == 0 || one_sided ? 10000 : 100, warmup = -1;
  for (int i = 2; i < argc; ++i) {
    if (strcmp(argv[i], "-m") == 0 && i + 1 < argc) {
      if (sscanf(argv[++i], "%ld:%ld", &min, &max) != 2 || min < 0 || max < min) die("bad -m");
    } else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc) {
      iters = atoi(argv[++i]);
    } else if (strcmp(argv[i], "-x") == 0 && i + 1 < argc) {
      warmup = atoi(argv[++i]);
    } else {
      die("unknown option");
    }
  }
  if (size < 2) die("needs at least 2 ranks");
  int pairs = strcmp(test, "mbw_mr") == 0 ? size / 2 : 1;
  if (strcmp(test, "latency") && strcmp(test, "bw") && strcmp(test, "bibw") &&
      strcmp(test, "mbw_mr") && !one_sided && !put_bw && !get_bw)
    die("unknown test");
  if (put_bw || get_bw) {
    if (rank == 0) printf("# osu_p2p %s, %d rank(s)\n", test, size);
    one_sided_bw(get_bw, min, max, iters, warmup);
    MPI_Finalize();
    return 0;
  }
  if (one_sided) {
    if (rank == 0) printf("# osu_p2p %s, %d rank(s)\n", test, size);
    int w = warmup_for(iters, warmup);
    double us = one_sided_latency(fop ? FOP : cas ? CAS : put ? PUT : GET, iters, w);
    if (rank == 0) printf("%-10d %12.3f\n", 8, us);
    MPI_Finalize();
    return 0;
  }
  size_t room = (size_t)(max > 0 ? max : 1);
  char* s = malloc(room);
  char* r = malloc(room * WINDOW);
  if (s == NULL || r == NULL) die("out of memory");
  memset(s, 'a', room);
  if (rank == 0) printf("# osu_p2p %s, %d rank(s) in %d pair(s)\n", test, size, pairs);
  for (long bytes = min; bytes <= max; bytes = bytes == 0 ? 1 : bytes * 2) {
    int n = iters_for(bytes, iters);
    int w = warmup_for(n, warmup);
    if (strcmp(test, "latency") == 0) {
      double us = latency(s, r, bytes, n, w);
      if (rank == 0) printf("%-10ld %12.2f\n", bytes, us);
    } else {
      int bidir = strcmp(test, "bibw") == 0;
      int from = rank % (size / 2 > 0 ? size / 2 : 1), to = from + size / 2;
      if (pairs == 1) from = 0, to = 1;
      double secs = 0;
      if (rank == from || rank == to)
        secs = stream(s, r, bytes, n, w, from, to, bidir);
      else
        MPI_Barrier(MPI_COMM_WORLD); /* ranks outside the pairs join the start */
      double messages = (double)n * WINDOW * (bidir ? 2 : 1);
      double rate = secs > 0 && rank == from ? messages / secs : 0, total = 0;
      MPI_Reduce(&rate, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
      if (rank == 0) printf("%-10ld %12.2f %14.0f\n", bytes, total * (double)bytes / 1e6, total);
      if (!bidir) {
        /* The first pair's two sides, microseconds per message. */
        double mine[2] = {0, 0}, theirs[2] = {0, 0};
        if (rank == from || rank == to) {
          mine[0] = stream_cpu[0] / messages * 1e6;
          mine[1] = stream_cpu[1] / messages * 1e6;
        }
        if (rank == to && from == 0) MPI_Send(mine, 2, MPI_DOUBLE, 0, 102, MPI_COMM_WORLD);
        if (rank == 0) {
          MPI_Recv(theirs, 2, MPI_DOUBLE, to, 102, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
          printf(
              "# cpu: %ld B, us per message over the timed windows: sender user %.2f system "
              "%.2f, receiver user %.2f system %.2f\n",
              bytes, mine[0], mine[1], theirs[0], theirs[1]);
        }
      }
    }
    fflush(stdout);
  }
  report_matching();
  free(s);
  free(r);
  MPI_Finalize();
  return 0;
}
