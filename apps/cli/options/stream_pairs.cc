#include "cli/options/stream_pairs.h"

#include "cli/formats/printable.h"
#include "cli/options/usage_error.h"

namespace zrec::cli {

std::vector<StreamPair> parse_stream_pairs(const std::vector<std::string>& specs, const StreamPairForm& form) {
  std::vector<StreamPair> out;
  for (const std::string& spec : specs) {
    const size_t eq = form.stream_first ? spec.find('=') : spec.rfind('=');
    const std::string given = std::string(form.option) + " '" + printable(spec) + "': ";
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size()) throw UsageError(given + form.expected);
    std::string left = spec.substr(0, eq), right = spec.substr(eq + 1);
    StreamPair p = form.stream_first ? StreamPair{std::move(left), std::move(right)}
                                     : StreamPair{std::move(right), std::move(left)};
    for (const StreamPair& o : out)
      if (o.stream == p.stream) throw UsageError(given + "the stream '" + printable(p.stream) + "' is named twice");
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace zrec::cli
