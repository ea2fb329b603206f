// split_per_stream_value (see per_stream_value.h).
#include "cli/options/per_stream_value.h"

#include "zrec/dataset.h"

#include "cli/formats/printable.h"
#include "cli/options/usage_error.h"

namespace zrec::cli {

std::pair<std::string, std::string> split_per_stream_value(const std::string& spec,
                                                           const std::map<std::string, std::string>& given,
                                                           const PerStreamForm& form) {
  const std::string named = std::string(form.option) + " '" + printable(spec) + "': ";
  const size_t eq = spec.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
    throw UsageError(named + "expected STREAM=" + form.value + ", e.g. " + form.option + " " + form.example);
  std::string name = spec.substr(0, eq);
  if (const std::string why = stream_name_problem(name); !why.empty())
    throw UsageError(named + "'" + printable(name) + "' cannot name a stream: " + why);
  if (const auto first = given.find(name); first != given.end())
    throw UsageError(named + "the stream '" + printable(name) + "' has " + form.has + " already (" + form.option +
                     " '" + printable(first->second) + "'); give one " + form.value + " per STREAM");
  return {std::move(name), spec.substr(eq + 1)};
}

}  // namespace zrec::cli
