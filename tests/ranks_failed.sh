# Sourced by tests/check.sh and ci/rxe-tests.
# ranks_failed OUTPUT: how many ranks tagwire-run reported dead or failed
# (killed by a signal, or a non-zero exit). A job whose victim was killed
# on purpose must show exactly 1: a survivor that crashes afterwards (in
# MPI_Finalize, say) does not change the job's status, which is the first
# death's, so only this count sees it.
ranks_failed() {
  grep -cE '^tagwire-run: rank [0-9]+ \(pid [0-9]+\) (was killed by|exited with status)' <<<"$1"
}
