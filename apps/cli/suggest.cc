#include "cli/suggest.h"

#include <algorithm>
#include <vector>

namespace zrec::cli {

size_t edit_distance(std::string_view a, std::string_view b) {
  // Three rows of the dynamic programme: two back is needed for the adjacent swap.
  std::vector<size_t> before(b.size() + 1), prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const size_t substitute = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, substitute});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) cur[j] = std::min(cur[j], before[j - 2] + 1);
    }
    std::swap(before, prev);
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

namespace {

std::string_view without_dashes(std::string_view s) {
  while (!s.empty() && s.front() == '-') s.remove_prefix(1);
  return s;
}

}  // namespace

std::string closest_name(std::string_view typed, const std::vector<std::string>& candidates) {
  const std::string_view word = without_dashes(typed);
  if (word.empty()) return {};
  const size_t allowed = word.size() <= 5 ? 1 : 1 + (word.size() - 3) / 3;
  std::string best;
  size_t best_distance = allowed + 1;
  for (const std::string& c : candidates) {
    const size_t d = edit_distance(word, without_dashes(c));
    if (d < best_distance) {
      best_distance = d;
      best = c;
    }
  }
  return best;
}

}  // namespace zrec::cli
