// The core's warning sink (zrec/warning.h).
#include "zrec/warning.h"

#include <cstdio>

namespace zrec {
namespace {

std::function<void(const std::string&)>& sink() {
  static std::function<void(const std::string&)> s;
  return s;
}

}  // namespace

void set_warning_sink(std::function<void(const std::string&)> s) { sink() = std::move(s); }

void warn(const std::string& message) {
  if (sink()) {
    sink()(message);
    return;
  }
  std::fprintf(stderr, "zrec: warning: %s\n", message.c_str());
}

}  // namespace zrec
