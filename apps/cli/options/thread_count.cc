#include "cli/options/thread_count.h"

#include <algorithm>
#include <cstdlib>

#include <CLI/CLI.hpp>

namespace zrec::cli {

std::string thread_count_problem(std::string_view text) {
  size_t value = 0;
  bool whole = !text.empty();
  for (char c : text) {
    whole = whole && c >= '0' && c <= '9';
    // Saturates just past the maximum, so that 20 digits cannot wrap around to 4.
    if (whole) value = std::min(value * 10 + static_cast<size_t>(c - '0'), kMaxThreadCount + 1);
  }
  if (whole && value >= 1 && value <= kMaxThreadCount) return {};
  return "'" + std::string(text) + "' is not a whole number from 1 to " + std::to_string(kMaxThreadCount);
}

CLI::Validator thread_count_check() {
  // The empty description keeps CLI11 from adding a range to the option's type name.
  return CLI::Validator([](std::string& value) { return thread_count_problem(value); }, "");
}

Result<size_t> threads_from_environment() {
  const char* text = std::getenv("ZREC_THREADS");
  if (text == nullptr || *text == '\0') return size_t{0};
  const std::string problem = thread_count_problem(text);
  if (!problem.empty()) return invalid_argument("ZREC_THREADS: " + problem);  // app.cc reports it as a usage error
  return static_cast<size_t>(std::strtoul(text, nullptr, 10));
}

}  // namespace zrec::cli
