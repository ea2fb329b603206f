// Record selections for `zrec cat`: parsing "3,5,1:9:2"-style text and resolving it
// to record IDs exactly as Python's slice.indices(length) + range() would.
#include "cli/formats/selection.h"

#include <algorithm>
#include <charconv>
#include <limits>

#include <fmt/format.h>

namespace zrec::cli {
namespace {

std::string_view trim(std::string_view s) {
  const auto is_space = [](char c) {
    return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v';
  };
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// Parses an optionally signed decimal int64 ("+7", "-3"). On failure returns the
// reason, phrased to follow the quoted text: "'x' is not an integer".
Result<int64_t> parse_int(std::string_view s) {
  std::string_view digits = s;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);  // from_chars refuses '+'
  int64_t value = 0;
  const char* end = digits.data() + digits.size();
  auto [ptr, ec] = std::from_chars(digits.data(), end, value);
  // Reject "+-3": from_chars would accept the '-' after the '+' we stripped.
  const bool double_sign = digits.size() < s.size() && !digits.empty() && digits.front() == '-';
  if (ec == std::errc::result_out_of_range) {
    return invalid_argument(fmt::format("'{}' is out of the int64 range", s));
  }
  if (ec != std::errc() || ptr != end || double_sign) {
    return invalid_argument(fmt::format("'{}' is not an integer", s));
  }
  return value;
}

// Parses one comma-free item: "7" or "start:stop[:step]" with optional fields.
Result<SelectionItem> parse_item(std::string_view text) {
  SelectionItem item;
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos) {
    ZREC_ASSIGN_OR_RETURN(item.index, parse_int(text));
    return item;
  }
  item.is_slice = true;
  std::string_view fields[3];
  size_t count = 0;
  size_t begin = 0;
  for (;;) {
    const size_t end = text.find(':', begin);
    if (count == 3) return invalid_argument(fmt::format("item '{}' has more than two ':'", text));
    fields[count++] = trim(text.substr(begin, end - begin));
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  std::optional<int64_t>* targets[3] = {&item.start, &item.stop, &item.step};
  for (size_t i = 0; i < count; ++i) {
    if (fields[i].empty()) continue;
    ZREC_ASSIGN_OR_RETURN(*targets[i], parse_int(fields[i]));
  }
  if (item.step == 0) return invalid_argument("slice step cannot be zero");
  return item;
}

// The run of range(start, stop, step) after slice.indices(length) clamping.
// Works in unsigned distances so that steps near INT64_MIN/MAX cannot overflow.
IdRun slice_run(const SelectionItem& item, int64_t length) {
  const int64_t step = item.step.value_or(1);
  const bool backward = step < 0;
  // Python's clamp bounds: [0, length] going forward, [-1, length - 1] going backward.
  const int64_t lower = backward ? -1 : 0;
  const int64_t upper = backward ? length - 1 : length;
  const auto clamp = [&](std::optional<int64_t> v, int64_t if_absent) {
    if (!v) return if_absent;
    int64_t x = *v;
    if (x < 0) return std::max(x + length, lower);  // x >= INT64_MIN, length >= 0: no overflow
    return std::min(x, upper);
  };
  const int64_t start = clamp(item.start, backward ? upper : lower);
  const int64_t stop = clamp(item.stop, backward ? lower : upper);
  if (backward ? start <= stop : start >= stop) return IdRun{0, 1, false, 0};
  const uint64_t distance = backward ? uint64_t(start - stop) : uint64_t(stop - start);
  const uint64_t abs_step = backward ? 0 - uint64_t(step) : uint64_t(step);
  return IdRun{uint64_t(start), abs_step, backward, (distance - 1) / abs_step + 1};
}

// Resolves a single (possibly negative) index; out of range is an error, as in NumPy.
Result<uint64_t> resolve_index(int64_t index, int64_t length) {
  const int64_t id = index < 0 ? index + length : index;
  if (id < 0 || id >= length) {
    return invalid_argument(fmt::format("index {} is out of range for a store of {} records", index, length));
  }
  return uint64_t(id);
}

// A store cannot hold 2^63 records (docs/format.md §10 bounds 4096 + 16*length), so
// clamping the length keeps every computation in int64 without changing results.
int64_t as_signed_length(uint64_t length) {
  return int64_t(std::min<uint64_t>(length, std::numeric_limits<int64_t>::max()));
}

}  // namespace

Result<std::vector<SelectionItem>> parse_selection(std::string_view text) {
  const auto fail = [&](const std::string& why) {
    return invalid_argument(fmt::format("invalid selection '{}': {}", text, why));
  };
  if (trim(text).empty()) return fail("empty selection");
  std::vector<SelectionItem> items;
  size_t begin = 0;
  for (;;) {
    const size_t end = text.find(',', begin);
    const std::string_view item_text = trim(text.substr(begin, end - begin));
    if (item_text.empty()) return fail("empty item");
    Result<SelectionItem> item = parse_item(item_text);
    if (!item.is_ok()) return fail(item.status().message());
    items.push_back(item.value());
    if (end == std::string_view::npos) break;
    begin = end + 1;
  }
  return items;
}

Result<std::vector<IdRun>> resolve_runs(const std::vector<SelectionItem>& items, uint64_t length) {
  const int64_t n = as_signed_length(length);
  std::vector<IdRun> runs;
  for (const SelectionItem& item : items) {
    if (item.is_slice) {
      if (item.step == 0) return invalid_argument("slice step cannot be zero");
      runs.push_back(slice_run(item, n));
    } else {
      ZREC_ASSIGN_OR_RETURN(uint64_t id, resolve_index(item.index, n));
      runs.push_back(IdRun{id, 1, false, 1});
    }
  }
  return runs;
}

Result<std::vector<uint64_t>> resolve_selection(const std::vector<SelectionItem>& items, uint64_t length) {
  ZREC_ASSIGN_OR_RETURN(auto runs, resolve_runs(items, length));
  std::vector<uint64_t> ids;
  for (const IdRun& run : runs)
    for (uint64_t k = 0; k < run.count; ++k) ids.push_back(run.at(k));
  return ids;
}

Result<std::vector<uint64_t>> read_indices(io::InputStream& in, uint64_t length) {
  const int64_t n = as_signed_length(length);
  std::vector<uint64_t> ids;
  std::string pending;  // the current line, which may span reads
  uint64_t line_number = 0;
  const auto take_line = [&](std::string_view line) -> Status {
    ++line_number;
    line = trim(line);
    if (line.empty()) return Status::ok();
    Result<uint64_t> id = [&]() -> Result<uint64_t> {
      ZREC_ASSIGN_OR_RETURN(int64_t index, parse_int(line));
      return resolve_index(index, n);
    }();
    if (!id.is_ok()) {
      return id.status().with_context(fmt::format("'{}' line {}", in.name(), line_number));
    }
    ids.push_back(id.value());
    return Status::ok();
  };
  char chunk[64 * 1024];
  for (;;) {
    ZREC_ASSIGN_OR_RETURN(size_t got, in.read_some(chunk, sizeof chunk));
    if (got == 0) break;
    std::string_view rest(chunk, got);
    for (size_t newline; (newline = rest.find('\n')) != std::string_view::npos;) {
      pending.append(rest.substr(0, newline));
      if (pending.size() > kMaxIndexLineBytes)
        return invalid_argument(fmt::format("'{}' line {} is longer than {} bytes: one record index per line",
                                            in.name(), line_number + 1, kMaxIndexLineBytes));
      ZREC_RETURN_IF_ERROR(take_line(pending));
      pending.clear();
      rest.remove_prefix(newline + 1);
    }
    pending.append(rest);
    if (pending.size() > kMaxIndexLineBytes)
      return invalid_argument(fmt::format("'{}' line {} is longer than {} bytes: one record index per line", in.name(),
                                          line_number + 1, kMaxIndexLineBytes));
  }
  if (!pending.empty()) ZREC_RETURN_IF_ERROR(take_line(pending));
  return ids;
}

SelectionIndex::SelectionIndex(const std::vector<IdRun>& runs, const std::vector<uint64_t>& list)
    : runs_(runs), list_(list) {
  uint64_t sum = 0;
  for (const IdRun& r : runs_) ends_.push_back(sum += r.count);
}

uint64_t SelectionIndex::at(uint64_t k) const {
  const size_t r = std::upper_bound(ends_.begin(), ends_.end(), k) - ends_.begin();
  const uint64_t pos = runs_[r].at(k - (ends_[r] - runs_[r].count));
  return list_.empty() ? pos : list_[pos];
}

}  // namespace zrec::cli
