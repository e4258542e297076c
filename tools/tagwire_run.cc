// tagwire-run: start N ranks of a program on this machine.
//
//   tagwire-run -n N [--timeout SECONDS] [--tag-output] [--] program [args...]
//
// The launcher is the ranks' bootstrap: it listens on a Unix socket in a
// private (0700) directory, hands each rank its rank, the job size and a
// random job key, and answers allgather rounds once every rank has sent its
// part. A connection without the job key is refused. The first rank that
// exits non-zero stops the job: the others get SIGTERM, then SIGKILL; the
// launcher exits with the failing rank's status (124 on timeout).
// A rank that dies by a signal after joining (crash, SIGKILL, the OOM
// killer) is a dead peer: the others are told over their bootstrap
// connections, so that their pending operations with it fail instead of
// waiting, and get --grace seconds to finish before they are stopped; the
// launcher then exits with 128+signal. From then on a round is answered,
// INCOMPLETE, once every rank still alive has sent its part: the
// survivors' MPI_Finalize still meets. Children die with the launcher
// (PR_SET_PDEATHSIG), so no rank outlives it.
#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "bootstrap/frame_io.h"
#include "common/build_info.h"

namespace {

using namespace tagwire;
using namespace tagwire::bootstrap;
using Clock = std::chrono::steady_clock;

int g_signal_pipe[2] = {-1, -1};

void on_signal(int sig) {
  int saved = errno;
  unsigned char b = static_cast<unsigned char>(sig);
  (void)!::write(g_signal_pipe[1], &b, 1);
  errno = saved;
}

void usage(FILE* out) {
  std::fprintf(out,
               "usage: tagwire-run -n N [options] [--] program [args...]\n\n"
               "Start N ranks of program on this machine, with Tagwire's bootstrap.\n\n"
               "  -n, --np N          number of ranks (1..4096)\n"
               "  --timeout SECONDS   stop the job after this long (exit status 124); each\n"
               "                      rank first prints its pending operations (SIGUSR1,\n"
               "                      which also does it at any time: kill -USR1 PID);\n"
               "                      without it, MPIEXEC_TIMEOUT's seconds if set\n"
               "  --tag-output        prefix every output line with [rank]\n"
               "  --bind-to core|none  core (default): rank i runs on the i-th CPU this\n"
               "                      launcher may use (modulo their number), as Open MPI\n"
               "                      binds; none: ranks go where the kernel puts them\n"
               "  --grace SECONDS     after a rank is killed by a signal, how long the others\n"
               "                      may run on (told it died) before they are stopped\n"
               "                      (default 10)\n"
               "  -x VAR[=VALUE]      give the ranks VAR (VALUE, or this environment's);\n"
               "                      they get the launcher's whole environment anyway\n"
               "  --oversubscribe     accepted: more ranks than cores is always allowed\n"
               "  --version           the version\n"
               "  -h, --help          this text\n\n"
               "Standard input goes to rank 0; the other ranks read /dev/null.\n"
               "For ranks on several nodes use mpirun (PMIx) or srun --mpi=pmi2|pmix.\n\n"
               "Exit status: 0 if every rank exits 0; otherwise the first failing rank's\n"
               "status (128+signal if it was killed), 124 on timeout.\n");
}

struct Options {
  int ranks = 0;
  double timeout_seconds = 0;
  double grace_seconds = 10;
  bool tag_output = false;
  bool bind_to_core = true;
  std::vector<std::pair<std::string, std::string>> exports;  // -x VAR=VALUE
  std::vector<char*> command;
};

// A refused command line: one line that says why, and where the options are.
bool refuse(const std::string& why) {
  std::fprintf(stderr, "tagwire-run: %s (tagwire-run --help lists the options)\n", why.c_str());
  return false;
}

bool parse_options(int argc, char** argv, Options* o) {
  // MPIEXEC_TIMEOUT: the job's time limit where --timeout does not give
  // one, as MPICH's mpiexec and Open MPI's mpirun read it (test harnesses
  // such as MPICH's runtests set it for every run).
  if (const char* v = std::getenv("MPIEXEC_TIMEOUT"); v != nullptr && *v != '\0') {
    char* end = nullptr;
    o->timeout_seconds = std::strtod(v, &end);
    if (*end != '\0' || o->timeout_seconds <= 0) {
      return refuse("MPIEXEC_TIMEOUT wants seconds above zero, not '" + std::string(v) + "'");
    }
  }
  int i = 1;
  for (; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (a == "-h" || a == "--help") {
      usage(stdout);
      std::exit(0);
    } else if (a == "--version" || a == "-V") {
      const std::string_view v = build_info::version();
      std::printf("tagwire-run (Tagwire) %.*s\n", static_cast<int>(v.size()), v.data());
      std::exit(0);
    } else if (a == "--oversubscribe") {
      // Open MPI's habit: nothing to do, ranks beyond the cores share them.
    } else if (a == "-x") {
      const char* v = value();
      if (v == nullptr) return refuse("-x wants VAR or VAR=VALUE");
      const std::string assignment = v;
      const std::size_t eq = assignment.find('=');
      const std::string name = assignment.substr(0, eq);
      if (name.empty()) return refuse("-x wants VAR or VAR=VALUE, not '" + assignment + "'");
      if (eq != std::string::npos) {
        o->exports.emplace_back(name, assignment.substr(eq + 1));
      } else if (const char* here = std::getenv(name.c_str())) {
        o->exports.emplace_back(name, here);
      } else {
        std::fprintf(stderr, "tagwire-run: -x %s: not set here, the ranks get none\n",
                     name.c_str());
      }
    } else if (a == "--host" || a == "-H" || a == "--hostfile" || a == "--machinefile" ||
               a == "-hostfile" || a == "-machinefile" || a == "--hosts" || a == "-host") {
      return refuse(a +
                    ": tagwire-run starts ranks on this machine only; for several nodes "
                    "use mpirun (PMIx) or srun --mpi=pmi2|pmix");
    } else if (a == "-n" || a == "--np" || a == "-np") {
      const char* v = value();
      if (v == nullptr) return refuse(a + " wants a number of ranks");
      char* end = nullptr;
      long n = std::strtol(v, &end, 10);
      if (*end != '\0' || n < 1 || n > 4096) {
        return refuse("-n wants a number of ranks from 1 to 4096, not '" + std::string(v) + "'");
      }
      o->ranks = static_cast<int>(n);
    } else if (a == "--timeout") {
      const char* v = value();
      if (v == nullptr) return refuse("--timeout wants seconds");
      char* end = nullptr;
      o->timeout_seconds = std::strtod(v, &end);
      if (*end != '\0' || o->timeout_seconds <= 0) {
        return refuse("--timeout wants seconds above zero, not '" + std::string(v) + "'");
      }
    } else if (a == "--grace") {
      const char* v = value();
      if (v == nullptr) return refuse("--grace wants seconds");
      char* end = nullptr;
      o->grace_seconds = std::strtod(v, &end);
      if (*end != '\0' || o->grace_seconds < 0) {
        return refuse("--grace wants seconds (0 or more), not '" + std::string(v) + "'");
      }
    } else if (a == "--tag-output") {
      o->tag_output = true;
    } else if (a == "--bind-to") {
      const char* v = value();
      if (v == nullptr) return refuse("--bind-to wants core or none");
      const std::string how = v;
      if (how != "core" && how != "none") {
        return refuse("--bind-to wants core or none, not '" + how + "'");
      }
      o->bind_to_core = how == "core";
    } else if (a == "--") {
      ++i;
      break;
    } else if (!a.empty() && a[0] == '-') {
      return refuse("unknown option " + a);
    } else {
      break;
    }
  }
  for (; i < argc; ++i) o->command.push_back(argv[i]);
  o->command.push_back(nullptr);
  if (o->ranks == 0) return refuse("how many ranks? -n N");
  if (o->command.size() < 2) return refuse("no program to run");
  return true;
}

// One rank's stdout or stderr under --tag-output: the start of a line is
// held until its end arrives, so that lines of different ranks do not mix;
// but never more than kHeldLine bytes of it: a longer line goes out in
// pieces as it comes (a 300 MB line without a newline once took 528 MB and
// 73 s, held whole and searched from its start on every read).
struct TaggedStream {
  static constexpr std::size_t kHeldLine = 64 * 1024;
  std::string held;       // the line's start, not yet written
  bool mid_line = false;  // this line's prefix and first bytes are out

  // Writes the complete lines in `bytes` with the rank's prefix; holds or
  // writes the rest. Time linear in `bytes`.
  void take(FILE* sink, std::size_t rank, const char* bytes, std::size_t n) {
    while (n > 0) {
      const auto* end = static_cast<const char*>(std::memchr(bytes, '\n', n));
      if (end == nullptr) {
        held.append(bytes, n);
        if (held.size() >= kHeldLine) write_held(sink, rank, false);
        return;
      }
      const auto line = static_cast<std::size_t>(end - bytes);
      held.append(bytes, line);
      write_held(sink, rank, true);
      bytes += line + 1;
      n -= line + 1;
    }
  }
  // At the stream's end: what is left, as a last line.
  void finish(FILE* sink, std::size_t rank) {
    if (!held.empty() || mid_line) write_held(sink, rank, true);
  }

 private:
  void write_held(FILE* sink, std::size_t rank, bool end_of_line) {
    if (!mid_line) std::fprintf(sink, "[%zu] ", rank);
    std::fwrite(held.data(), 1, held.size(), sink);
    if (end_of_line) std::fputc('\n', sink);
    mid_line = !end_of_line;
    held.clear();
  }
};

struct Rank {
  pid_t pid = -1;
  bool running = false;
  int out_fd = -1;  // --tag-output pipes
  int err_fd = -1;
  TaggedStream out, err;
};

struct Client {
  int rank = -1;  // -1 until its hello is accepted
  bool has_part = false;
  std::vector<std::uint8_t> part;
  FrameReader reader;  // its frames, as their bytes arrive
};

class Launcher {
 public:
  explicit Launcher(Options options) : o_(std::move(options)), ranks_(o_.ranks) {}

  int run() {
    if (!set_up()) return 1;
    for (int r = 0; r < o_.ranks; ++r) {
      if (!spawn(r)) {
        fail(-1, 127, "could not start rank " + std::to_string(r));
        break;
      }
    }
    loop();
    clean_up();
    return exit_status_;
  }

 private:
  bool set_up() {
    const char* tmp = std::getenv("TMPDIR");
    dir_ = std::string(tmp != nullptr ? tmp : "/tmp") + "/tagwire-XXXXXX";
    if (::mkdtemp(dir_.data()) == nullptr) {
      std::perror("tagwire-run: mkdtemp");
      return false;
    }
    ::chmod(dir_.c_str(), 0700);  // only this user may reach the socket
    socket_path_ = dir_ + "/boot.sock";
    key_.resize(local_bootstrap::kKeyBytes);
    if (::getrandom(key_.data(), key_.size(), 0) != static_cast<ssize_t>(key_.size())) {
      std::perror("tagwire-run: getrandom");
      return false;
    }
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (socket_path_.size() >= sizeof(addr.sun_path)) {
      std::fprintf(stderr, "tagwire-run: TMPDIR path too long for a socket\n");
      return false;
    }
    std::strcpy(addr.sun_path, socket_path_.c_str());
    if (::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
        ::listen(listen_fd_, 4096) != 0) {
      std::perror("tagwire-run: bootstrap socket");
      return false;
    }
    if (::pipe2(g_signal_pipe, O_CLOEXEC | O_NONBLOCK) != 0) return false;
    struct sigaction sa {};
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP}) ::sigaction(sig, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);
    start_ = Clock::now();
    cpu_set_t allowed;
    if (::sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
      for (int c = 0; c < CPU_SETSIZE; ++c) {
        if (CPU_ISSET(c, &allowed)) cpus_.push_back(c);
      }
    }
    return true;
  }

  bool spawn(int r) {
    int out[2] = {-1, -1}, err[2] = {-1, -1};
    if (o_.tag_output && (::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0)) {
      return false;
    }
    pid_t pid = ::fork();
    if (pid < 0) return false;
    if (pid == 0) {
      // One process group for the whole job: the launcher signals it whole.
      ::setpgid(0, pgid_ == 0 ? 0 : pgid_);
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() == 1) _exit(1);  // the launcher is already gone
      if (o_.tag_output) {
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(err[1], STDERR_FILENO);
      }
      ::setenv(local_bootstrap::kSocketVariable, socket_path_.c_str(), 1);
      ::setenv(local_bootstrap::kRankVariable, std::to_string(r).c_str(), 1);
      ::setenv(local_bootstrap::kSizeVariable, std::to_string(o_.ranks).c_str(), 1);
      ::setenv(local_bootstrap::kKeyVariable, local_bootstrap::key_to_hex(key_).c_str(), 1);
      for (const auto& [name, value] : o_.exports) ::setenv(name.c_str(), value.c_str(), 1);
      if (r != 0) {
        // Standard input is rank 0's, as mpirun and srun give it: ranks
        // sharing one terminal or pipe would each take parts of it.
        int null_fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
        if (null_fd >= 0) {
          ::dup2(null_fd, STDIN_FILENO);
          ::close(null_fd);
        }
      }
      for (int sig : {SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::signal(sig, SIG_DFL);
      if (o_.bind_to_core && !cpus_.empty()) {
        // One core per rank while there are enough; beyond, evenly spread.
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus_[static_cast<std::size_t>(r) % cpus_.size()], &one);
        (void)::sched_setaffinity(0, sizeof(one), &one);
      }
      ::execvp(o_.command[0], o_.command.data());
      std::fprintf(stderr, "tagwire-run: cannot run %s: %s\n", o_.command[0], std::strerror(errno));
      _exit(127);
    }
    if (pgid_ == 0) pgid_ = pid;
    ::setpgid(pid, pgid_);  // also from here, so there is no race with the child
    Rank& rank = ranks_[static_cast<std::size_t>(r)];
    rank.pid = pid;
    rank.running = true;
    ++running_;
    if (o_.tag_output) {
      ::close(out[1]);
      ::close(err[1]);
      rank.out_fd = out[0];
      rank.err_fd = err[0];
    }
    return true;
  }

  void loop() {
    while (running_ > 0 || any_output_open()) {
      std::vector<pollfd> fds;
      fds.push_back({g_signal_pipe[0], POLLIN, 0});
      fds.push_back({listen_fd_, POLLIN, 0});
      for (const auto& [fd, c] : clients_) fds.push_back({fd, POLLIN, 0});
      for (const auto& r : ranks_) {
        if (r.out_fd >= 0) fds.push_back({r.out_fd, POLLIN, 0});
        if (r.err_fd >= 0) fds.push_back({r.err_fd, POLLIN, 0});
      }
      ::poll(fds.data(), fds.size(), 100);
      for (const auto& p : fds) {
        if (p.revents == 0) continue;
        if (p.fd == g_signal_pipe[0]) {
          handle_signals();
        } else if (p.fd == listen_fd_) {
          accept_clients();
        } else if (clients_.count(p.fd) != 0) {
          handle_client(p.fd);
        } else {
          forward_output(p.fd);
        }
      }
      reap();
      check_deadlines();
    }
  }

  void handle_signals() {
    unsigned char sig;
    while (::read(g_signal_pipe[0], &sig, 1) == 1) {
      if (sig == SIGCHLD) continue;  // reap() runs after every wake-up
      fail(-1, 128 + sig, std::string("interrupted by ") + strsignal(sig));
    }
  }

  void accept_clients() {
    for (;;) {
      int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
      if (fd < 0) return;
      // Reads never wait (FrameReader): a client that stalls mid-frame
      // holds up nobody. Writes still do, for a rank that does not read its
      // answer: at most this long.
      timeval tv{5, 0};
      ::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
      clients_[fd] = Client{};
    }
  }

  void drop_client(int fd, const std::string& why) {
    Client c = clients_[fd];
    clients_.erase(fd);
    ::close(fd);
    if (c.rank >= 0 && (c.has_part || round_parts_ > 0)) {
      // A killed rank's connection closes before its exit can be reaped
      // (the kernel closes a dying process's files before it tells the
      // parent): a death in an exchange (MPI_Finalize's barrier, say) is
      // reported as the death it is, its signal the job's status, rather
      // than as a rank that left.
      if (!reaped_soon(c.rank, std::chrono::milliseconds(500))) {
        // Alive and gone: its peers wait in an exchange that can never finish.
        fail(c.rank, 1,
             "rank " + std::to_string(c.rank) + " left during a bootstrap exchange (" + why + ")");
        return;
      }
    }
    // After a death an exchange waits for the ranks still connected, one
    // fewer now: a survivor that finalized without the death's news (its
    // message barrier done before it) leaves while others still meet.
    if (!dead_.empty()) maybe_answer_round();
  }

  // Whether rank r's process ends (and is reaped) within `limit`.
  bool reaped_soon(int r, std::chrono::milliseconds limit) {
    const auto deadline = Clock::now() + limit;
    for (;;) {
      reap();
      if (!ranks_[static_cast<std::size_t>(r)].running) return true;
      if (Clock::now() > deadline) return false;
      ::usleep(1000);
    }
  }

  // What a client sent: every whole frame in it, then its end if it closed.
  void handle_client(int fd) {
    auto closed = clients_[fd].reader.read_available(fd);
    if (!closed) {
      drop_client(fd, closed.status().message());
      return;
    }
    for (;;) {
      auto it = clients_.find(fd);
      if (it == clients_.end()) return;  // refused or dropped by a frame
      auto frame = it->second.reader.next();
      if (!frame) {
        drop_client(fd, frame.status().message());
        return;
      }
      if (!frame->has_value()) break;
      handle_frame(fd, std::move(**frame));
    }
    if (*closed) drop_client(fd, "bootstrap connection closed");
  }

  void handle_frame(int fd, std::vector<std::uint8_t> frame) {
    Client& c = clients_[fd];
    if (c.rank < 0) {
      auto hello = local_bootstrap::parse_hello(frame);
      // Each refusal says which it was: a rank that had the key and joined
      // twice was once told it had no key.
      const char* refusal = nullptr;
      if (!hello || hello->key != key_) {
        refusal = "without this job's key";
      } else if (hello->rank >= static_cast<std::uint32_t>(o_.ranks)) {
        refusal = "for a rank outside the job";
      } else if (joined_.count(static_cast<int>(hello->rank)) != 0) {
        refusal = "for a rank that has joined already";
      }
      if (refusal != nullptr) {
        std::fprintf(stderr, "tagwire-run: refused a bootstrap connection %s\n", refusal);
        clients_.erase(fd);
        ::close(fd);
        return;
      }
      c.rank = static_cast<int>(hello->rank);
      joined_[c.rank] = fd;
      std::uint8_t ok = 1;
      (void)write_frame(fd, {&ok, 1});
      stop_if_never_joined();
      return;
    }
    if (local_bootstrap::is_goodbye(frame, key_)) {
      finalized_.insert(c.rank);  // its exit of 0 is the job's normal end
      return;
    }
    if (auto code = local_bootstrap::parse_abort(frame, key_)) {
      // MPI_Abort: its code is the job's status, whatever the rank's own
      // exit (and its closing socket) looks like by the time it is seen.
      abort_job(c.rank, *code);
      return;
    }
    if (c.has_part) {
      drop_client(fd, "sent twice in one exchange");
      return;
    }
    c.has_part = true;
    c.part = std::move(frame);
    ++round_parts_;
    maybe_answer_round();
  }

  // Answers the exchange once everyone it waits for has joined: every rank,
  // or after a death every rank still alive, whose answer then says the
  // exchange is incomplete (bootstrap.h's INCOMPLETE: the survivors' last
  // barrier must still be one).
  void maybe_answer_round() {
    if (dead_.empty()) {
      if (round_parts_ == o_.ranks) answer_round();
      return;
    }
    bool anyone = false;
    for (const auto& [fd, c] : clients_) {
      if (c.rank < 0 || dead_.count(c.rank) != 0) continue;
      if (!c.has_part) return;
      anyone = true;
    }
    if (!anyone) return;
    const auto answer =
        local_bootstrap::make_incomplete(static_cast<std::uint32_t>(*dead_.begin()));
    for (auto& [fd, c] : clients_) {
      if (c.rank >= 0 && dead_.count(c.rank) == 0) (void)write_frame(fd, answer);
      c.has_part = false;
      c.part.clear();
    }
    round_parts_ = 0;
  }

  void answer_round() {
    std::vector<std::vector<std::uint8_t>> table(static_cast<std::size_t>(o_.ranks));
    for (auto& [fd, c] : clients_) {
      if (c.rank >= 0) table[static_cast<std::size_t>(c.rank)] = std::move(c.part);
    }
    auto packed = pack_table(table);
    for (auto& [fd, c] : clients_) {
      if (c.rank < 0) continue;
      (void)write_frame(fd, packed);
      c.has_part = false;
      c.part.clear();
    }
    round_parts_ = 0;
  }

  void forward_output(int fd) {
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      Rank& rank = ranks_[r];
      bool is_out = fd == rank.out_fd;
      if (!is_out && fd != rank.err_fd) continue;
      TaggedStream& stream = is_out ? rank.out : rank.err;
      FILE* sink = is_out ? stdout : stderr;
      char buf[65536];
      ssize_t n = ::read(fd, buf, sizeof(buf));
      if (n > 0) stream.take(sink, r, buf, static_cast<std::size_t>(n));
      if (n <= 0) {  // EOF: flush what is left
        stream.finish(sink, r);
        ::close(fd);
        (is_out ? rank.out_fd : rank.err_fd) = -1;
      }
      std::fflush(sink);
      return;
    }
  }

  bool any_output_open() const {
    for (const auto& r : ranks_) {
      if (r.out_fd >= 0 || r.err_fd >= 0) return true;
    }
    return false;
  }

  // A rank's shared-memory transport names its segments and FIFO
  // /dev/shm/tagwire-<pid>-*, and removes them itself; what a killed rank
  // left behind goes here.
  static void remove_shared_memory_of(pid_t pid) {
    const std::string prefix = "tagwire-" + std::to_string(pid) + "-";
    DIR* dir = ::opendir("/dev/shm");
    if (dir == nullptr) return;
    while (const dirent* entry = ::readdir(dir)) {
      if (std::strncmp(entry->d_name, prefix.c_str(), prefix.size()) == 0) {
        ::unlinkat(::dirfd(dir), entry->d_name, 0);
      }
    }
    ::closedir(dir);
  }

  void reap() {
    for (;;) {
      int status = 0;
      pid_t pid = ::waitpid(-1, &status, WNOHANG);
      if (pid <= 0) return;
      for (std::size_t r = 0; r < ranks_.size(); ++r) {
        Rank& rank = ranks_[r];
        if (rank.pid != pid || !rank.running) continue;
        rank.running = false;
        --running_;
        remove_shared_memory_of(pid);
        int code = 0;
        std::string what;
        if (WIFSIGNALED(status)) {
          code = 128 + WTERMSIG(status);
          what = std::string("was killed by ") + strsignal(WTERMSIG(status));
        } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
          code = WEXITSTATUS(status);
          what = "exited with status " + std::to_string(code);
        }
        const std::string who = "rank " + std::to_string(r) + " (pid " + std::to_string(pid) + ") ";
        // Once timed out, a rank that dies of the report signal (a program
        // that is not Tagwire's) is part of stopping, not a failure of its own.
        if (reporting_) continue;
        if (code != 0 && !stopping_ && WIFSIGNALED(status) &&
            joined_.count(static_cast<int>(r)) != 0) {
          rank_died(static_cast<int>(r), code, who + what);
        } else if (code != 0 && !stopping_) {
          fail(static_cast<int>(r), code, who + what);
        } else if (code == 0 && !stopping_ && joined_.count(static_cast<int>(r)) != 0 &&
                   !said_goodbye(static_cast<int>(r))) {
          // Joined, and gone without MPI_Finalize past every exit handler
          // (_exit, or a crash of the handler itself): the others would
          // wait for it for ever.
          fail(static_cast<int>(r), 1,
               who + "exited (status 0) without MPI_Finalize: the job cannot finish");
        } else if (code == 0 && joined_.count(static_cast<int>(r)) == 0) {
          // Gone without joining: fine for a program that is not MPI, but
          // ranks that are in MPI_Init would wait for it for ever.
          left_unjoined_.insert(static_cast<int>(r));
          stop_if_never_joined();
        }
      }
    }
  }

  // Whether rank r said MPI_Finalize was done; its GOODBYE may still be in
  // its socket when its exit is seen first: read what it sent.
  bool said_goodbye(int r) {
    if (finalized_.count(r) != 0) return true;
    const int fd = joined_.at(r);
    if (clients_.count(fd) != 0) handle_client(fd);
    return finalized_.count(r) != 0;
  }

  // A rank left (status 0) before joining while another rank joined, or
  // joined after one left: the job can never start.
  void stop_if_never_joined() {
    if (stopping_ || left_unjoined_.empty() || joined_.empty()) return;
    const int r = *left_unjoined_.begin();
    fail(r, 1,
         "rank " + std::to_string(r) + " exited (status 0) before MPI_Init while rank " +
             std::to_string(joined_.begin()->first) + " is in it: the job cannot start");
  }

  // A rank that joined died by a signal: tell the others (their pending
  // operations with it then fail with MPI_ERR_PROC_FAILED), let them run on
  // for the grace period, and exit with its status in the end.
  void rank_died(int rank, int code, const std::string& why) {
    if (dead_.empty()) {
      exit_status_ = code;
      grace_deadline_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                           std::chrono::duration<double>(o_.grace_seconds));
      std::fprintf(stderr,
                   "tagwire-run: %s; the other ranks are told, and stopped if still running in "
                   "%g s\n",
                   why.c_str(), o_.grace_seconds);
    } else {
      std::fprintf(stderr, "tagwire-run: %s\n", why.c_str());
    }
    dead_.insert(rank);
    const auto notice = local_bootstrap::make_death_notice(static_cast<std::uint32_t>(rank));
    for (auto& [fd, c] : clients_) {
      if (c.rank < 0 || c.rank == rank) continue;
      (void)write_frame(fd, notice);
    }
    // An exchange the survivors wait in may now have all it can get.
    maybe_answer_round();
  }

  void abort_job(int rank, int code) {
    if (stopping_) return;
    fail(rank, code,
         "rank " + std::to_string(rank) + " ended the job with status " + std::to_string(code) +
             " (MPI_Abort, or an exit without MPI_Finalize)");
    exit_status_ = code;  // over a death seen first: the program said what it wants
  }

  // Records the first failure and stops the job.
  void fail(int rank, int code, const std::string& why) {
    if (stopping_) return;
    stopping_ = true;
    if (dead_.empty()) exit_status_ = code;  // a death came first: its status stands
    std::fprintf(stderr, "tagwire-run: %s; stopping the job\n", why.c_str());
    (void)rank;
    if (pgid_ > 0) ::kill(-pgid_, SIGTERM);
    kill_deadline_ = Clock::now() + std::chrono::seconds(3);
  }

  void check_deadlines() {
    auto now = Clock::now();
    if (!stopping_ && !reporting_ && o_.timeout_seconds > 0 &&
        now - start_ > std::chrono::duration<double>(o_.timeout_seconds)) {
      // First every rank says what it waits for (SIGUSR1: its pending
      // operations), then the job stops.
      std::fprintf(stderr, "tagwire-run: timeout after %g s; the ranks' pending operations:\n",
                   o_.timeout_seconds);
      reporting_ = true;
      if (dead_.empty()) exit_status_ = 124;  // also if every rank is gone by the deadline
      if (pgid_ > 0) ::kill(-pgid_, SIGUSR1);
      report_deadline_ = now + std::chrono::seconds(1);
    }
    if (!stopping_ && reporting_ && now > report_deadline_) {
      char after[64];
      std::snprintf(after, sizeof(after), "timeout after %g s", o_.timeout_seconds);
      fail(-1, 124, after);
    }
    if (!stopping_ && !dead_.empty() && running_ > 0 && now > grace_deadline_) {
      fail(-1, exit_status_,
           "ranks still running " + std::to_string(o_.grace_seconds) + " s after a rank died");
    }
    if (stopping_ && running_ > 0 && now > kill_deadline_ && pgid_ > 0) {
      ::kill(-pgid_, SIGKILL);
      kill_deadline_ = now + std::chrono::seconds(1);
    }
  }

  void clean_up() {
    for (auto& [fd, c] : clients_) ::close(fd);
    if (listen_fd_ >= 0) ::close(listen_fd_);
    ::unlink(socket_path_.c_str());
    ::rmdir(dir_.c_str());
  }

  Options o_;
  std::vector<Rank> ranks_;
  int running_ = 0;
  pid_t pgid_ = 0;
  std::string dir_, socket_path_;
  std::vector<std::uint8_t> key_;
  int listen_fd_ = -1;
  std::map<int, Client> clients_;
  std::map<int, int> joined_;    // rank -> fd
  std::set<int> left_unjoined_;  // ranks that exited 0 without joining
  std::set<int> finalized_;      // ranks whose MPI_Finalize is done (GOODBYE)
  int round_parts_ = 0;
  bool stopping_ = false;
  std::vector<int> cpus_;  // the CPUs this launcher may use, in order
  int exit_status_ = 0;
  std::set<int> dead_;      // ranks killed by a signal after joining
  bool reporting_ = false;  // timed out: the ranks were asked for their pending operations
  Clock::time_point start_, kill_deadline_, grace_deadline_, report_deadline_;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  if (argc == 1) {
    usage(stderr);
    return 2;
  }
  if (!parse_options(argc, argv, &options)) return 2;
  return Launcher(std::move(options)).run();
}
