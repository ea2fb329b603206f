// Where the CLI's bytes go: data to stdout or -o FILE, diagnostics to stderr via spdlog.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zrec/status.h"

#include "zrec_support/file.h"

namespace zrec::cli {

// A message as zrec shows it on stderr: every URL in it redacted (zrec/remote.h:
// no password, user or query token) and made printable (formats/printable.h).
std::string diagnostic_text(std::string_view message);

bool stdout_is_terminal();

// main() notes that descriptor 1 was closed when zrec started (`>&-`): it reopens it on
// /dev/null, so that no store file opened later can take its number, and whatever a
// command writes to stdout would then vanish without an error.
void note_stdout_closed_at_start();
// kIoError "stdout was closed when zrec started (>&-): WHAT would be lost; give -o FILE,
// or leave stdout open" when it was. Output::open("-") checks it, and so does every
// command whose data or --json object goes to stdout, before it starts its work.
Status check_stdout_open(const std::string& what);
bool stderr_is_terminal();
bool stdin_is_terminal();

// Routes spdlog's default logger to stderr ("zrec <command>: warning: ...").
// verbosity: -1 errors only (-q), 0 warnings and summaries, 1 info (-v), 2 debug (-vv).
void setup_logging(const std::string& command, int verbosity);

// The core's warnings (zrec/context.h) through the same logger: the WarningSink of every
// CreateOptions, JoinOptions and dictionary file the CLI hands to the core.
void log_core_warning(const std::string& message);

// An output file option refuses to replace an existing file, as zstd does, unless
// forced: kAlreadyExists "OPTION 'PATH' already exists; use -f/--force to overwrite it"
// when `path` is an existing regular file (or a link to one) and `force` is false.
// "-" (stdout) and files that are not regular (/dev/null, a FIFO) are never refused.
// Commands call it before any heavy work, so a refusal costs nothing.
Status refuse_existing_output(const std::string& path, const std::string& option, bool force);

// A buffered data sink: "-" is stdout, anything else a file created, or truncated when
// `force` (see refuse_existing_output; `option` names the path in that refusal). A
// regular file that appears between that check and open() is refused too (O_EXCL).
class Output {
 public:
  static Result<Output> open(const std::string& path, const std::string& option = "-o", bool force = false);
  Output(Output&&) = default;
  Output& operator=(Output&&) = default;
  ~Output();

  bool is_terminal() const;
  Status write(const void* data, size_t n);
  Status write(std::string_view s) { return write(s.data(), s.size()); }
  Status flush();
  const std::string& name() const { return file_.path(); }

 private:
  Output(io::File file, bool owned) : file_(std::move(file)), owned_(owned) {}
  Status write_all(const void* data, size_t n);
  io::File file_;
  bool owned_ = true;  // false for stdout: never close fd 1
  std::string buffer_;
};

// Refuses binary data on a terminal (zstd's manners) unless forced (-f/--force): throws
// UsageError.
void check_binary_output(const Output& out, bool force);

}  // namespace zrec::cli
