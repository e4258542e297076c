/* MPI_THREAD_MULTIPLE as a probe/cancel test harness uses it: four threads
 * per rank at once, in a ring (each rank sends to the next, receives from
 * the previous).
 *  1. Probe + Recv: two threads per tag compete, so a probed message can be
 *     stolen by the other thread's receive; every message arrives exactly
 *     once, intact, and each thread sees each sender thread's messages in
 *     send order (non-overtaking survives the threads).
 *  2. Mprobe + Mrecv: the matched message cannot be stolen: the Mrecv gets
 *     exactly what its Mprobe's status described (size, tag, content).
 *  3. Cancel: receives cancelled while the matching send races them, and
 *     sends nobody receives cancelled; either the cancel or the
 *     communication succeeds, and a cancelled message is received later.
 * Under TSan in CI (suite "threaded"). */
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 4
#define PER_THREAD 200 /* messages each thread sends in phases 1 and 2 */
#define MAX_BYTES 256

static int rank, size, next, prev;
static atomic_int failures;
static atomic_int checks;

#define TCHECK(cond)                                                                             \
  do {                                                                                           \
    atomic_fetch_add(&checks, 1);                                                                \
    if (!(cond)) {                                                                               \
      atomic_fetch_add(&failures, 1);                                                            \
      fprintf(stderr, "[rank %d] check failed at %s:%d: %s\n", rank, __FILE__, __LINE__, #cond); \
    }                                                                                            \
  } while (0)

/* A message: who sent it (thread, sequence) and a body derived from both. */
typedef struct {
  int sender_thread;
  int seq;
  unsigned char body[MAX_BYTES];
} Msg;

static int length_of(int thread, int seq) {
  return 8 + (thread * 37 + seq * 11) % (MAX_BYTES - 8);
}
static unsigned char byte_of(int thread, int seq, int i) {
  return (unsigned char)(thread * 31 + seq * 7 + i + prev);
}

static void fill(Msg* m, int thread, int seq) {
  m->sender_thread = thread;
  m->seq = seq;
  for (int i = 0; i < MAX_BYTES; ++i)
    m->body[i] = (unsigned char)(thread * 31 + seq * 7 + i + rank);
}

static int wire_bytes(const Msg* m) {
  return (int)(2 * sizeof(int)) + length_of(m->sender_thread, m->seq);
}

static int intact(const Msg* m, int bytes) {
  if (m->sender_thread < 0 || m->sender_thread >= THREADS) return 0;
  if (m->seq < 0 || m->seq >= PER_THREAD) return 0;
  if (bytes != wire_bytes(m)) return 0;
  for (int i = 0; i < length_of(m->sender_thread, m->seq); ++i) {
    if (m->body[i] != byte_of(m->sender_thread, m->seq, i)) return 0;
  }
  return 1;
}

/* seen[phase][sender_thread][seq]: how often each message arrived. */
static atomic_int seen[2][THREADS][PER_THREAD];

/* Starts this thread's sends (nonblocking: every rank's threads send and
 * receive at once around the ring). */
static void start_sends(int phase, int t, Msg* out, MPI_Request* requests) {
  /* Tag: which pair of receiving threads competes for it. */
  const int tag = 100 * phase + t % 2;
  for (int seq = 0; seq < PER_THREAD; ++seq) {
    fill(&out[seq], t, seq);
    TCHECK(MPI_Isend(&out[seq], wire_bytes(&out[seq]), MPI_BYTE, next, tag, MPI_COMM_WORLD,
                     &requests[seq]) == MPI_SUCCESS);
  }
}

static void receive_probed(int t) {
  const int tag = t % 2;
  int last[THREADS];
  for (int i = 0; i < THREADS; ++i) last[i] = -1;
  /* Two sender threads per tag send PER_THREAD each; two receiving threads
   * (this one and the one of the other parity's partner) share them. */
  for (int n = 0; n < PER_THREAD; ++n) {
    MPI_Status probed, got;
    TCHECK(MPI_Probe(prev, tag, MPI_COMM_WORLD, &probed) == MPI_SUCCESS);
    TCHECK(probed.MPI_SOURCE == prev && probed.MPI_TAG == tag);
    Msg m;
    memset(&m, 0, sizeof m);
    /* The other thread may take the probed message first: this receive then
     * gets the next one with that tag, which must exist (counts agree). */
    TCHECK(MPI_Recv(&m, (int)sizeof m, MPI_BYTE, prev, tag, MPI_COMM_WORLD, &got) == MPI_SUCCESS);
    int bytes = -1;
    MPI_Get_count(&got, MPI_BYTE, &bytes);
    TCHECK(intact(&m, bytes));
    if (!intact(&m, bytes)) continue;
    TCHECK(m.sender_thread % 2 == tag);
    TCHECK(m.seq > last[m.sender_thread]); /* in send order, per sender thread */
    last[m.sender_thread] = m.seq;
    atomic_fetch_add(&seen[0][m.sender_thread][m.seq], 1);
  }
}

static void receive_mprobed(int t) {
  const int tag = 100 + t % 2;
  int last[THREADS];
  for (int i = 0; i < THREADS; ++i) last[i] = -1;
  for (int n = 0; n < PER_THREAD; ++n) {
    MPI_Message handle = MPI_MESSAGE_NULL;
    MPI_Status probed, got;
    TCHECK(MPI_Mprobe(prev, tag, MPI_COMM_WORLD, &handle, &probed) == MPI_SUCCESS);
    int probed_bytes = -1;
    MPI_Get_count(&probed, MPI_BYTE, &probed_bytes);
    Msg m;
    memset(&m, 0, sizeof m);
    TCHECK(MPI_Mrecv(&m, (int)sizeof m, MPI_BYTE, &handle, &got) == MPI_SUCCESS);
    TCHECK(handle == MPI_MESSAGE_NULL);
    int bytes = -1;
    MPI_Get_count(&got, MPI_BYTE, &bytes);
    TCHECK(bytes == probed_bytes); /* nobody stole the matched message */
    TCHECK(got.MPI_TAG == tag && got.MPI_SOURCE == prev);
    TCHECK(intact(&m, bytes));
    if (!intact(&m, bytes)) continue;
    TCHECK(m.seq > last[m.sender_thread]);
    last[m.sender_thread] = m.seq;
    atomic_fetch_add(&seen[1][m.sender_thread][m.seq], 1);
  }
}

/* Phase 3. Each thread: a receive cancelled while the previous rank's same
 * thread sends the message it names (either outcome is legal, never both
 * or neither), and a send to a tag nobody receives, cancelled. */
#define CANCEL_ROUNDS 50
static atomic_int receives_cancelled, sends_cancelled;

static void cancel_races(int t) {
  for (int round = 0; round < CANCEL_ROUNDS; ++round) {
    const int race_tag = 1000 + t * CANCEL_ROUNDS + round;
    int in = -1, out = round * 10 + t;
    MPI_Request recv, send;
    TCHECK(MPI_Irecv(&in, 1, MPI_INT, prev, race_tag, MPI_COMM_WORLD, &recv) == MPI_SUCCESS);
    TCHECK(MPI_Isend(&out, 1, MPI_INT, next, race_tag, MPI_COMM_WORLD, &send) == MPI_SUCCESS);
    TCHECK(MPI_Cancel(&recv) == MPI_SUCCESS);
    MPI_Status st;
    TCHECK(MPI_Wait(&recv, &st) == MPI_SUCCESS);
    int cancelled = -1;
    MPI_Test_cancelled(&st, &cancelled);
    if (cancelled) {
      atomic_fetch_add(&receives_cancelled, 1);
      /* The message is still ours to receive, once. */
      TCHECK(MPI_Recv(&in, 1, MPI_INT, prev, race_tag, MPI_COMM_WORLD, &st) == MPI_SUCCESS);
    }
    TCHECK(in == round * 10 + t);
    TCHECK(MPI_Wait(&send, MPI_STATUS_IGNORE) == MPI_SUCCESS);

    /* Nobody receives this tag: the cancel must succeed. */
    int unwanted = 7;
    TCHECK(MPI_Isend(&unwanted, 1, MPI_INT, next, 5000 + t, MPI_COMM_WORLD, &send) == MPI_SUCCESS);
    TCHECK(MPI_Cancel(&send) == MPI_SUCCESS);
    TCHECK(MPI_Wait(&send, &st) == MPI_SUCCESS);
    MPI_Test_cancelled(&st, &cancelled);
    TCHECK(cancelled == 1);
    if (cancelled) atomic_fetch_add(&sends_cancelled, 1);
  }
}

typedef struct {
  int phase;
  int thread;
} Job;

static void* run(void* arg) {
  const Job* job = (const Job*)arg;
  int is_main = 1;
  MPI_Is_thread_main(&is_main);
  TCHECK(is_main == 0);
  if (job->phase < 2) {
    Msg* out = malloc(sizeof(Msg) * PER_THREAD);
    MPI_Request requests[PER_THREAD];
    start_sends(job->phase, job->thread, out, requests);
    if (job->phase == 0) {
      receive_probed(job->thread);
    } else {
      receive_mprobed(job->thread);
    }
    TCHECK(MPI_Waitall(PER_THREAD, requests, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
    free(out);
  } else {
    cancel_races(job->thread);
  }
  return NULL;
}

static void run_phase(int phase) {
  pthread_t threads[THREADS];
  Job jobs[THREADS];
  for (int t = 0; t < THREADS; ++t) {
    jobs[t].phase = phase;
    jobs[t].thread = t;
    pthread_create(&threads[t], NULL, run, &jobs[t]);
  }
  for (int t = 0; t < THREADS; ++t) pthread_join(threads[t], NULL);
  MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char** argv) {
  int provided = -1;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  next = (rank + 1) % size;
  prev = (rank + size - 1) % size;
  TCHECK(provided == MPI_THREAD_MULTIPLE);
  int queried = -1, is_main = 0;
  MPI_Query_thread(&queried);
  MPI_Is_thread_main(&is_main);
  TCHECK(queried == MPI_THREAD_MULTIPLE);
  TCHECK(is_main == 1);

  for (int phase = 0; phase < 3; ++phase) run_phase(phase);

  for (int phase = 0; phase < 2; ++phase) {
    for (int t = 0; t < THREADS; ++t) {
      for (int seq = 0; seq < PER_THREAD; ++seq) {
        const int n = atomic_load(&seen[phase][t][seq]);
        if (n != 1) {
          fprintf(stderr, "[rank %d] phase %d: message (thread %d, seq %d) arrived %d times\n",
                  rank, phase, t, seq, n);
        }
        TCHECK(n == 1);
      }
    }
  }
  TCHECK(atomic_load(&sends_cancelled) == THREADS * CANCEL_ROUNDS);

  int failed_here = atomic_load(&failures), failed_all = 0;
  int cancelled_here = atomic_load(&receives_cancelled), cancelled_all = 0;
  MPI_Allreduce(&failed_here, &failed_all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  MPI_Allreduce(&cancelled_here, &cancelled_all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    printf(
        "threads: %d ranks x %d threads, %d checks on rank 0, %d failed in all; "
        "%d of %d raced receive cancels won\n",
        size, THREADS, atomic_load(&checks), failed_all, cancelled_all,
        size * THREADS * CANCEL_ROUNDS);
  }
  MPI_Finalize();
  return failed_all == 0 ? 0 : 1;
}
