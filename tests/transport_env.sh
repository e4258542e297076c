# Sourced by the kill tests (kill_random_test.sh, survivors_test.sh):
# transport_env NAME sets the array `env` to what runs a job over that
# transport, or fails for a name it does not know.
#   shm      Tagwire's shared memory
#   ucx-sm   UCX's shared memory
#   ucx-tcp  UCX over TCP on loopback
#   verbs    Tagwire's verbs transport on rxe0 (ci/rxe-tests, in the VM)
#   ucx-rc   UCX rc_verbs on rxe0 (likewise)
transport_env() {
  case $1 in
    shm) env=(TAGWIRE_TRANSPORT=shm) ;;
    ucx-sm) env=(TAGWIRE_TRANSPORT=ucx UCX_TLS=sm,self) ;;
    ucx-tcp) env=(TAGWIRE_TRANSPORT=ucx UCX_TLS=tcp,self UCX_NET_DEVICES=lo) ;;
    verbs) env=(TAGWIRE_TRANSPORT=verbs TAGWIRE_DEVICE=rxe0) ;;
    ucx-rc) env=(TAGWIRE_TRANSPORT=ucx UCX_TLS=rc_verbs,ud_verbs,self UCX_NET_DEVICES=rxe0:1
                 UCX_UD_VERBS_ETH_DGID_CHECK=n) ;;
    *) return 1 ;;
  esac
}
