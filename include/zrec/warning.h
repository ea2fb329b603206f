// Warnings from the core: things worth saying that are not failures (a leftover
// temporary left in place because it is not provably zrec's). The CLI routes them to
// its logger; by default they go to stderr as "zrec: warning: ...".
#pragma once

#include <functional>
#include <string>

namespace zrec {

// Replaces where warnings go (nullptr restores the default). Not thread-safe: set it
// once at startup.
void set_warning_sink(std::function<void(const std::string&)> sink);

// Reports one warning through the sink.
void warn(const std::string& message);

}  // namespace zrec
