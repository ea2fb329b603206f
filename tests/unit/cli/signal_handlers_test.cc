// Tests for SignalHandlers (apps/cli/os/signal_handlers.h), the nesting that InterruptScope
// and MapFaultGuard share: only the outermost scope installs (after its prepare step)
// and only its end restores what the signals had before.
#include "cli/os/signal_handlers.h"

#include <signal.h>

#include <doctest/doctest.h>

using zrec::cli::SignalHandlers;

namespace {

void first_handler(int) {}
void second_handler(int) {}

struct sigaction action_of(void (*handler)(int)) {
  struct sigaction sa {};
  sa.sa_handler = handler;
  sigemptyset(&sa.sa_mask);
  return sa;
}

void (*handler_of(int sig))(int) {
  struct sigaction now {};
  ::sigaction(sig, nullptr, &now);
  return now.sa_handler;
}

int g_prepared = 0;
void count_prepare() { ++g_prepared; }

}  // namespace

TEST_CASE("SignalHandlers: the outermost scope installs and restores, and inner scopes change nothing") {
  ::signal(SIGUSR1, SIG_IGN);  // what the scopes must give back
  ::signal(SIGUSR2, SIG_DFL);
  SignalHandlers handlers{SIGUSR1, SIGUSR2};
  g_prepared = 0;
  {
    SignalHandlers::Scope outer(handlers, action_of(first_handler), count_prepare);
    CHECK(g_prepared == 1);
    CHECK((handler_of(SIGUSR1) == first_handler));
    CHECK((handler_of(SIGUSR2) == first_handler));
    CHECK((handlers.previous(SIGUSR1).sa_handler == SIG_IGN));
    CHECK((handlers.previous(SIGUSR2).sa_handler == SIG_DFL));
    {
      SignalHandlers::Scope inner(handlers, action_of(second_handler), count_prepare);
      CHECK(g_prepared == 1);  // not prepared again
      CHECK((handler_of(SIGUSR1) == first_handler));
    }
    CHECK((handler_of(SIGUSR1) == first_handler));  // the inner end restored nothing
  }
  CHECK((handler_of(SIGUSR1) == SIG_IGN));
  CHECK((handler_of(SIGUSR2) == SIG_DFL));
  {
    SignalHandlers::Scope again(handlers, action_of(second_handler));  // a new outermost one
    CHECK((handler_of(SIGUSR2) == second_handler));
  }
  CHECK((handler_of(SIGUSR2) == SIG_DFL));
  ::signal(SIGUSR1, SIG_DFL);
}
