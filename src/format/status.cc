// Names of StatusCode values, as they appear in messages and `--json` output.
#include "zrec/status.h"

#include <iterator>

namespace zrec {

namespace {

// Indexed by the code. The size check stands in for -Wswitch's "every value named": a
// code added after kCancelled moves the last value, and this must grow with it.
constexpr const char* kNames[] = {
    "ok",                // kOk
    "invalid argument",  // kInvalidArgument
    "not found",         // kNotFound
    "malformed",         // kMalformed
    "I/O error",         // kIoError
    "busy",              // kBusy
    "unsupported",       // kUnsupported
    "already exists",    // kAlreadyExists
    "cancelled",         // kCancelled
};
static_assert(std::size(kNames) == static_cast<size_t>(StatusCode::kCancelled) + 1,
              "one name per StatusCode, in the enum's order");

}  // namespace

const char* to_string(StatusCode code) {
  const auto i = static_cast<size_t>(code);
  // Past the table only through a cast from an out-of-range integer.
  return i < std::size(kNames) ? kNames[i] : "unknown";
}

}  // namespace zrec
