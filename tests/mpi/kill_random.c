/* A rank killed at a random moment of mixed traffic (issue 31). Four ranks
 * (or more) run rounds; in each, every rank exchanges with every other:
 * eager messages, rendezvous messages both ways, a synchronous send, a
 * send it cancels, then an MPI_Allreduce on MPI_COMM_WORLD. The victim,
 * rank (SEED % (size - 1)) + 1, is SIGKILLed by a timer 1-40 ms after
 * MPI_Init (from SEED; KILL_RANDOM_DELAY_US sets it; with
 * KILL_RANDOM_RMA, after the window is made), wherever it is, inside the
 * library included.
 *
 * What every survivor checks, every round:
 *  - each operation with a live rank succeeds, with the data it should
 *    carry, and its cancelled send is cancelled;
 *  - each operation with the victim succeeds or ends with
 *    MPI_ERR_PROC_FAILED (MPI_ERR_PENDING inside MPI_ERR_IN_STATUS);
 *  - MPI_Allreduce returns the right sum or MPI_ERR_PROC_FAILED;
 *  - nothing hangs: the survivors then agree among themselves (a flag
 *    exchange without the victim, which must succeed) whether anyone saw
 *    the failure, and stop together; the launcher's --timeout is the
 *    hang check.
 * With KILL_RANDOM_RMA=1, each round also puts 8 bytes into every
 * peer's window, compare-and-swaps a word there, gets 256 KiB from it and
 * flushes it (passive target, lock_all), or, every other round, puts and
 * swaps at every peer and flushes them all at once; it checks what it got
 * from live ranks: a target that serves the victim's operations must
 * survive them.
 * Each survivor prints "kill-random: rank R ok" and finalizes;
 * tests/kill_random_test.sh checks that every survivor said so and that
 * the job's status is the victim's (137). Usage: mpi_kill_random SEED */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

enum { kBig = 256 << 10, kMaxRanks = 16, kPerPeer = 5, kMaxRounds = 1000000 };
enum { kEagerTag = 1, kRendezvousTag, kSyncTag, kCancelTag, kFlagTag };

static void die(int sig) {
  (void)sig;
  kill(getpid(), SIGKILL);
}

static int rank, size, victim;
/* The window's memory: its window is never freed (a collective the victim
 * cannot take part in), so it stays, reachable from here. */
static char* window;

/* An operation's outcome as a survivor sees it; returns 0 on a violation. */
static int acceptable(int err, int peer, const char* what, int round) {
  if (err == MPI_SUCCESS) return 1;
  if (peer == victim && (err == MPI_ERR_PROC_FAILED || err == MPI_ERR_PENDING)) return 1;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(err, text, &len);
  printf("kill-random: rank %d round %d: %s with rank %d ended with %d (%s)\n", rank, round, what,
         peer, err, text);
  return 0;
}

/* A post's own error (a send to a rank known dead fails at once): the
 * request is left null, and the error is judged as the operation's. */
static int posted(int err, MPI_Request* r, int peer, const char* what, int round, int* ok) {
  if (err == MPI_SUCCESS) return 0;
  *r = MPI_REQUEST_NULL;
  if (!acceptable(err, peer, what, round)) *ok = 0;
  return 1;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  const unsigned seed = argc > 1 ? (unsigned)atoi(argv[1]) : 1;
  if (size < 3 || size > kMaxRanks) {
    printf("kill-random: needs 3 to %d ranks\n", kMaxRanks);
    return 2;
  }
  victim = (int)(seed % (unsigned)(size - 1)) + 1;
  long delay_us = 1000 + (long)((seed * 7919u) % 39000u);
  if (getenv("KILL_RANDOM_DELAY_US")) delay_us = atol(getenv("KILL_RANDOM_DELAY_US"));
  char* big_out = malloc((size_t)kBig * kMaxRanks);
  char* big_in = malloc((size_t)kBig * kMaxRanks);
  /* One-sided traffic: a window of kBig bytes, (rank + 1) everywhere but
   * the words peers put and swap into (offsets below kMaxRanks * 16). */
  const char* rma_env = getenv("KILL_RANDOM_RMA");
  const int rma = rma_env != NULL && atoi(rma_env) != 0;
  MPI_Win win = MPI_WIN_NULL;
  window = malloc(kBig);
  char* got = malloc(kBig);
  memset(window, rank + 1, kBig);
  if (rma) {
    if (MPI_Win_create(window, kBig, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win) != MPI_SUCCESS ||
        MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN) != MPI_SUCCESS ||
        MPI_Win_lock_all(MPI_MODE_NOCHECK, win) != MPI_SUCCESS) {
      printf("kill-random: rank %d: the window could not be made\n", rank);
      return 1;
    }
  }
  /* The timer starts after the window is made: a creation that fails at
   * some ranks and not at others (ULFM allows it) would leave ranks
   * writing into windows their peers never made. */
  if (rank == victim) {
    signal(SIGALRM, die);
    struct itimerval t = {{0, 0}, {delay_us / 1000000, delay_us % 1000000}};
    setitimer(ITIMER_REAL, &t, NULL);
  }
  static long small_out[kMaxRanks], small_in[kMaxRanks], sync_in[kMaxRanks], cancel_out[kMaxRanks];
  static MPI_Request req[kMaxRanks * kPerPeer];
  static MPI_Status st[kMaxRanks * kPerPeer];
  static int req_peer[kMaxRanks * kPerPeer];
  static const char* req_what[kMaxRanks * kPerPeer];
  int ok = 1, failure_seen = 0, round = 0;
  const double t0 = MPI_Wtime();
  double seen_at = 0;
  for (round = 0; round < kMaxRounds; ++round) {
    int n = 0, local_failure = 0;
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      char* bo = big_out + (size_t)p * kBig;
      char* bi = big_in + (size_t)p * kBig;
      small_out[p] = (long)round * 1000 + rank;
      bo[0] = (char)round;
      bo[kBig - 1] = (char)(rank + 1);
      /* Receives first, then sends: every round's pattern is symmetric. */
      req_peer[n] = p, req_what[n] = "eager receive";
      local_failure |=
          posted(MPI_Irecv(&small_in[p], 1, MPI_LONG, p, kEagerTag, MPI_COMM_WORLD, &req[n]),
                 &req[n], p, req_what[n], round, &ok);
      ++n;
      req_peer[n] = p, req_what[n] = "rendezvous receive";
      local_failure |=
          posted(MPI_Irecv(bi, kBig, MPI_CHAR, p, kRendezvousTag, MPI_COMM_WORLD, &req[n]), &req[n],
                 p, req_what[n], round, &ok);
      ++n;
      req_peer[n] = p, req_what[n] = "synchronous receive";
      local_failure |=
          posted(MPI_Irecv(&sync_in[p], 1, MPI_LONG, p, kSyncTag, MPI_COMM_WORLD, &req[n]), &req[n],
                 p, req_what[n], round, &ok);
      ++n;
      req_peer[n] = p, req_what[n] = "eager send";
      local_failure |=
          posted(MPI_Isend(&small_out[p], 1, MPI_LONG, p, kEagerTag, MPI_COMM_WORLD, &req[n]),
                 &req[n], p, req_what[n], round, &ok);
      ++n;
      req_peer[n] = p, req_what[n] = "rendezvous send";
      local_failure |=
          posted(MPI_Isend(bo, kBig, MPI_CHAR, p, kRendezvousTag, MPI_COMM_WORLD, &req[n]), &req[n],
                 p, req_what[n], round, &ok);
      ++n;
    }
    /* The synchronous and cancelled sends after: each needs its peer. */
    MPI_Request extra[2 * kMaxRanks];
    MPI_Status extra_st[2 * kMaxRanks];
    int extra_peer[2 * kMaxRanks], m = 0;
    for (int p = 0; p < size; ++p) {
      if (p == rank) continue;
      cancel_out[p] = round;
      extra_peer[m] = p;
      local_failure |=
          posted(MPI_Issend(&small_out[p], 1, MPI_LONG, p, kSyncTag, MPI_COMM_WORLD, &extra[m]),
                 &extra[m], p, "synchronous send", round, &ok);
      ++m;
      extra_peer[m] = p;
      if (!posted(MPI_Isend(&cancel_out[p], 1, MPI_LONG, p, kCancelTag, MPI_COMM_WORLD, &extra[m]),
                  &extra[m], p, "cancelled send", round, &ok)) {
        local_failure |= posted(MPI_Cancel(&extra[m]), &extra[m], p, "MPI_Cancel", round, &ok);
      } else {
        local_failure = 1;
      }
      ++m;
    }
    int rc = MPI_Waitall(n, req, st);
    for (int i = 0; i < n; ++i) {
      const int p = req_peer[i];
      const int err = rc == MPI_SUCCESS         ? MPI_SUCCESS
                      : rc == MPI_ERR_IN_STATUS ? st[i].MPI_ERROR
                                                : rc;
      if (err != MPI_SUCCESS) local_failure = 1;
      if (!acceptable(err, p, req_what[i], round)) ok = 0;
      if (err != MPI_SUCCESS || p == victim) continue;
      if (strcmp(req_what[i], "eager receive") == 0 && small_in[p] != (long)round * 1000 + p) {
        printf("kill-random: rank %d round %d: eager data from %d is %ld\n", rank, round, p,
               small_in[p]);
        ok = 0;
      }
      if (strcmp(req_what[i], "rendezvous receive") == 0) {
        const char* bi = big_in + (size_t)p * kBig;
        if (bi[0] != (char)round || bi[kBig - 1] != (char)(p + 1)) {
          printf("kill-random: rank %d round %d: rendezvous data from %d is wrong\n", rank, round,
                 p);
          ok = 0;
        }
      }
    }
    rc = MPI_Waitall(m, extra, extra_st);
    for (int i = 0; i < m; ++i) {
      const int p = extra_peer[i];
      const int err = rc == MPI_SUCCESS         ? MPI_SUCCESS
                      : rc == MPI_ERR_IN_STATUS ? extra_st[i].MPI_ERROR
                                                : rc;
      if (err != MPI_SUCCESS) local_failure = 1;
      if (!acceptable(err, p, i % 2 ? "cancelled send" : "synchronous send", round)) ok = 0;
      if (i % 2 == 1 && err == MPI_SUCCESS && p != victim) {
        int cancelled = 0;
        MPI_Test_cancelled(&extra_st[i], &cancelled);
        if (!cancelled) {
          printf(
              "kill-random: rank %d round %d: a send to live rank %d nobody receives was not "
              "cancelled\n",
              rank, round, p);
          ok = 0;
        }
      }
    }
    /* Even rounds flush each target after its operations; odd ones flush
     * them all at once, whose error from the victim must be
     * MPI_ERR_PROC_FAILED too (not the transport's word for it). */
    const int flush_each = round % 2 == 0;
    /* Each an origin buffer until its flush. */
    long words[kMaxRanks], olds[kMaxRanks], compares[kMaxRanks];
    int issued[kMaxRanks] = {0};
    for (int p = 0; p < size && win != MPI_WIN_NULL; ++p) {
      if (p == rank) continue;
      /* The swap word holds (p + 1) in every byte until the first swap,
       * then the round of the last one. */
      words[p] = (long)round;
      olds[p] = -1;
      compares[p] = (long)round - 1;
      if (round == 0) memset(&compares[p], p + 1, sizeof compares[p]);
      const char* step = "MPI_Put";
      int err = MPI_Put(&words[p], 1, MPI_LONG, p, (MPI_Aint)(rank * 16), 1, MPI_LONG, win);
      if (err == MPI_SUCCESS) {
        step = "MPI_Compare_and_swap";
        err = MPI_Compare_and_swap(&words[p], &compares[p], &olds[p], MPI_LONG, p,
                                   (MPI_Aint)(rank * 16 + 8), win);
      }
      if (err == MPI_SUCCESS && flush_each) {
        step = "MPI_Get";
        err = MPI_Get(got, kBig, MPI_CHAR, p, 0, kBig, MPI_CHAR, win);
      }
      if (err == MPI_SUCCESS && flush_each) {
        step = "MPI_Win_flush";
        err = MPI_Win_flush(p, win);
      }
      if (err != MPI_SUCCESS) local_failure = 1;
      if (!acceptable(err, p, step, round)) ok = 0;
      if (err != MPI_SUCCESS || p == victim) continue;
      issued[p] = 1;
      if (flush_each && (got[kMaxRanks * 16] != (char)(p + 1) || got[kBig - 1] != (char)(p + 1) ||
                         olds[p] != compares[p])) {
        printf("kill-random: rank %d round %d: one-sided data from %d is wrong (old %ld)\n", rank,
               round, p, olds[p]);
        ok = 0;
      }
    }
    if (!flush_each && win != MPI_WIN_NULL) {
      int err = MPI_Win_flush_all(win);
      if (err != MPI_SUCCESS) local_failure = 1;
      if (!acceptable(err, victim, "MPI_Win_flush_all", round)) ok = 0;
      for (int p = 0; p < size && err == MPI_SUCCESS; ++p) {
        if (issued[p] && olds[p] != compares[p]) {
          printf("kill-random: rank %d round %d: compare-and-swap at %d found %ld\n", rank, round,
                 p, olds[p]);
          ok = 0;
        }
      }
    }
    long mine = rank + 1, sum = 0;
    rc = MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rc == MPI_SUCCESS && sum != (long)size * (size + 1) / 2) {
      printf("kill-random: rank %d round %d: MPI_Allreduce gave %ld\n", rank, round, sum);
      ok = 0;
    } else if (rc != MPI_SUCCESS) {
      local_failure = 1;
      if (!acceptable(rc, victim, "MPI_Allreduce", round)) ok = 0;
    }
    if (local_failure && !failure_seen) {
      failure_seen = 1;
      seen_at = MPI_Wtime();
    }
    /* The survivors agree whether to stop: a flag exchange among them.
     * The victim takes no part: it runs rounds until it dies. */
    if (rank == victim) continue;
    int flags_in[kMaxRanks] = {0};
    MPI_Request fr[2 * kMaxRanks];
    int f = 0;
    for (int p = 0; p < size; ++p) {
      if (p == rank || p == victim) continue;
      MPI_Irecv(&flags_in[p], 1, MPI_INT, p, kFlagTag, MPI_COMM_WORLD, &fr[f++]);
      MPI_Isend(&failure_seen, 1, MPI_INT, p, kFlagTag, MPI_COMM_WORLD, &fr[f++]);
    }
    rc = MPI_Waitall(f, fr, MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS) {
      printf("kill-random: rank %d round %d: the survivors' flag exchange failed (%d)\n", rank,
             round, rc);
      ok = 0;
      break;
    }
    int stop = failure_seen;
    for (int p = 0; p < size; ++p) stop |= flags_in[p];
    if (stop) break;
  }
  if (!failure_seen && round >= kMaxRounds) {
    printf("kill-random: rank %d: no failure in %d rounds\n", rank, round);
    ok = 0;
  }
  if (ok) {
    printf(
        "kill-random: rank %d ok (victim %d after %ld us; %d rounds; failure seen after %.0f ms)\n",
        rank, victim, delay_us, round + 1, failure_seen ? (seen_at - t0) * 1e3 : -1.0);
  }
  fflush(stdout);
  MPI_Finalize();
  free(big_out);
  free(big_in);
  free(got);
  return ok ? 0 : 1;
}
