// CLI11's parse errors in zrec's words. CLI11 words its errors for its own users ("The
// following argument was not expected: x", "Could not convert: --threads = abc",
// "store is required"); zrec names the operand or option the way its --help does and
// says what was wrong with it, so no parser wording reaches a user.
//
//   catch (const CLI::ParseError& e) { message = parse_error_message(e); }
//   // ExtrasError "The following argument was not expected: b/" -> "unexpected operand 'b/'"
#pragma once

#include <string>

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

// The one-line message for `e` (without the "zrec CMD: " prefix). Every ParseError
// type CLI11 throws while parsing is rewritten; a message of zrec's own validators
// ("--threads: ...") passes through with CLI11's additions removed.
std::string parse_error_message(const CLI::ParseError& e);

}  // namespace zrec::cli
