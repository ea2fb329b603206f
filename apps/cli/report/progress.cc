// The progress meter (see progress.h).
#include "cli/report/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdio>

#include "zrec/lanes.h"

#include "cli/formats/printable.h"
#include "cli/os/interrupt.h"
#include "cli/report/console.h"

namespace zrec::cli {

namespace {

constexpr auto kRedrawInterval = std::chrono::milliseconds(166);  // about 6 redraws a second

// "1,234,567": counts are easier to read with thousands separators.
std::string grouped(uint64_t n) {
  std::string digits = std::to_string(n), out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string clock_time(double secs) {
  const uint64_t s = secs < 0 ? 0 : static_cast<uint64_t>(secs + 0.5);
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%llu:%02llu:%02llu", static_cast<unsigned long long>(s / 3600),
                  static_cast<unsigned long long>(s / 60 % 60), static_cast<unsigned long long>(s % 60));
  else
    std::snprintf(buf, sizeof buf, "%llu:%02llu", static_cast<unsigned long long>(s / 60),
                  static_cast<unsigned long long>(s % 60));
  return buf;
}

// Columns of the terminal on stderr; 0 when it is not one (no truncation then).
size_t terminal_columns() {
  winsize ws{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 0;
}

void write_stderr(const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(STDERR_FILENO, s.data() + done, s.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // progress is best effort
    done += static_cast<size_t>(n);
  }
}

constexpr const char* kClearLine = "\r\033[K";

}  // namespace

bool ProgressMeter::wanted(const OutputPrefs& g) {
  if (g.no_progress || g.verbosity < 0) return false;
  return g.progress || stderr_is_terminal();
}

ProgressMeter::ProgressMeter(const OutputPrefs& g, std::string label)
    : enabled_(wanted(g)),
      label_(printable(label)),  // "verify PATH": a path on the terminal, escaped as in messages
      started_(std::chrono::steady_clock::now()) {
  if (enabled_) {
    thread_ = start_background_thread([this] { loop(); });  // never takes SIGINT/SIGTERM
  }
}

ProgressMeter::~ProgressMeter() { finish(); }

void ProgressMeter::loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (!cv_.wait_for(lock, kRedrawInterval, [this] { return stopping_; })) draw_locked();
}

void ProgressMeter::draw_locked() {
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  const uint64_t records = records_.load(std::memory_order_relaxed);
  const uint64_t bytes = bytes_.load(std::memory_order_relaxed);
  const uint64_t total_records = total_records_.load(std::memory_order_relaxed);
  const uint64_t total_bytes = total_bytes_.load(std::memory_order_relaxed);

  std::string line = label_ + ": " + grouped(records);
  if (total_records > 0) line += "/" + grouped(total_records);
  line += " records, " + format_bytes(static_cast<double>(bytes));
  if (total_records == 0 && total_bytes > 0) line += "/" + format_bytes(static_cast<double>(total_bytes));
  double fraction = -1;
  if (total_records > 0) fraction = static_cast<double>(records) / static_cast<double>(total_records);
  else if (total_bytes > 0) fraction = static_cast<double>(bytes) / static_cast<double>(total_bytes);
  if (fraction >= 0) {
    char pct[16];
    std::snprintf(pct, sizeof pct, " (%.0f%%)", fraction > 1 ? 100.0 : fraction * 100);
    line += pct;
  }
  if (secs > 0) {
    line += ", " + grouped(static_cast<uint64_t>(static_cast<double>(records) / secs)) + " records/s, " +
            format_bytes(static_cast<double>(bytes) / secs) + "/s";
  }
  line += ", " + clock_time(secs);
  if (fraction > 0 && fraction < 1) line += ", ETA " + clock_time(secs * (1 - fraction) / fraction);

  // A line longer than the terminal would wrap, and \r would then redraw only its end.
  if (const size_t cols = terminal_columns(); cols > 1 && line.size() > cols - 1) line.resize(cols - 1);
  write_stderr("\r" + line + "\033[K");
  drawn_ = true;
}

void ProgressMeter::print_above(const std::function<void()>& print) {
  if (!enabled_) {
    print();
    return;
  }
  std::lock_guard<std::mutex> lock(mu_);
  if (drawn_) write_stderr(kClearLine);
  drawn_ = false;
  std::fflush(stderr);
  print();
  std::fflush(stderr);
}

void ProgressMeter::finish() {
  if (!enabled_) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::lock_guard<std::mutex> lock(mu_);
  if (drawn_) write_stderr(kClearLine);
  drawn_ = false;
}

}  // namespace zrec::cli
