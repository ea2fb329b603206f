// Handlers for two signals that nested scopes share: the outermost scope installs them,
// and its end puts back the dispositions they replaced; inner scopes change nothing.
// InterruptScope (SIGINT, SIGTERM) and MapFaultGuard (SIGBUS, SIGSEGV) are such scopes.
//
//   constinit SignalHandlers g_handlers{SIGINT, SIGTERM};
//   class MyScope {
//    public:
//     MyScope() : scope_(g_handlers, my_action()) {}
//    private:
//     SignalHandlers::Scope scope_;  // also makes MyScope non-copyable
//   };
//
// Scopes begin and end on one thread (a command's), as signal dispositions are the
// process's.
#pragma once

#include <signal.h>

namespace zrec::cli {

class SignalHandlers {
 public:
  constexpr SignalHandlers(int first, int second) : signals_{first, second} {}
  SignalHandlers(const SignalHandlers&) = delete;
  SignalHandlers& operator=(const SignalHandlers&) = delete;

  // The disposition `sig` had before the outermost scope installed its handler, for a
  // handler that hands a signal on.
  const struct sigaction& previous(int sig) const { return previous_[sig == signals_[0] ? 0 : 1]; }

  class Scope {
   public:
    // When no scope of `handlers` is alive: runs `prepare` (if any), then installs
    // `action` for both signals.
    Scope(SignalHandlers& handlers, const struct sigaction& action, void (*prepare)() = nullptr);
    // The last scope to end restores the previous dispositions.
    ~Scope();
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    SignalHandlers& handlers_;
  };

 private:
  int signals_[2];
  struct sigaction previous_[2] = {};
  int depth_ = 0;  // scopes alive
};

}  // namespace zrec::cli
