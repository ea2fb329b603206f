// Where the CLI's bytes go: data to stdout or -o FILE, diagnostics to stderr via spdlog.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "zrec/file.h"
#include "zrec/status.h"

namespace zrec::cli {

bool stdout_is_terminal();
bool stderr_is_terminal();
bool stdin_is_terminal();

// Routes spdlog's default logger to stderr ("zrec <command>: warning: ...").
// verbosity: -1 errors only (-q), 0 warnings and summaries, 1 info (-v), 2 debug (-vv).
void setup_logging(const std::string& command, int verbosity);

// A buffered data sink: "-" is stdout, anything else a file created or truncated.
class Output {
 public:
  static Result<Output> open(const std::string& path);
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
  io::File file_;
  bool owned_ = true;  // false for stdout: never close fd 1
  std::string buffer_;
};

// Refuses binary data on a terminal (zstd's manners) unless forced: throws UsageError.
void check_binary_output(const Output& out, bool force);

}  // namespace zrec::cli
