// Warnings from the core: things worth saying that are not failures (a leftover
// temporary left in place because it is not provably zrec's). Where they go is a field
// of the options of the calls that may give them (CreateOptions::warn,
// JoinOptions::warn, save_dictionary_file's `warn`), not a process-wide setting.
#pragma once

#include <functional>
#include <string>

namespace zrec {

// Receives one warning, without a prefix or a newline. Empty: the warning goes to
// stderr as "zrec: warning: MESSAGE".
using WarningSink = std::function<void(const std::string& message)>;

}  // namespace zrec
