#!/usr/bin/env bash
# What each TAGWIRE_LOG_LEVEL says, on a run of the MPI cancel test over
# shared memory: warn (the default) nothing on a clean run; info what was
# chosen; debug the cancels asked and answered; trace every message's
# protocol and arrival as well. Every line names rank, host, pid and time.
# Usage: log_levels_test.sh TAGWIRE_RUN MPI_CANCEL
set -uo pipefail
run=$1
program=$2
source "$(dirname "$0")/check.sh"
log_at() {  # log_at LEVEL: the run's Tagwire lines on stderr
  TAGWIRE_TRANSPORT=shm TAGWIRE_LOG_LEVEL=$1 "$run" -n 2 --timeout 120 "$program" 2>&1 >/dev/null |
    grep '^\[tagwire '
}
count() { grep -c -- "$1" <<<"$2"; }
warn=$(log_at warn); info=$(log_at info); debug=$(log_at debug); trace=$(log_at trace)

check "warn: nothing on a clean run" 0 "$(grep -c . <<<"$warn")"
check "info: each rank says what it runs over" 2 "$(count '] info engine: rank [01] of 2 up over shm' "$info")"
check "info: no per-cancel line" 0 "$(count 'debug\|trace' "$info")"
(( $(count '] debug cancel: cancel of send .* asked' "$debug") > 0 )); check "debug: send cancels asked" 0 $?
(( $(count '] debug cancel: rank 1 answered the cancel of send' "$debug") > 0 )); check "debug: and answered" 0 $?
(( $(count '] debug cancel: cancel of receive' "$debug") > 0 )); check "debug: receive cancels" 0 $?
check "debug: no per-message line" 0 "$(count '] trace ' "$debug")"
(( $(count '] trace engine: send .* eager' "$trace") > 0 )); check "trace: each send's protocol" 0 $?
(( $(count '] trace engine: eager from rank .*: \(matched a posted receive\|unexpected\)' "$trace") > 0 ))
check "trace: each arrival, matched or not" 0 $?
(( $(count '] trace engine: rendezvous: read' "$trace") > 0 )); check "trace: rendezvous reads" 0 $?
shape='^\[tagwire [01] [^ :]+:[0-9]+ [0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9]{6}\] (info|debug|trace) [a-z]+: '
check "every line: rank, host:pid, time" 0 "$(grep -vcE "$shape" <<<"$trace")"

echo "log levels: $passes passed, $failures failed"
exit $((failures > 0))
