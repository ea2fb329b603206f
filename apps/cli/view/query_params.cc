// Query parameter parsing (see query_params.h).
#include "cli/view/query_params.h"

#include <charconv>

#include "cli/formats/printable.h"
#include "cli/formats/selection.h"

namespace zrec::cli::view {

namespace {

Status bad(const char* name, const std::string& value, const std::string& want) {
  return invalid_argument("parameter '" + std::string(name) + "': '" + printable(value) + "' is not " + want);
}

}  // namespace

Result<std::optional<uint64_t>> optional_uint_param(const HttpRequest& request, const char* name, uint64_t min,
                                                    uint64_t max) {
  const std::string* text = request.param(name);
  if (text == nullptr || text->empty()) return std::optional<uint64_t>();
  const std::string want = "an integer in " + std::to_string(min) + ".." + std::to_string(max);
  uint64_t v = 0;
  const char* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, v);
  if (ec != std::errc() || ptr != end || v < min || v > max || (*text)[0] == '+') return bad(name, *text, want);
  return std::optional<uint64_t>(v);
}

Result<uint64_t> uint_param(const HttpRequest& request, const char* name, std::optional<uint64_t> fallback,
                            uint64_t min, uint64_t max) {
  ZREC_ASSIGN_OR_RETURN(std::optional<uint64_t> v, optional_uint_param(request, name, min, max));
  if (v) return *v;
  if (fallback) return *fallback;
  return invalid_argument("parameter '" + std::string(name) + "' is required");
}

Result<uint64_t> id_param(const HttpRequest& request, const char* name, uint64_t length) {
  const std::string* text = request.param(name);
  if (text == nullptr) return invalid_argument("parameter '" + std::string(name) + "' is required");
  ZREC_ASSIGN_OR_RETURN(auto items, parse_selection(*text));
  if (items.size() != 1 || items[0].is_slice) return bad(name, *text, "one record index");
  ZREC_ASSIGN_OR_RETURN(auto ids, resolve_selection(items, length));
  return ids.front();
}

}  // namespace zrec::cli::view
