// Names of StatusCode values, as they appear in messages and `--json` output.
#include "zrec/status.h"

namespace zrec {

const char* to_string(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kMalformed:
      return "malformed";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kBusy:
      return "busy";
    case StatusCode::kUnsupported:
      return "unsupported";
    case StatusCode::kAlreadyExists:
      return "already exists";
    case StatusCode::kCancelled:
      return "cancelled";
  }
  // Only reachable through a cast from an out-of-range integer.
  return "unknown";
}

}  // namespace zrec
