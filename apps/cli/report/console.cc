// Terminal checks, logging setup and buffered data output.
#include "cli/report/console.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <memory>

#include <spdlog/details/null_mutex.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "zrec/context.h"
#include "zrec/remote.h"

#include "cli/formats/printable.h"
#include "cli/options/usage_error.h"
#include "cli/os/interrupt.h"

namespace zrec::cli {

namespace {
constexpr size_t kOutputBuffer = size_t{1} << 20;
bool stdout_closed_at_start = false;  // set once by main(), before any thread starts
}  // namespace

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }
bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }
bool stdin_is_terminal() { return ::isatty(STDIN_FILENO) == 1; }

void note_stdout_closed_at_start() { stdout_closed_at_start = true; }

Status check_stdout_open(const std::string& what) {
  if (!stdout_closed_at_start) return Status::ok();
  return io_error("stdout was closed when zrec started (>&-): " + what +
                  " would be lost; give -o FILE, or leave stdout open");
}

std::string diagnostic_text(std::string_view message) { return printable(redact_urls_in(message)); }

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
    std::string out = diagnostic_text(line);
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
}

void log_core_warning(const std::string& message) { spdlog::warn("{}", message); }

Status refuse_existing_output(const std::string& path, const std::string& option, bool force) {
  struct stat st;
  if (force || path == "-" || ::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return Status::ok();
  return Status(StatusCode::kAlreadyExists, option + " '" + path + "' already exists; use -f/--force to overwrite it");
}

Result<Output> Output::open(const std::string& path, const std::string& option, bool force) {
  if (path == "-") {
    ZREC_RETURN_IF_ERROR(check_stdout_open("the output"));
    return Output(io::File(STDOUT_FILENO, "<stdout>"), false);
  }
  if (!force) {
    // Create it only if it is new; an existing device or FIFO is opened below.
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0) return Output(io::File(fd, path), true);
    if (errno != EEXIST) return io::errno_status(errno, "cannot open", path);
    ZREC_RETURN_IF_ERROR(refuse_existing_output(path, option, false));
  }
  ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  return Output(std::move(f), true);
}

Output::~Output() {
  if (!owned_) file_.release();  // stdout is borrowed, never closed
}

bool Output::is_terminal() const { return ::isatty(file_.fd()) == 1; }

// As io::File::write_all, but a write blocked on a full pipe ends on SIGINT/SIGTERM when
// the command holds an InterruptScope: its handler interrupts write(2) (no SA_RESTART)
// and the command stops with 130/143 instead of waiting on a reader that never reads.
Status Output::write_all(const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  while (n > 0) {
    const ssize_t r = ::write(file_.fd(), p, n);
    if (r < 0) {
      if (errno != EINTR) return io::errno_status(errno, "cannot write", file_.path());
      if (interrupted()) return cancelled("interrupted while writing '" + file_.path() + "'");
      continue;
    }
    p += r;
    n -= static_cast<size_t>(r);
  }
  return Status::ok();
}

Status Output::write(const void* data, size_t n) {
  if (buffer_.size() + n > kOutputBuffer) {
    ZREC_RETURN_IF_ERROR(flush());
    if (n >= kOutputBuffer) return write_all(data, n);  // large blocks go straight out
  }
  buffer_.append(static_cast<const char*>(data), n);
  return Status::ok();
}

Status Output::flush() {
  if (buffer_.empty()) return Status::ok();
  Status s = write_all(buffer_.data(), buffer_.size());
  buffer_.clear();
  return s;
}

void check_binary_output(const Output& out, bool force) {
  if (!force && out.is_terminal())
    throw UsageError("refusing to write binary data to a terminal (use -o FILE, a pipe, --format text, or -f/--force)");
}

}  // namespace zrec::cli
