#include "bootstrap/bootstrap.h"

#include <poll.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "bootstrap/frame_io.h"
#include "common/siphash.h"

#ifdef TAGWIRE_HAVE_PMIX
#include "bootstrap/bootstrap_pmix.h"
#endif
#ifdef TAGWIRE_HAVE_PMI2
#include "bootstrap/bootstrap_pmi2.h"
#endif

namespace tagwire::bootstrap {

Status Bootstrap::barrier() {
  auto all = allgather({});
  return all ? Status::ok() : all.status();
}

Result<std::uint64_t> agree_job_token(Bootstrap& bootstrap) {
  std::uint64_t mine = 0;
  if (bootstrap.rank() == 0 && ::getrandom(&mine, sizeof(mine), 0) != sizeof(mine)) {
    return Status(ErrorCode::kInternal, "getrandom failed");
  }
  auto all = bootstrap.allgather({reinterpret_cast<const std::uint8_t*>(&mine), sizeof(mine)});
  if (!all) return all.status().with_context("job token exchange");
  std::uint64_t token = 0;
  if ((*all)[0].size() != sizeof(token)) return Status(ErrorCode::kProtocol, "bad job token");
  std::memcpy(&token, (*all)[0].data(), sizeof(token));
  return token;
}

Status Bootstrap::barrier_with_progress(const std::function<void()>& /*progress*/) {
  return barrier();
}

namespace local_bootstrap {

std::vector<std::uint8_t> make_hello(std::uint32_t rank, std::span<const std::uint8_t> key) {
  // Sized once and filled with memcpy (GCC 12 misreports inserts here).
  std::vector<std::uint8_t> out(8 + key.size());
  std::memcpy(out.data(), kHelloMagic, 4);
  std::memcpy(out.data() + 4, &rank, 4);
  if (!key.empty()) std::memcpy(out.data() + 8, key.data(), key.size());
  return out;
}

Result<Hello> parse_hello(std::span<const std::uint8_t> frame) {
  if (frame.size() != 8 + kKeyBytes || std::memcmp(frame.data(), kHelloMagic, 4) != 0) {
    return Status(ErrorCode::kProtocol, "not a Tagwire bootstrap hello");
  }
  Hello hello;
  std::memcpy(&hello.rank, frame.data() + 4, 4);
  hello.key.assign(frame.begin() + 8, frame.end());
  return hello;
}

namespace {
// The DEATH and INCOMPLETE frames' shape: magic, rank (u32).
std::vector<std::uint8_t> make_rank_frame(const char (&magic)[4], std::uint32_t rank) {
  std::vector<std::uint8_t> frame(8);
  std::memcpy(frame.data(), magic, 4);
  std::memcpy(frame.data() + 4, &rank, 4);
  return frame;
}

std::optional<std::uint32_t> parse_rank_frame(std::span<const std::uint8_t> frame,
                                              const char (&magic)[4]) {
  if (frame.size() != 8 || std::memcmp(frame.data(), magic, 4) != 0) return std::nullopt;
  std::uint32_t rank;
  std::memcpy(&rank, frame.data() + 4, 4);
  return rank;
}
}  // namespace

std::vector<std::uint8_t> make_death_notice(std::uint32_t rank) {
  return make_rank_frame(kDeathMagic, rank);
}

std::optional<std::uint32_t> parse_death_notice(std::span<const std::uint8_t> frame) {
  return parse_rank_frame(frame, kDeathMagic);
}

std::vector<std::uint8_t> make_incomplete(std::uint32_t dead_rank) {
  return make_rank_frame(kIncompleteMagic, dead_rank);
}

std::optional<std::uint32_t> parse_incomplete(std::span<const std::uint8_t> frame) {
  return parse_rank_frame(frame, kIncompleteMagic);
}

std::vector<std::uint8_t> make_abort(std::int32_t code, std::span<const std::uint8_t> key) {
  std::vector<std::uint8_t> frame(8 + key.size());
  std::memcpy(frame.data(), kAbortMagic, 4);
  std::memcpy(frame.data() + 4, &code, 4);
  std::memcpy(frame.data() + 8, key.data(), key.size());
  return frame;
}

std::optional<std::int32_t> parse_abort(std::span<const std::uint8_t> frame,
                                        std::span<const std::uint8_t> key) {
  if (frame.size() != 8 + key.size() || std::memcmp(frame.data(), kAbortMagic, 4) != 0 ||
      std::memcmp(frame.data() + 8, key.data(), key.size()) != 0) {
    return std::nullopt;
  }
  std::int32_t code;
  std::memcpy(&code, frame.data() + 4, 4);
  return code;
}

std::vector<std::uint8_t> make_goodbye(std::span<const std::uint8_t> key) {
  std::vector<std::uint8_t> frame(4 + key.size());
  std::memcpy(frame.data(), kGoodbyeMagic, 4);
  std::memcpy(frame.data() + 4, key.data(), key.size());
  return frame;
}

bool is_goodbye(std::span<const std::uint8_t> frame, std::span<const std::uint8_t> key) {
  return frame.size() == 4 + key.size() && std::memcmp(frame.data(), kGoodbyeMagic, 4) == 0 &&
         std::memcmp(frame.data() + 4, key.data(), key.size()) == 0;
}

std::string key_to_hex(std::span<const std::uint8_t> key) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (std::uint8_t b : key) {
    out += digits[b >> 4];
    out += digits[b & 15];
  }
  return out;
}

Result<std::vector<std::uint8_t>> key_from_hex(std::string_view hex) {
  if (hex.size() != 2 * kKeyBytes) {
    return Status(ErrorCode::kConfig, std::string(kKeyVariable) + " must be " +
                                          std::to_string(2 * kKeyBytes) + " hex digits");
  }
  std::vector<std::uint8_t> key(kKeyBytes);
  for (std::size_t i = 0; i < kKeyBytes; ++i) {
    auto [p, ec] = std::from_chars(hex.data() + 2 * i, hex.data() + 2 * i + 2, key[i], 16);
    if (ec != std::errc() || p != hex.data() + 2 * i + 2) {
      return Status(ErrorCode::kConfig, std::string(kKeyVariable) + " is not hexadecimal");
    }
  }
  return key;
}

// A keyed hash of a fixed text, not a slice of the key: every wire message
// carries the token, and seeing it must tell nothing of the key that lets
// a process join the job.
std::uint64_t token_from_key(std::span<const std::uint8_t> key) {
  static constexpr std::string_view kPurpose = "tagwire job token 1";
  std::array<std::uint8_t, 16> k{};
  std::memcpy(k.data(), key.data(), std::min(k.size(), key.size()));
  return siphash24(k, {reinterpret_cast<const std::uint8_t*>(kPurpose.data()), kPurpose.size()});
}

}  // namespace local_bootstrap

namespace {

using namespace local_bootstrap;

Result<int> parse_int_variable(const char* name, int min_value) {
  const char* text = std::getenv(name);
  if (text == nullptr) return Status(ErrorCode::kConfig, std::string(name) + " is not set");
  int value = 0;
  auto [p, ec] = std::from_chars(text, text + std::strlen(text), value);
  if (ec != std::errc() || *p != '\0' || value < min_value) {
    return Status(ErrorCode::kConfig, std::string(name) + "='" + text + "' is not a valid number");
  }
  return value;
}

// A rank started by tools/tagwire-run: one Unix socket to the launcher,
// which answers each allgather when every rank has sent its part.
class LocalBootstrap final : public Bootstrap {
 public:
  LocalBootstrap(int fd, int rank, int size, std::vector<std::uint8_t> key)
      : fd_(fd), rank_(rank), size_(size), token_(token_from_key(key)), key_(std::move(key)) {}
  ~LocalBootstrap() override { ::close(fd_); }

  std::string_view kind() const override { return "tagwire-run"; }
  // The launcher takes the code as the job's exit status and stops the
  // other ranks at once (before this rank's own exit could race it).
  void abort(int code, std::string_view /*why*/) override {
    (void)write_frame(fd_, make_abort(code, key_));
  }
  bool abort_ends_every_rank() const override { return true; }
  bool barrier_holds_survivors() const override { return true; }
  bool reports_deaths() const override { return true; }
  void finalized() override { (void)write_frame(fd_, make_goodbye(key_)); }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::uint64_t job_token() const override { return token_; }

  Result<std::vector<std::vector<std::uint8_t>>> allgather(
      std::span<const std::uint8_t> mine) override {
    TAGWIRE_RETURN_IF_ERROR(write_frame(fd_, mine));
    std::optional<std::vector<std::uint8_t>> answer;
    while (!answer) {
      auto frame = read_answer();
      if (!frame) return frame.status().with_context("bootstrap allgather");
      answer = std::move(*frame);
    }
    auto table = unpack_table(*answer);
    if (table && static_cast<int>(table->size()) != size_) {
      return Status(ErrorCode::kProtocol, "bootstrap allgather returned the wrong number of ranks");
    }
    return table;
  }

  // Progresses while it waits, also after a death notice: the survivors
  // wait for one another (INCOMPLETE says why).
  Status barrier_with_progress(const std::function<void()>& progress) override {
    TAGWIRE_RETURN_IF_ERROR(write_frame(fd_, {}));
    for (;;) {
      pollfd pfd{fd_, POLLIN, 0};
      int ready = ::poll(&pfd, 1, 1);
      if (ready > 0) {
        auto frame = read_answer();
        if (!frame) return frame.status().with_context("bootstrap barrier");
        if (frame->has_value()) return Status::ok();
        continue;  // a death notice: the answer is still to come
      }
      if (ready < 0 && errno != EINTR) {
        return Status(ErrorCode::kPeerFailed,
                      std::string("bootstrap poll: ") + std::strerror(errno));
      }
      progress();
    }
  }

  std::vector<int> take_failed_ranks() override {
    // Outside an exchange the launcher sends nothing but death notices.
    for (;;) {
      pollfd pfd{fd_, POLLIN, 0};
      if (::poll(&pfd, 1, 0) <= 0) break;
      if ((pfd.revents & POLLIN) == 0) break;  // hang-up: the launcher is gone
      auto frame = read_frame(fd_);
      if (!frame) break;
      if (auto dead = parse_death_notice(*frame)) failed_.push_back(static_cast<int>(*dead));
    }
    return std::exchange(failed_, {});
  }

 private:
  // One frame towards the launcher's answer to an exchange: the answer, or
  // nothing for a death notice (kept for take_failed_ranks()), or the
  // error of an INCOMPLETE answer: a rank died, and every survivor has
  // joined the exchange.
  Result<std::optional<std::vector<std::uint8_t>>> read_answer() {
    auto frame = read_frame(fd_);
    if (!frame) return frame.status().with_context("did the launcher die?");
    if (auto dead = parse_death_notice(*frame)) {
      failed_.push_back(static_cast<int>(*dead));
      return std::optional<std::vector<std::uint8_t>>{};
    }
    if (auto dead = parse_incomplete(*frame)) {
      failed_.push_back(static_cast<int>(*dead));
      return Status(ErrorCode::kPeerFailed,
                    "rank " + std::to_string(*dead) + " died (reported by tagwire-run)");
    }
    return std::optional<std::vector<std::uint8_t>>{std::move(*frame)};
  }

  std::vector<int> failed_;
  int fd_;
  int rank_;
  int size_;
  std::uint64_t token_;
  std::vector<std::uint8_t> key_;  // the job's: proves an abort request is this job's
};

Result<std::unique_ptr<Bootstrap>> connect_local(const char* socket_path) {
  auto rank = parse_int_variable(kRankVariable, 0);
  if (!rank) return rank.status();
  auto size = parse_int_variable(kSizeVariable, 1);
  if (!size) return size.status();
  if (*rank >= *size) {
    return Status(ErrorCode::kConfig,
                  std::string(kRankVariable) + " is not below " + kSizeVariable);
  }
  const char* hex = std::getenv(kKeyVariable);
  auto key = key_from_hex(hex == nullptr ? "" : hex);
  if (!key) return key.status();

  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (std::strlen(socket_path) >= sizeof(addr.sun_path)) {
    return Status(ErrorCode::kConfig, std::string(kSocketVariable) + " path is too long");
  }
  std::strcpy(addr.sun_path, socket_path);
  int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status(ErrorCode::kOutOfResources, std::strerror(errno));
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    int e = errno;
    ::close(fd);
    return Status(ErrorCode::kPeerFailed, std::string("cannot reach the launcher at ") +
                                              socket_path + ": " + std::strerror(e));
  }
  auto bootstrap = std::make_unique<LocalBootstrap>(fd, *rank, *size, *key);
  Status s = write_frame(fd, make_hello(static_cast<std::uint32_t>(*rank), *key));
  if (!s.is_ok()) return s.with_context("bootstrap hello");
  auto answer = read_frame(fd);
  if (!answer) return answer.status().with_context("the launcher refused this rank's hello");
  return std::unique_ptr<Bootstrap>(std::move(bootstrap));
}

// No launcher: a job of one.
class SingletonBootstrap final : public Bootstrap {
 public:
  SingletonBootstrap() {
    if (::getrandom(&token_, sizeof(token_), 0) != sizeof(token_)) token_ = 0x5151;
  }
  std::string_view kind() const override { return "singleton"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::uint64_t job_token() const override { return token_; }
  Result<std::vector<std::vector<std::uint8_t>>> allgather(
      std::span<const std::uint8_t> mine) override {
    return std::vector<std::vector<std::uint8_t>>{{mine.begin(), mine.end()}};
  }

 private:
  std::uint64_t token_ = 0;
};

}  // namespace

StartedBy started_by() {
  if (std::getenv(kSocketVariable) != nullptr) return StartedBy::kTagwireRun;
  if (std::getenv("PMIX_RANK") != nullptr) return StartedBy::kPmix;
  if (std::getenv("PMI_FD") != nullptr) return StartedBy::kPmi2;
  // srun sets SLURM_STEP_NUM_TASKS for the tasks of a step (a batch
  // script's own shell has none): several tasks and no PMI means each would
  // run as a job of one, silently. Refused instead.
  const char* tasks = std::getenv("SLURM_STEP_NUM_TASKS");
  if (tasks != nullptr && std::atol(tasks) > 1) return StartedBy::kSrunWithoutPmi;
  return StartedBy::kNone;
}

std::string describe(StartedBy launcher) {
  switch (launcher) {
    case StartedBy::kTagwireRun:
      return std::string("tagwire-run (") + kSocketVariable + " is set)";
    case StartedBy::kPmix:
      return "PMIx: mpirun or srun --mpi=pmix (PMIX_RANK is set)";
    case StartedBy::kPmi2:
      return "PMI-2: srun --mpi=pmi2 (PMI_FD is set)";
    case StartedBy::kSrunWithoutPmi:
      return std::string("srun without a process-management interface (") +
             std::getenv("SLURM_STEP_NUM_TASKS") +
             " tasks, no PMI_FD or PMIX_RANK): refused, run srun --mpi=pmi2 or --mpi=pmix";
    case StartedBy::kNone:
      break;
  }
  return "none: a singleton job of one rank";
}

Result<std::unique_ptr<Bootstrap>> create_bootstrap() {
  switch (started_by()) {
    case StartedBy::kTagwireRun:
      return connect_local(std::getenv(kSocketVariable));
    case StartedBy::kPmix:
#ifdef TAGWIRE_HAVE_PMIX
      return create_pmix_bootstrap();
#else
      return Status(ErrorCode::kUnsupported,
                    "started by a PMIx launcher, but this build has no PMIx (install libpmix-dev)");
#endif
    case StartedBy::kPmi2:
#ifdef TAGWIRE_HAVE_PMI2
      return create_pmi2_bootstrap();
#else
      return Status(ErrorCode::kUnsupported,
                    "started by a PMI-2 launcher (srun --mpi=pmi2), but this build has no PMI-2 "
                    "(install libpmi2-0-dev)");
#endif
    case StartedBy::kSrunWithoutPmi:
      return Status(ErrorCode::kConfig,
                    "started by srun as one of " +
                        std::string(std::getenv("SLURM_STEP_NUM_TASKS")) +
                        " tasks without a process-management interface, so no task could "
                        "find the others: run srun --mpi=pmi2 or srun --mpi=pmix (or set "
                        "MpiDefault in slurm.conf)");
    case StartedBy::kNone:
      break;
  }
  return std::unique_ptr<Bootstrap>(new SingletonBootstrap);
}

}  // namespace tagwire::bootstrap
