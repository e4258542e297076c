#!/usr/bin/env bash
# tagwire-info's contract: the version, every layer's settings with their
# values in this environment, the launcher it would see, and a refusal (exit
# 1, naming the variable) of an environment MPI_Init would refuse.
# Usage: tagwire_info_test.sh TAGWIRE_INFO TAGWIRE_RUN
set -uo pipefail
info=$1
run=$2
source "$(dirname "$0")/check.sh"
unset $(env | grep -o '^TAGWIRE_[A-Z_0-9]*' || true) SLURM_STEP_NUM_TASKS PMIX_RANK PMI_FD

out=$("$info"); check "runs" 0 $?
[[ $out =~ ^Tagwire\ [0-9]+\.[0-9]+\.[0-9]+\ \(MPI\ 3\.1\) ]]; check "first line: the version" 0 $?
check "the launcher here: none" 1 "$(grep -c 'launcher: *none: a singleton' <<<"$out")"
check "one host: the shm transport" 1 "$(grep -c 'one host: *shm$' <<<"$out")"
# Every layer's table: the engine's, the cancel layer's (and verbs' when built).
for name in TAGWIRE_EAGER_THRESHOLD TAGWIRE_TRANSPORT TAGWIRE_LOG_LEVEL TAGWIRE_CANCEL_MODE; do
  check "lists $name" 1 "$(grep -cE "^  [ *]$name +default " <<<"$out")"
done

settings=$("$info" --settings); check "--settings runs" 0 $?
check "--settings: NAME=value lines only" 0 "$(grep -vc '^TAGWIRE_[A-Z0-9_]*=' <<<"$settings")"
check "--settings: the default" 1 "$(grep -c '^TAGWIRE_EAGER_THRESHOLD=8192$' <<<"$settings")"
settings=$(TAGWIRE_EAGER_THRESHOLD=4k TAGWIRE_CANCEL_MODE=onesided "$info" --settings)
check "--settings: what is set here" 2 \
  "$(grep -c '^TAGWIRE_EAGER_THRESHOLD=4k$\|^TAGWIRE_CANCEL_MODE=onesided$' <<<"$settings")"
out=$(TAGWIRE_CANCEL_MODE=onesided "$info")
check "a setting set here is marked" 1 "$(grep -c '^  \*TAGWIRE_CANCEL_MODE ' <<<"$out")"

out=$(TAGWIRE_TRANSPORT_TYPO=1 "$info" 2>&1); check "an unknown TAGWIRE_ variable: exit 1" 1 $?
check "the refusal names it" 1 "$(grep -c 'TAGWIRE_TRANSPORT_TYPO' <<<"$out")"
out=$(TAGWIRE_LOG_LEVEL=loud "$info" 2>&1); check "a value MPI_Init refuses: exit 1" 1 $?
check "the refusal names the variable and the choices" 1 "$(grep -c 'TAGWIRE_LOG_LEVEL.*error warn' <<<"$out")"

out=$("$run" -n 1 "$info"); check "under tagwire-run" 0 $?
check "the launcher here: tagwire-run" 1 "$(grep -c 'launcher: *tagwire-run' <<<"$out")"
out=$(SLURM_STEP_NUM_TASKS=4 "$info")
check "srun without a PMI is named as refused" 1 "$(grep -c 'launcher: *srun without.*refused' <<<"$out")"

out=$("$info" --version); check "--version" 0 $?
[[ $out =~ ^tagwire-info\ \(Tagwire\)\ [0-9]+\.[0-9]+ ]]; check "--version names the version" 0 $?
"$info" --bogus 2>/dev/null; check "an unknown option" 2 $?

echo "tagwire-info: $passes passed, $failures failed"
exit $((failures > 0))
