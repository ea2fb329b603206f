// Terminal checks, logging setup and buffered data output.
#include "cli/console.h"

#include <fcntl.h>
#include <unistd.h>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/details/null_mutex.h>
#include <spdlog/spdlog.h>

#include <cstdio>
#include <memory>

#include "cli/printable.h"
#include "cli/usage.h"
#include "zrec/warning.h"

namespace zrec::cli {

namespace {
constexpr size_t kOutputBuffer = size_t{1} << 20;
}

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }
bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }
bool stdin_is_terminal() { return ::isatty(STDIN_FILENO) == 1; }

namespace {

// stderr, one message a line: paths and input quoted in a message are made printable
// (see printable.h), so they cannot forge lines or drive the terminal.
class PrintableStderrSink final : public spdlog::sinks::base_sink<spdlog::details::null_mutex> {
 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    spdlog::memory_buf_t formatted;
    formatter_->format(msg, formatted);
    std::string_view line(formatted.data(), formatted.size());
    const bool eol = !line.empty() && line.back() == '\n';
    if (eol) line.remove_suffix(1);
    std::string out = printable(line);
    if (eol) out += '\n';
    std::fwrite(out.data(), 1, out.size(), stderr);
  }
  void flush_() override { std::fflush(stderr); }
};

}  // namespace

void setup_logging(const std::string& command, int verbosity) {
  // spdlog's default logger writes to stdout, which is reserved for data.
  auto logger = std::make_shared<spdlog::logger>("zrec-" + command, std::make_shared<PrintableStderrSink>());
  logger->set_pattern("zrec " + command + ": %^%l%$: %v");
  logger->set_level(verbosity < 0    ? spdlog::level::err
                    : verbosity == 0 ? spdlog::level::warn
                    : verbosity == 1 ? spdlog::level::info
                                     : spdlog::level::debug);
  spdlog::set_default_logger(logger);
  // The core's warnings (zrec/warning.h) go through the same logger.
  set_warning_sink([](const std::string& message) { spdlog::warn("{}", message); });
}

Result<Output> Output::open(const std::string& path) {
  if (path == "-") return Output(io::File(STDOUT_FILENO, "<stdout>"), false);
  ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  return Output(std::move(f), true);
}

Output::~Output() {
  if (!owned_) file_.release();  // stdout is borrowed, never closed
}

bool Output::is_terminal() const { return ::isatty(file_.fd()) == 1; }

Status Output::write(const void* data, size_t n) {
  if (buffer_.size() + n > kOutputBuffer) {
    ZREC_RETURN_IF_ERROR(flush());
    if (n >= kOutputBuffer) return file_.write_all(data, n);  // large blocks go straight out
  }
  buffer_.append(static_cast<const char*>(data), n);
  return Status::ok();
}

Status Output::flush() {
  if (buffer_.empty()) return Status::ok();
  Status s = file_.write_all(buffer_.data(), buffer_.size());
  buffer_.clear();
  return s;
}

void check_binary_output(const Output& out, bool force) {
  if (!force && out.is_terminal())
    throw UsageError("refusing to write binary data to a terminal (use -o FILE, a pipe, --format text, or --force)");
}

}  // namespace zrec::cli
