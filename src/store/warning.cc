// Warnings to the caller's sink (store/warn.h).
#include <cstdio>

#include "store/warn.h"

namespace zrec::store {

void warn(const WarningSink& sink, const std::string& message) {
  if (sink) {
    sink(message);
    return;
  }
  std::fprintf(stderr, "zrec: warning: %s\n", message.c_str());
}

}  // namespace zrec::store
