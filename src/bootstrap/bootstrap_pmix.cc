// PMIx bootstrap: ranks started by a PMIx server (Open MPI's mpirun, Slurm
// with --mpi=pmix). Each allgather round puts this rank's part under a
// round-numbered key, fences with data collection, and reads every rank's.
// The job token is rank 0's random number, published through the job's own
// PMIx namespace: only members of this job can learn it.
#include "bootstrap/bootstrap_pmix.h"

#include <pmix.h>

#include <atomic>
#include <cstring>
#include <string>

namespace tagwire::bootstrap {

namespace {

Status pmix_error(const char* call, pmix_status_t rc) {
  return {ErrorCode::kPeerFailed, std::string(call) + " failed: " + PMIx_Error_string(rc)};
}

class PmixBootstrap final : public Bootstrap {
 public:
  ~PmixBootstrap() override {
    if (initialized_) PMIx_Finalize(nullptr, 0);
  }

  Status init() {
    pmix_status_t rc = PMIx_Init(&me_, nullptr, 0);
    if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Init", rc);
    initialized_ = true;
    pmix_proc_t job;
    PMIX_PROC_CONSTRUCT(&job);
    PMIX_LOAD_PROCID(&job, me_.nspace, PMIX_RANK_WILDCARD);
    pmix_value_t* value = nullptr;
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, nullptr, 0, &value);
    if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Get(job size)", rc);
    size_ = static_cast<int>(value->data.uint32);
    PMIX_VALUE_RELEASE(value);
    rank_ = static_cast<int>(me_.rank);
    auto token = agree_job_token(*this);
    if (!token) return token.status();
    token_ = *token;
    return Status::ok();
  }

  std::string_view kind() const override { return "pmix"; }

  // The host (mpirun's PRRTE, Slurm's PMIx plugin) ends every process of
  // the namespace, with `code` as the job's status where it keeps one.
  void abort(int code, std::string_view why) override {
    const std::string message(why);
    (void)PMIx_Abort(code, message.c_str(), nullptr, 0);
  }

  Status barrier_with_progress(const std::function<void()>& progress) override {
    pmix_proc_t all_procs;
    PMIX_PROC_CONSTRUCT(&all_procs);
    PMIX_LOAD_PROCID(&all_procs, me_.nspace, PMIX_RANK_WILDCARD);
    struct Done {
      std::atomic<bool> flag{false};
      pmix_status_t status = PMIX_SUCCESS;
    } done;
    pmix_status_t rc = PMIx_Fence_nb(
        &all_procs, 1, nullptr, 0,
        [](pmix_status_t status, void* ctx) {
          auto* d = static_cast<Done*>(ctx);
          d->status = status;
          d->flag.store(true, std::memory_order_release);
        },
        &done);
    if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Fence_nb", rc);
    while (!done.flag.load(std::memory_order_acquire)) progress();
    return done.status == PMIX_SUCCESS ? Status::ok() : pmix_error("PMIx_Fence_nb", done.status);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::uint64_t job_token() const override { return token_; }

  Result<std::vector<std::vector<std::uint8_t>>> allgather(
      std::span<const std::uint8_t> mine) override {
    const std::string key = "tagwire.ag." + std::to_string(round_++);
    pmix_value_t value;
    PMIX_VALUE_CONSTRUCT(&value);
    value.type = PMIX_BYTE_OBJECT;
    // PMIx copies the value on Put; bytes points at our span meanwhile.
    value.data.bo.bytes = const_cast<char*>(reinterpret_cast<const char*>(mine.data()));
    value.data.bo.size = mine.size();
    pmix_status_t rc = PMIx_Put(PMIX_GLOBAL, key.c_str(), &value);
    if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Put", rc);
    rc = PMIx_Commit();
    if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Commit", rc);
    pmix_proc_t all_procs;
    PMIX_PROC_CONSTRUCT(&all_procs);
    PMIX_LOAD_PROCID(&all_procs, me_.nspace, PMIX_RANK_WILDCARD);
    pmix_info_t collect;
    PMIX_INFO_CONSTRUCT(&collect);
    bool yes = true;
    PMIX_INFO_LOAD(&collect, PMIX_COLLECT_DATA, &yes, PMIX_BOOL);
    rc = PMIx_Fence(&all_procs, 1, &collect, 1);
    PMIX_INFO_DESTRUCT(&collect);
    if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Fence", rc);
    std::vector<std::vector<std::uint8_t>> out(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      pmix_proc_t peer;
      PMIX_PROC_CONSTRUCT(&peer);
      PMIX_LOAD_PROCID(&peer, me_.nspace, static_cast<pmix_rank_t>(r));
      pmix_value_t* got = nullptr;
      rc = PMIx_Get(&peer, key.c_str(), nullptr, 0, &got);
      if (rc != PMIX_SUCCESS) return pmix_error("PMIx_Get", rc);
      if (got->type != PMIX_BYTE_OBJECT) {
        PMIX_VALUE_RELEASE(got);
        return Status(ErrorCode::kProtocol, "PMIx value of the wrong type");
      }
      const auto* bytes = reinterpret_cast<const std::uint8_t*>(got->data.bo.bytes);
      out[static_cast<std::size_t>(r)].assign(bytes, bytes + got->data.bo.size);
      PMIX_VALUE_RELEASE(got);
    }
    // The value's bytes are ours; stop PMIx from freeing them.
    value.data.bo.bytes = nullptr;
    value.data.bo.size = 0;
    return out;
  }

 private:
  pmix_proc_t me_{};
  bool initialized_ = false;
  int rank_ = 0;
  int size_ = 1;
  std::uint64_t token_ = 0;
  unsigned round_ = 0;
};

}  // namespace

Result<std::unique_ptr<Bootstrap>> create_pmix_bootstrap() {
  auto bootstrap = std::make_unique<PmixBootstrap>();
  TAGWIRE_RETURN_IF_ERROR(bootstrap->init());
  return std::unique_ptr<Bootstrap>(std::move(bootstrap));
}

}  // namespace tagwire::bootstrap
