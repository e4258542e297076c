// Bootstrap: how a rank learns who it is and exchanges addresses before the
// transport is up. Picked from the environment:
//   TAGWIRE_BOOT_SOCKET set  -> LocalBootstrap (our tagwire-run launcher)
//   PMIX_RANK set            -> PMIx (Open MPI mpirun, Slurm --mpi=pmix)   [libpmix-dev]
//   PMI_FD set               -> PMI-2 (Slurm --mpi=pmi2)                    [libpmi2-0-dev]
//   SLURM_STEP_NUM_TASKS > 1 -> refused: srun started several tasks without
//                               a process-management interface (--mpi=none)
//   none                     -> a singleton job of one rank
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace tagwire::bootstrap {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;
  virtual std::string_view kind() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // A secret shared by the ranks of this job only; every wire message
  // carries it, and a message with another token is dropped.
  virtual std::uint64_t job_token() const = 0;
  // Every rank contributes `mine`; all get every rank's, indexed by rank.
  virtual Result<std::vector<std::vector<std::uint8_t>>> allgather(
      std::span<const std::uint8_t> mine) = 0;
  virtual Status barrier();
  // A barrier that calls `progress` while it waits, for when peers may
  // need this process's transport to move (closing connections).
  virtual Status barrier_with_progress(const std::function<void()>& progress);
  // Whether a barrier after a rank died still waits for every rank alive
  // (and then fails, naming the dead): tagwire-run, which knows who is
  // alive (bootstrap.h's INCOMPLETE). MPI_Finalize then meets the
  // survivors there rather than through a transport a death has touched.
  virtual bool barrier_holds_survivors() const { return false; }
  // Ranks the launcher has seen die (killed by a signal) since the last
  // call. Never blocks. A launcher that tells nothing reports none.
  virtual std::vector<int> take_failed_ranks() { return {}; }
  // Whether take_failed_ranks() ever reports a death (tagwire-run): a
  // transport error on an operation with a peer then waits a moment for
  // its verdict (engine/held_errors.h).
  virtual bool reports_deaths() const { return false; }
  // MPI_Abort: asks the launcher to end the whole job, with `code` as its
  // exit status where the launcher carries one. Returns once the request
  // is out; the caller then exits with `code` itself.
  virtual void abort(int code, std::string_view why) {
    (void)code;
    (void)why;
  }
  // Whether abort() alone ends every rank with the code (tagwire-run: it
  // reads the request and stops the job itself). Then the engine asks it
  // first, so that the launcher names the rank that asked rather than the
  // first peer the ABORT message ended.
  virtual bool abort_ends_every_rank() const { return false; }
  // MPI_Finalize is done: a launcher that watches its ranks (tagwire-run)
  // takes a later exit of 0 as a normal end, and one without this as a rank
  // that left the job (an _exit that no exit handler saw).
  virtual void finalized() {}
};

// Who started this process, read from its environment (the list above).
enum class StartedBy { kTagwireRun, kPmix, kPmi2, kSrunWithoutPmi, kNone };
StartedBy started_by();
// "PMIx (PMIX_RANK is set)": the launcher and why, for tagwire-info and logs.
std::string describe(StartedBy launcher);

Result<std::unique_ptr<Bootstrap>> create_bootstrap();

// For bootstraps whose launcher hands out no secret (PMIx, PMI-2): rank 0
// draws a random token and the first allgather carries it to the job, so
// only the job's members (who can read its key-value space) learn it.
Result<std::uint64_t> agree_job_token(Bootstrap& bootstrap);

// The launcher side of LocalBootstrap, for tools/tagwire-run.
namespace local_bootstrap {
inline constexpr char kSocketVariable[] = "TAGWIRE_BOOT_SOCKET";
inline constexpr char kRankVariable[] = "TAGWIRE_BOOT_RANK";
inline constexpr char kSizeVariable[] = "TAGWIRE_BOOT_SIZE";
inline constexpr char kKeyVariable[] = "TAGWIRE_BOOT_KEY";
inline constexpr std::size_t kKeyBytes = 16;
inline constexpr char kHelloMagic[4] = {'T', 'W', 'B', '1'};

// DEATH frame, launcher to rank, at any time after the hello: magic, rank
// (u32). Only news: a rank waiting in an exchange keeps waiting for its
// answer.
inline constexpr char kDeathMagic[4] = {'T', 'W', 'D', '1'};
std::vector<std::uint8_t> make_death_notice(std::uint32_t rank);
// The dead rank, if `frame` is a death notice.
std::optional<std::uint32_t> parse_death_notice(std::span<const std::uint8_t> frame);

// INCOMPLETE frame, launcher to rank: the answer to an exchange after a
// rank died, sent once every rank still alive has joined it: magic, a dead
// rank (u32). The exchange failed, but the survivors still met: after a
// death MPI_Finalize meets them here (Engine::finalize), and none takes
// its transport down while another may still need it. (Answered at once,
// as it was before, survivors left MPI_Finalize each on its own.)
inline constexpr char kIncompleteMagic[4] = {'T', 'W', 'I', '1'};
std::vector<std::uint8_t> make_incomplete(std::uint32_t dead_rank);
// The dead rank it names, if `frame` is an INCOMPLETE answer.
std::optional<std::uint32_t> parse_incomplete(std::span<const std::uint8_t> frame);

// ABORT frame, rank to launcher at any time after the hello: magic, the
// exit code (i32), the job key (so that no exchange part is ever read as
// one). The launcher ends the job with that code.
inline constexpr char kAbortMagic[4] = {'T', 'W', 'A', '1'};
std::vector<std::uint8_t> make_abort(std::int32_t code, std::span<const std::uint8_t> key);
// The code, if `frame` is an abort request with `key`.
std::optional<std::int32_t> parse_abort(std::span<const std::uint8_t> frame,
                                        std::span<const std::uint8_t> key);

// GOODBYE frame, rank to launcher once MPI_Finalize is done: magic, the
// job key.
inline constexpr char kGoodbyeMagic[4] = {'T', 'W', 'F', '1'};
std::vector<std::uint8_t> make_goodbye(std::span<const std::uint8_t> key);
bool is_goodbye(std::span<const std::uint8_t> frame, std::span<const std::uint8_t> key);

// HELLO frame: magic, rank (u32), key (kKeyBytes).
std::vector<std::uint8_t> make_hello(std::uint32_t rank, std::span<const std::uint8_t> key);
struct Hello {
  std::uint32_t rank;
  std::vector<std::uint8_t> key;
};
Result<Hello> parse_hello(std::span<const std::uint8_t> frame);

std::string key_to_hex(std::span<const std::uint8_t> key);
Result<std::vector<std::uint8_t>> key_from_hex(std::string_view hex);
std::uint64_t token_from_key(std::span<const std::uint8_t> key);
}  // namespace local_bootstrap

}  // namespace tagwire::bootstrap
