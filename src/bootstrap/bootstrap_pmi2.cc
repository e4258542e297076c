// PMI-2 bootstrap: ranks started by `srun --mpi=pmi2`. PMI-2 values are
// strings of at most PMI2_MAX_VALLEN bytes, so each part is hex-encoded and
// split into numbered chunks: key "tw.<round>.<rank>.n" holds the chunk
// count, "tw.<round>.<rank>.<i>" the chunks. The rank must be in the key:
// Slurm's PMI-2 key-value space is one per job, not one per rank (the
// source rank given to PMI2_KVS_Get is only a hint), so without it every
// rank overwrote the others' parts. The job token is rank 0's random number,
// exchanged in round 0 through the job's own key-value space.
#include "bootstrap/bootstrap_pmi2.h"

#include <sys/wait.h>
#include <unistd.h>

#include <slurm/pmi2.h>

#include <charconv>
#include <cstring>
#include <string>

#include "bootstrap/bootstrap.h"

namespace tagwire::bootstrap {

namespace {

constexpr std::size_t kChunkHex = PMI2_MAX_VALLEN - 2;  // leave room for the terminator

Status pmi2_error(const char* call, int rc) {
  return {ErrorCode::kPeerFailed,
          std::string(call) + " failed with PMI-2 error " + std::to_string(rc)};
}

class Pmi2Bootstrap final : public Bootstrap {
 public:
  ~Pmi2Bootstrap() override {
    if (initialized_) PMI2_Finalize();
  }

  Status init() {
    int spawned = 0, appnum = 0;
    int rc = PMI2_Init(&spawned, &size_, &rank_, &appnum);
    if (rc != PMI2_SUCCESS) return pmi2_error("PMI2_Init", rc);
    initialized_ = true;
    char jobid[256] = {};
    rc = PMI2_Job_GetId(jobid, sizeof(jobid));
    if (rc != PMI2_SUCCESS) return pmi2_error("PMI2_Job_GetId", rc);
    jobid_ = jobid;
    auto token = agree_job_token(*this);
    if (!token) return token.status();
    token_ = *token;
    return Status::ok();
  }

  std::string_view kind() const override { return "pmi2"; }

  // PMI2_Abort ends the step, and then exits the process itself, with
  // status 255 and through exit() (atexit handlers, static destructors).
  // So it runs in a child that shares the PMI connection; this process
  // keeps its code and exits with it.
  void abort(int /*code*/, std::string_view why) override {
    const std::string message(why);
    const pid_t child = ::fork();
    if (child == 0) {
      PMI2_Abort(1, message.c_str());
      ::_exit(255);
    }
    if (child > 0) (void)::waitpid(child, nullptr, 0);
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::uint64_t job_token() const override { return token_; }

  Result<std::vector<std::vector<std::uint8_t>>> allgather(
      std::span<const std::uint8_t> mine) override {
    const std::string round = "tw." + std::to_string(round_++) + ".";
    const std::string prefix = round + std::to_string(rank_) + ".";
    const std::string hex = local_bootstrap::key_to_hex(mine);
    const std::size_t chunks = (hex.size() + kChunkHex - 1) / kChunkHex;
    TAGWIRE_RETURN_IF_ERROR(put(prefix + "n", std::to_string(chunks)));
    for (std::size_t i = 0; i < chunks; ++i) {
      TAGWIRE_RETURN_IF_ERROR(
          put(prefix + std::to_string(i), hex.substr(i * kChunkHex, kChunkHex)));
    }
    int rc = PMI2_KVS_Fence();
    if (rc != PMI2_SUCCESS) return pmi2_error("PMI2_KVS_Fence", rc);
    std::vector<std::vector<std::uint8_t>> out(static_cast<std::size_t>(size_));
    for (int r = 0; r < size_; ++r) {
      const std::string theirs = round + std::to_string(r) + ".";
      auto count_text = get(r, theirs + "n");
      if (!count_text) return count_text.status();
      std::size_t count = 0;
      auto [p, ec] =
          std::from_chars(count_text->data(), count_text->data() + count_text->size(), count);
      if (ec != std::errc() || count > 4096)
        return Status(ErrorCode::kProtocol, "bad PMI-2 chunk count");
      std::string all_hex;
      for (std::size_t i = 0; i < count; ++i) {
        auto chunk = get(r, theirs + std::to_string(i));
        if (!chunk) return chunk.status();
        all_hex += *chunk;
      }
      if (all_hex.size() % 2 != 0) return Status(ErrorCode::kProtocol, "odd PMI-2 hex value");
      auto& bytes = out[static_cast<std::size_t>(r)];
      bytes.resize(all_hex.size() / 2);
      for (std::size_t i = 0; i < bytes.size(); ++i) {
        auto [q, e] =
            std::from_chars(all_hex.data() + 2 * i, all_hex.data() + 2 * i + 2, bytes[i], 16);
        if (e != std::errc()) return Status(ErrorCode::kProtocol, "bad PMI-2 hex value");
      }
    }
    return out;
  }

 private:
  Status put(const std::string& key, const std::string& value) {
    int rc = PMI2_KVS_Put(key.c_str(), value.c_str());
    return rc == PMI2_SUCCESS ? Status::ok() : pmi2_error("PMI2_KVS_Put", rc);
  }

  Result<std::string> get(int rank, const std::string& key) {
    char value[PMI2_MAX_VALLEN + 1] = {};
    int length = 0;
    int rc = PMI2_KVS_Get(jobid_.c_str(), rank, key.c_str(), value, sizeof(value), &length);
    if (rc != PMI2_SUCCESS) return pmi2_error("PMI2_KVS_Get", rc);
    return std::string(value);
  }

  bool initialized_ = false;
  int rank_ = 0;
  int size_ = 1;
  std::string jobid_;
  std::uint64_t token_ = 0;
  unsigned round_ = 0;
};

}  // namespace

Result<std::unique_ptr<Bootstrap>> create_pmi2_bootstrap() {
  auto bootstrap = std::make_unique<Pmi2Bootstrap>();
  TAGWIRE_RETURN_IF_ERROR(bootstrap->init());
  return std::unique_ptr<Bootstrap>(std::move(bootstrap));
}

}  // namespace tagwire::bootstrap
