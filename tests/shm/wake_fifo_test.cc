// The wake FIFO beside a shared-memory segment: a notify wakes the
// receiver's poll(), and a notify to a receiver that has died neither kills
// the sender (SIGPIPE) nor hides a SIGPIPE the application had coming.
#include "shm/wake_fifo.h"

#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

namespace tagwire::shm {
namespace {

std::string fifo_path(const char* what) {
  return "/dev/shm/tagwire-wake-test-" + std::to_string(::getpid()) + "-" + what;
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN) != 0;
}

TEST(WakeFifo, NotifyWakesThePollAndDrainQuietsIt) {
  auto fifo = WakeFifo::create(fifo_path("wake"));
  ASSERT_TRUE(fifo.is_ok()) << fifo.status().message();
  WakeTarget target(fifo_path("wake"));
  EXPECT_FALSE(readable(fifo->fd()));
  target.notify();
  target.notify();
  EXPECT_TRUE(readable(fifo->fd()));
  fifo->drain();
  EXPECT_FALSE(readable(fifo->fd()));
}

// The receiver's process holds the FIFO's only read end; when it dies the
// end closes, and a write raises SIGPIPE in the sender.
TEST(WakeFifo, NotifyToADeadReceiverLeavesTheSenderAlive) {
  EXPECT_EXIT(
      {
        ::signal(SIGPIPE, SIG_DFL);
        auto fifo = WakeFifo::create(fifo_path("dead"));
        if (!fifo.is_ok()) std::_Exit(2);
        WakeTarget target(fifo_path("dead"));
        target.notify();     // opens the write end while the receiver lives
        *fifo = WakeFifo();  // the receiver dies: no read end is left
        target.notify();
        target.notify();  // the FIFO's name is gone too: nothing to open
        sigset_t pending;
        sigpending(&pending);
        if (sigismember(&pending, SIGPIPE) == 1) std::_Exit(3);  // left behind, blocked
        sigset_t mask;
        pthread_sigmask(SIG_SETMASK, nullptr, &mask);
        if (sigismember(&mask, SIGPIPE) == 1) std::_Exit(4);  // mask not restored
        std::_Exit(0);
      },
      ::testing::ExitedWithCode(0), "");
}

// A SIGPIPE the application blocked and has pending stays pending: the
// notify takes back only the one its own write raised.
TEST(WakeFifo, KeepsTheApplicationsPendingSigpipe) {
  EXPECT_EXIT(
      {
        sigset_t pipe_only;
        sigemptyset(&pipe_only);
        sigaddset(&pipe_only, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
        ::raise(SIGPIPE);
        auto fifo = WakeFifo::create(fifo_path("pending"));
        if (!fifo.is_ok()) std::_Exit(2);
        WakeTarget target(fifo_path("pending"));
        target.notify();
        *fifo = WakeFifo();
        target.notify();
        sigset_t pending;
        sigpending(&pending);
        std::_Exit(sigismember(&pending, SIGPIPE) == 1 ? 0 : 3);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace tagwire::shm
