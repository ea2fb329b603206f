// Stable key-hash splits (see key_split.h).
#include "cli/formats/key_split.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <set>

#include <openssl/evp.h>

namespace zrec::cli {

namespace {

bool name_ok(std::string_view name) {
  if (name.empty() || name.size() > 64) return false;
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.')) return false;
  return true;
}

// "5%" -> 0.05, "0.05" -> 0.05; NaN when it is neither.
double share_of(std::string value) {
  const bool percent = !value.empty() && value.back() == '%';
  if (percent) value.pop_back();
  if (value.empty() || value.find_first_not_of("0123456789.") != std::string::npos) return NAN;
  char* end = nullptr;
  const double v = std::strtod(value.c_str(), &end);
  if (*end != '\0') return NAN;
  return percent ? v / 100 : v;
}

}  // namespace

Result<std::vector<SplitPart>> parse_split_spec(std::string_view text) {
  const std::string quoted = "'" + std::string(text) + "'";
  std::vector<SplitPart> parts;
  std::vector<double> shares;
  std::set<std::string> names;
  size_t rest_at = SIZE_MAX;
  for (size_t at = 0; at <= text.size();) {
    const size_t comma = std::min(text.find(',', at), text.size());
    const std::string_view item = text.substr(at, comma - at);
    at = comma + 1;
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      return invalid_argument("split " + quoted + ": '" + std::string(item) + "' is not NAME=SHARE (val=5%)");
    const std::string name(item.substr(0, eq)), value(item.substr(eq + 1));
    if (!name_ok(name))
      return invalid_argument("split " + quoted + ": '" + name +
                              "' is no split name (1 to 64 letters, digits, '_', '-', '.')");
    if (!names.insert(name).second) return invalid_argument("split " + quoted + ": '" + name + "' is given twice");
    if (value == "rest") {
      if (rest_at != SIZE_MAX) return invalid_argument("split " + quoted + ": only one split can be 'rest'");
      rest_at = parts.size();
      parts.push_back({name, 0, true});
      shares.push_back(0);
      continue;
    }
    const double share = share_of(value);
    if (!(share >= 0 && share <= 1))
      return invalid_argument("split " + quoted + ": '" + value +
                              "' is no share (a percentage 0..100%, a fraction 0..1)");
    parts.push_back({name, 0, false});
    shares.push_back(share);
  }
  double sum = 0;
  for (double s : shares) sum += s;
  if (sum > 1 + 1e-9) return invalid_argument("split " + quoted + ": the shares add up to more than 100%");
  if (rest_at == SIZE_MAX && sum < 1 - 1e-9)
    return invalid_argument("split " + quoted + ": the shares add up to less than 100% (name one split 'rest')");
  if (rest_at != SIZE_MAX) shares[rest_at] = std::max(0.0, 1 - sum);
  // Cumulative bounds in 2^64ths; the last part takes what rounding leaves.
  double cumulative = 0;
  for (size_t i = 0; i < parts.size(); ++i) {
    cumulative += shares[i];
    parts[i].below = cumulative >= 1 ? UINT64_MAX : static_cast<uint64_t>(std::ldexp(cumulative, 64));
  }
  parts.back().below = UINT64_MAX;
  return parts;
}

uint64_t key_point(std::string_view salt, std::string_view key) {
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned int n = 0;
  const unsigned char zero = 0;
  EVP_DigestInit_ex(ctx, EVP_sha256(), nullptr);
  EVP_DigestUpdate(ctx, salt.data(), salt.size());
  EVP_DigestUpdate(ctx, &zero, 1);
  EVP_DigestUpdate(ctx, key.data(), key.size());
  EVP_DigestFinal_ex(ctx, md, &n);
  EVP_MD_CTX_free(ctx);
  uint64_t point = 0;
  for (int i = 0; i < 8; ++i) point = point << 8 | md[i];
  return point;
}

size_t split_of(const std::vector<SplitPart>& parts, uint64_t point) {
  for (size_t i = 0; i + 1 < parts.size(); ++i)
    if (point < parts[i].below) return i;
  return parts.size() - 1;
}

}  // namespace zrec::cli
