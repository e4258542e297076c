/* Send cancel as Tagwire builds it (docs/architecture.md §4, src/cancel/agent_send_cancel.cc),
 * checked by spin in CI (ci/spin-check).
 *
 * Actors. One sender runs one persistent send request through N operations
 * (start, maybe cancel, wait), each eager or synchronous, chosen freely. One
 * receiver, whose matcher and cancel agent act under one lock (each arrival,
 * receive post and cancel decision is one atomic step). Two ordered
 * channels, one each way, like the RC QP / UCX endpoint that carries data
 * and control alike. The receiver application may post a receive at any
 * moment, or never: the agent serves the channel either way.
 *
 * What is checked (assertions, and spin's invalid-end-state search):
 *  - either-or: a YES names the very operation that was cancelled and its
 *    message is then CANCELLED (never matched, never received later); a NO
 *    means it was MATCHED; a receive only ever takes an unexpected message;
 *  - the cancel request never finds its message missing (ordered channel);
 *  - every Wait terminates, whatever the receiver application does (no
 *    invalid end state: the sender always reaches its end);
 *  - wire ids and slot reuse: an operation's wire id is (slot, generation),
 *    fresh per operation, so a cancel never names an earlier operation of
 *    the same request whose message still waits at the receiver.
 *
 * Bounds: N operations (default 3) on one request, channels of 2N places,
 * every interleaving. Generations are modelled as distinct ids; their
 * 32-bit wrap (4 billion operations on one request slot while an old one is
 * still unreceived) is outside the model.
 *
 * -DFRESH_IDS=0 -DNEWEST_FIRST=0 models the bug class this design avoids
 * (one id for all operations of a request, searched oldest-first): spin must
 * find a violation there, which CI checks too, so the model is known to be
 * able to fail. */

#ifndef N
#define N 3
#endif
#ifndef FRESH_IDS
#define FRESH_IDS 1
#endif
#ifndef NEWEST_FIRST
#define NEWEST_FIRST 1
#endif

#if FRESH_IDS
#define WIRE_ID(op) (op)
#else
#define WIRE_ID(op) 0
#endif

mtype = { MSG, CANCEL, YES, NO, ACK };
/* type, wire id, operation number (a ghost: for assertions only) */
chan to_receiver = [2 * N] of { mtype, byte, byte };
chan to_sender = [2 * N] of { mtype, byte, byte };

#define NONE 0
#define UNEXPECTED 1
#define MATCHED 2
#define CANCELLED 3
byte state[N];     /* the receiver's record of each operation's message */
bool sync_op[N];
bool cancelled_op[N];  /* the sender's outcome: completed by cancellation */

byte uq[N];        /* unexpected messages in arrival order: operation numbers */
byte uq_id[N];     /* and their wire ids */
byte uq_len = 0;

inline remove_unexpected(k) {
  do
  :: k + 1 < uq_len -> uq[k] = uq[k + 1]; uq_id[k] = uq_id[k + 1]; k++
  :: else -> break
  od;
  uq_len--
}

proctype Sender() {
  byte op = 0, t, id, o;
  bool asked, answered, acked;
  do
  :: op < N ->
     if
     :: sync_op[op] = true
     :: skip
     fi;
     to_receiver ! MSG, WIRE_ID(op), op;
     asked = false; answered = false; acked = false;
     do
     /* MPI_Cancel, at any moment before Wait returns; not asked once the
      * receiver has acknowledged the match (remote_matched). */
     :: !asked && !acked -> asked = true; to_receiver ! CANCEL, WIRE_ID(op), op
     :: to_sender ? t, id, o ->
        if
        :: t == ACK -> assert(o == op); acked = true
        :: t == YES ->
           assert(o == op);              /* the cancel took this operation, no other */
           assert(state[op] == CANCELLED);
           answered = true; cancelled_op[op] = true
        :: t == NO ->
           assert(state[op] == MATCHED);  /* refused only once received */
           answered = true
        fi
     /* Wait returns: the answer is in, and a synchronous send was matched
      * or cancelled. */
     :: (!asked || answered) && (!sync_op[op] || acked || cancelled_op[op]) -> break
     od;
     op++
  :: else -> break
  od;
  /* Whatever happens next, nothing can undo an outcome. */
  op = 0;
  do
  :: op < N -> assert(cancelled_op[op] == (state[op] == CANCELLED)); op++
  :: else -> break
  od
}

proctype Receiver() {
  byte t, id, o, k, victim, posted = 0, posts = 0;
  bool found;
end:
  do
  /* The agent or the application, under the engine lock. */
  :: to_receiver ? t, id, o ->
     atomic {
       if
       :: t == MSG ->
          assert(state[o] == NONE);
          if
          :: posted > 0 ->
             posted--; state[o] = MATCHED;
             if
             :: sync_op[o] -> to_sender ! ACK, id, o
             :: else -> skip
             fi
          :: else -> state[o] = UNEXPECTED; uq[uq_len] = o; uq_id[uq_len] = id; uq_len++
          fi
       :: t == CANCEL ->
          assert(state[o] != NONE);  /* ordered channel: the message came first */
          found = false;
#if NEWEST_FIRST
          k = uq_len;
          do
          :: k > 0 && uq_id[k - 1] == id -> k--; found = true; break
          :: k > 0 && uq_id[k - 1] != id -> k--
          :: k == 0 -> break
          od;
#else
          k = 0;
          do
          :: k < uq_len && uq_id[k] == id -> found = true; break
          :: k < uq_len && uq_id[k] != id -> k++
          :: k >= uq_len -> break
          od;
#endif
          if
          :: found ->
             victim = uq[k]; remove_unexpected(k);
             assert(state[victim] == UNEXPECTED);
             state[victim] = CANCELLED;
             to_sender ! YES, id, victim
          :: else -> to_sender ! NO, id, o
          fi;
          k = 0; victim = 0; found = false
       fi;
       t = 0; id = 0; o = 0
     }
  /* The application posts a receive (same envelope): it takes the oldest
   * unexpected message, or waits for the next arrival. */
  :: posts < N ->
     atomic {
       posts++;
       if
       :: uq_len > 0 ->
          victim = uq[0]; k = 0; remove_unexpected(k);
          assert(state[victim] == UNEXPECTED);
          state[victim] = MATCHED;
          if
          :: sync_op[victim] -> to_sender ! ACK, WIRE_ID(victim), victim
          :: else -> skip
          fi;
          k = 0; victim = 0
       :: else -> posted++
       fi
     }
  od
}

init {
  atomic { run Sender(); run Receiver() }
}
