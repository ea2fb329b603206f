// The options every command takes, given before its name (`zrec --threads 4 -q cat ...`):
// registered on the root, and turned into GlobalOptions once the line is parsed.
#pragma once

#include <string>

#include "cli/app/command.h"
#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

// The root's options as parsed, before they become GlobalOptions: the ones whose text
// needs a second look (--wait=SECONDS, ZREC_THREADS when --threads is absent).
struct RootOptions {
  CLI::Option* threads_option = nullptr;
  int verbose = 0;
  bool quiet = false;
  std::string wait_text;  // --wait: "forever"; --wait=SECONDS: the number
  std::string cacert;
  int remote_timeout = 0;
};

// Registers the root's options on `app`, binding those GlobalOptions holds as they are
// to `global` and the rest to the returned RootOptions (which must outlive the parse).
void add_root_options(CLI::App& app, GlobalOptions& global, RootOptions& root);

// After a successful parse: fills `global` from `root` and the environment. On a usage
// error (a --wait=SECONDS that is no number, a bad ZREC_THREADS) prints it on stderr
// for `where` ("zrec cat") and returns false.
bool finish_root_options(const RootOptions& root, GlobalOptions& global, const std::string& where);

}  // namespace zrec::cli
