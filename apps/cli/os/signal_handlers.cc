// Nested scopes over two signals' handlers (see signal_handlers.h).
#include "cli/os/signal_handlers.h"

namespace zrec::cli {

SignalHandlers::Scope::Scope(SignalHandlers& handlers, const struct sigaction& action, void (*prepare)())
    : handlers_(handlers) {
  if (handlers_.depth_++ > 0) return;
  if (prepare != nullptr) prepare();
  for (int i = 0; i < 2; ++i) ::sigaction(handlers_.signals_[i], &action, &handlers_.previous_[i]);
}

SignalHandlers::Scope::~Scope() {
  if (--handlers_.depth_ > 0) return;
  for (int i = 0; i < 2; ++i) ::sigaction(handlers_.signals_[i], &handlers_.previous_[i], nullptr);
}

}  // namespace zrec::cli
