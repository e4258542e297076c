/* One-sided send cancel (TAGWIRE_CANCEL_MODE=onesided; docs/architecture.md §4,
 * src/cancel/one_sided_send_cancel.cc, src/engine/slot_word.h), checked
 * by spin in CI (ci/spin-check).
 *
 * Actors. One sender sends N messages, each with a slot descriptor from its
 * K slots at the receiver if one is settled, else without one (such a
 * message's cancel takes the agent's path, which send_cancel.pml proves;
 * here it is never cancelled). At any later moment, until it learns the
 * message was matched, the sender may cancel it: a remote compare-and-swap
 * expected -> CANCELLED, executed atomically at the receiver's memory (the
 * NIC) at any point of the receiver's work. It learns settled slots from
 * its own CAS results and by reading the words back, at any moment. One
 * receiver, whose matcher claims a message (expected -> MATCHED, atomic
 * with the sender's CAS) before delivering it: on arrival when a posted
 * receive takes it, or later from the unexpected queue (receive, mprobe);
 * a probe or a claim that finds CANCELLED drops the message; a notice on
 * the data channel purges a cancelled one. The receiver application may
 * take messages at any moment; at the end it takes all that are left.
 * A word is generation * 4 + state, as in src/engine/slot_word.h.
 *
 * What is checked:
 *  - either-or: every message is delivered exactly once or cancelled,
 *    never both, never neither;
 *  - a message is found undeliverable (its word is no longer the one it
 *    expects: on arrival, by a probe, by a failed claim, by a notice) only
 *    because its own sender's CAS cancelled that very message, never because
 *    the slot was reused under it; a cancel's NO only ever means MATCHED;
 *  - every process ends (no invalid end state): the sender never waits for
 *    the receiver, whatever it does.
 *
 * Bounds: N messages (default 3) over K slots (default 2), every
 * interleaving; generations up to N fit the byte-sized words. The real
 * word's 30-bit generation cannot alias: a slot holds one unsettled
 * message at a time, so only the current generation is ever compared.
 *
 * -DEARLY_REUSE=1 models the bug this design avoids: a sender that reuses
 * a slot before it has seen the previous message settled, guessing it was
 * matched. spin must find a violation there (CI checks it), so the model
 * is known to be able to fail; so must -DCLAIM=0 (a receiver that delivers
 * without claiming). */

#ifndef N
#define N 3
#endif
#ifndef K
#define K 2
#endif
#ifndef EARLY_REUSE
#define EARLY_REUSE 0
#endif
#ifndef CLAIM
#define CLAIM 1
#endif

#define FREE 0
#define MATCHED 1
#define CANCELLED 2
#define NEXT(e, st) (((e) / 4 + 1) * 4 + (st))
#define NOSLOT K

mtype = { MSG, NOTICE, END };
/* type, message, slot, expected word */
chan to_receiver = [2 * N + 1] of { mtype, byte, byte, byte };

byte word[K];        /* the receiver's slot descriptors */
/* the sender's view */
byte last[K];        /* settled word (free) or the expected one (in use) */
bool in_use[K];
byte slot_of[N];
byte exp_of[N];
bool undecided[N];   /* may still be cancelled: not cancelled, not known matched */
bool cancelled_op[N];
bool won[N];         /* ghost: the sender's CAS succeeded (set in its atomic step) */
/* the receiver's view */
bool delivered[N];
byte uq[N];          /* unexpected messages, arrival order */
byte uq_slot[N];
byte uq_exp[N];
byte uq_len = 0;

/* Sender: learns from a word whether message j's slot is settled. */
inline settle(j, w) {
  if
  :: in_use[slot_of[j]] && last[slot_of[j]] == exp_of[j] && w / 4 == exp_of[j] / 4 + 1 &&
     w % 4 != FREE ->
     last[slot_of[j]] = w; in_use[slot_of[j]] = false; undecided[j] = false
  :: else
  fi
}

inline try_cancel(j, old) {
  if
  :: undecided[j] && in_use[slot_of[j]] && last[slot_of[j]] == exp_of[j] ->
     atomic {  /* the remote CAS, executed at the receiver's memory */
       old = word[slot_of[j]];
       if
       :: word[slot_of[j]] == exp_of[j] ->
          word[slot_of[j]] = NEXT(exp_of[j], CANCELLED); won[j] = true
       :: else
       fi
     }
     if
     :: old == exp_of[j] ->
        cancelled_op[j] = true; undecided[j] = false;
        last[slot_of[j]] = NEXT(exp_of[j], CANCELLED); in_use[slot_of[j]] = false;
        to_receiver ! NOTICE(j, slot_of[j], exp_of[j])
     :: else ->
        assert(old == NEXT(exp_of[j], MATCHED));  /* NO means matched */
        settle(j, old)
     fi
  :: else -> undecided[j] = false  /* settled: matched (our own YES decides above) */
  fi
}

proctype Sender() {
  byte op = 0, s, k, j, old;
  do
  :: op < N ->
     /* cancel earlier messages, or read the words back, as often as it likes */
     do
     :: j = 0;
        do
        :: j < op && undecided[j] -> try_cancel(j, old); j++
        :: j < op -> j++
        :: j >= op -> break
        od
     :: j = 0;
        do
        :: j < op && slot_of[j] < NOSLOT -> settle(j, word[slot_of[j]]); j++
        :: j < op && slot_of[j] == NOSLOT -> j++
        :: j >= op -> break
        od
     :: break
     od;
     /* a settled slot, or none */
     s = NOSLOT;
     k = 0;
     do
     :: k < K && !in_use[k] -> s = k; break
     :: k < K && in_use[k] -> k++
     :: k >= K -> break
     od;
#if EARLY_REUSE
     if
     :: s == NOSLOT ->
        s = 0;
        j = 0;
        do  /* the message it takes the slot from is forgotten */
        :: j < op && slot_of[j] == 0 -> undecided[j] = false; j++
        :: j < op && slot_of[j] != 0 -> j++
        :: j >= op -> break
        od;
        last[0] = NEXT(last[0], MATCHED)
     :: else
     fi;
#endif
     slot_of[op] = s;
     if
     :: s < NOSLOT ->
        in_use[s] = true; exp_of[op] = last[s]; undecided[op] = true;
        to_receiver ! MSG(op, s, last[s])
     :: else ->
        to_receiver ! MSG(op, NOSLOT, 0)
     fi;
     op++
  :: op == N ->
     /* last chances to cancel, then the end */
     j = 0;
     do
     :: j < N && undecided[j] -> try_cancel(j, old); j++
     :: j < N -> j++
     :: j >= N -> break
     od;
     to_receiver ! END(0, 0, 0);
     break
  od
}

/* Receiver: claim message o (slot s, expected e) for delivery. */
inline claim_and_deliver(o, s, e) {
  if
  :: s == NOSLOT -> assert(!delivered[o]); delivered[o] = true
  :: else ->
     atomic {
       if
       :: !CLAIM || word[s] == e ->
          if :: CLAIM -> word[s] = NEXT(e, MATCHED) :: else fi;
          assert(!delivered[o]); delivered[o] = true
       :: else ->
          assert(won[o])  /* only because its own sender cancelled this very message */
       fi
     }
  fi
}

inline take_head() {
  claim_and_deliver(uq[0], uq_slot[0], uq_exp[0]);
  i = 0;
  do
  :: i + 1 < uq_len -> uq[i] = uq[i + 1]; uq_slot[i] = uq_slot[i + 1]; uq_exp[i] = uq_exp[i + 1]; i++
  :: else -> break
  od;
  uq_len--
}

inline remove_at(p) {
  i = p;
  do
  :: i + 1 < uq_len -> uq[i] = uq[i + 1]; uq_slot[i] = uq_slot[i + 1]; uq_exp[i] = uq_exp[i + 1]; i++
  :: else -> break
  od;
  uq_len--
}

proctype Receiver() {
  mtype t;
  byte o, s, e, i, p;
  do
  :: to_receiver ? t, o, s, e ->
     if
     :: t == MSG ->
        if
        :: s < NOSLOT && word[s] != e -> assert(won[o])  /* undeliverable: dropped on arrival */
        :: else ->
           if
           :: claim_and_deliver(o, s, e)  /* a posted receive takes it */
           :: uq[uq_len] = o; uq_slot[uq_len] = s; uq_exp[uq_len] = e; uq_len++
           fi
        fi
     :: t == NOTICE ->
        /* purge it if it still waits and its word says CANCELLED */
        if
        :: word[s] != e ->  /* undeliverable */
           p = 0;
           do
           :: p < uq_len && uq[p] == o -> remove_at(p); break
           :: p < uq_len && uq[p] != o -> p++
           :: p >= uq_len -> break
           od
        :: else -> assert(false)  /* a notice follows a CAS that moved the word */
        fi
     :: t == END -> break
     fi
  :: uq_len > 0 -> take_head()  /* a receive or mprobe takes the oldest */
  :: uq_len > 0 && uq_slot[0] < NOSLOT && word[uq_slot[0]] != uq_exp[0] ->
     assert(won[uq[0]]);
     remove_at(0)  /* a probe meets an undeliverable head and drops it */
  od;
  /* the application receives everything that is left */
  do
  :: uq_len > 0 -> take_head()
  :: else -> break
  od;
  /* either-or, for every message */
  i = 0;
  do
  :: i < N -> assert(delivered[i] != cancelled_op[i]); i++
  :: else -> break
  od
}

init {
  atomic {
    run Sender();
    run Receiver()
  }
}
