// Tests for SIGINT/SIGTERM handling (apps/cli/interrupt) together with
// io::InputStream's cancel flag: a read blocked on an idle pipe returns kCancelled
// when the signal arrives, and the exit code is 128 + the signal.
#include "cli/os/interrupt.h"

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <doctest/doctest.h>

#include "cli/app/command.h"
#include "io/store_lock.h"
#include "testutil.h"
#include "zrec_support/file.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

namespace {

// meta.zr in a fresh directory, locked exclusively by `holder`, and `waiter`: its own
// open file description of the same file, whose lock requests the holder refuses.
struct HeldLock {
  test::TempDir dir;
  io::File holder, waiter;
  HeldLock() {
    auto h = io::File::open(dir / "meta.zr", O_RDWR | O_CREAT, 0644);
    REQUIRE(h.is_ok());
    holder = std::move(h.value());
    REQUIRE(::flock(holder.fd(), LOCK_EX) == 0);
    auto w = io::File::open(dir / "meta.zr", O_RDWR);
    REQUIRE(w.is_ok());
    waiter = std::move(w.value());
  }
};

}  // namespace

TEST_SUITE("interrupt") {
  TEST_CASE("a signal stops a read blocked on an idle pipe with kCancelled") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    {
      InterruptScope scope;
      CHECK_FALSE(interrupted());
      io::InputStream in(fds[0], "pipe", {.cancel = interrupt_token()});
      const pthread_t reader = ::pthread_self();
      std::thread signaller([reader] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ::pthread_kill(reader, SIGTERM);  // to this thread, as the kernel would pick it
      });
      char buf[16];
      const auto started = std::chrono::steady_clock::now();
      auto got = in.read_some(buf, sizeof buf);  // nothing is ever written
      signaller.join();
      REQUIRE_FALSE(got.is_ok());
      CHECK(got.status().code() == StatusCode::kCancelled);
      CHECK(got.status().message() == "interrupted while reading 'pipe'");
      CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(5));
      CHECK(interrupt_signal() == SIGTERM);
      CHECK(interrupt_exit_code() == 143);
      // Once set, reads stop before blocking again.
      CHECK(in.read_some(buf, sizeof buf).status().code() == StatusCode::kCancelled);
    }
    ::close(fds[0]);
    ::close(fds[1]);
  }

  TEST_CASE("a read that checked the flag just before the signal still wakes (self-pipe)") {
    // The race the self-pipe closes: the handler ran (flag set, byte written) after
    // the stream's last flag check and before it blocked. Simulated with a token that
    // has only the wake descriptor, which raise() makes readable.
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    {
      InterruptScope scope;
      const CancelToken token = interrupt_token();
      REQUIRE(token.wake_fd >= 0);
      io::InputStream in(fds[0], "pipe", {.cancel = {nullptr, token.wake_fd}});
      ::raise(SIGINT);
      char buf[16];
      auto got = in.read_some(buf, sizeof buf);  // would block forever without the pipe
      REQUIRE_FALSE(got.is_ok());
      CHECK(got.status().code() == StatusCode::kCancelled);
    }
    {
      InterruptScope fresh;  // a new scope drains the pipe
      REQUIRE(::write(fds[1], "ok", 2) == 2);
      io::InputStream in(fds[0], "pipe", {.cancel = interrupt_token()});
      char buf[2];
      auto got = in.read_full(buf, 2);
      REQUIRE(got.is_ok());
      CHECK(got.value() == 2);
    }
    ::close(fds[0]);
    ::close(fds[1]);
  }

  TEST_CASE("the first signal decides the exit code, a new scope clears it") {
    {
      InterruptScope scope;
      ::raise(SIGINT);
      ::raise(SIGTERM);
      CHECK(interrupt_signal() == SIGINT);
      CHECK(interrupt_exit_code() == 130);
    }
    InterruptScope again;
    CHECK_FALSE(interrupted());
    CHECK(interrupt_exit_code() == 130);  // kCancelled without a signal
  }

  TEST_CASE("a stream without the flag, or with it clear, reads normally") {
    int fds[2];
    REQUIRE(::pipe(fds) == 0);
    REQUIRE(::write(fds[1], "abc", 3) == 3);
    ::close(fds[1]);
    InterruptScope scope;
    io::InputStream in(fds[0], "pipe", {.cancel = interrupt_token()});
    char buf[8];
    auto got = in.read_full(buf, sizeof buf);
    REQUIRE(got.is_ok());
    CHECK(got.value() == 3);
    ::close(fds[0]);
  }

  TEST_CASE("a lock wait whose cancel token is set already ends at once, without the lock") {
    HeldLock lock;
    std::atomic<int> stop{15};
    const LockWait wait = true;
    const CancelToken cancel{&stop, -1};
    Status s = io::lock_store(lock.waiter, io::LockMode::kExclusive, wait, cancel, "S");
    CHECK(s.code() == StatusCode::kCancelled);
    CHECK(s.message() == "interrupted while waiting for the lock on store 'S'; nothing was changed");
  }

  TEST_CASE("a --wait for a held store lock ends on a signal with kCancelled") {
    HeldLock lock;
    {
      InterruptScope scope;
      const pthread_t self = ::pthread_self();
      std::thread signaller([self] {
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        ::pthread_kill(self, SIGINT);
      });
      const auto started = std::chrono::steady_clock::now();
      GlobalOptions g;  // --wait: the command's Context cancels on the interrupt token
      g.wait = true;
      const Context ctx = g.context(Work::kRead);
      Status s = io::lock_store(lock.waiter, io::LockMode::kShared, ctx.wait, ctx.control.cancel, "S");
      signaller.join();
      CHECK(s.code() == StatusCode::kCancelled);
      CHECK(s.message() == "interrupted while waiting for the lock on store 'S'; nothing was changed");
      CHECK(std::chrono::steady_clock::now() - started < std::chrono::seconds(2));
      CHECK(interrupt_exit_code() == 130);
    }
  }
}

}  // namespace zrec::cli
