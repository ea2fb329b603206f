// append-tar's end of a successful run (see tar_summary.h).
#include "cli/import/tar_summary.h"

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <spdlog/spdlog.h>

#include "cli/import/append_session.h"
#include "cli/report/byte_size.h"

namespace zrec::cli {

std::string tar_import_summary(CommandReport& outcome, const std::string& root, const std::vector<std::string>& streams,
                               const std::string& stream_list, const TarRunCounts& c) {
  if (c.ignored > 0)
    spdlog::warn("ignored {} member{} (extensions not selected, no extension, or not regular files)", c.ignored,
                 c.ignored == 1 ? "" : "s");
  if (c.incomplete > 0) spdlog::warn("skipped {} incomplete sample{}", c.incomplete, c.incomplete == 1 ? "" : "s");
  const double secs = outcome.elapsed_s();
  const uint64_t now = c.first_length + c.added;
  const uint64_t by_option = std::min(c.skipped, c.skip_first), present = c.skipped - by_option;
  outcome.set("path", root).set("samples_appended", c.added).set("samples_skipped", by_option);
  outcome.set("samples_present", present);
  outcome.set("incomplete_skipped", c.incomplete).set("members_ignored", c.ignored).set("bytes_in", c.bytes_in);
  outcome.set("stored_bytes", c.stored).set("length", now).set("streams", streams);
  const double rate_secs = std::max(secs, 1e-6);
  std::string line = "appended " + std::to_string(c.added) + (c.added == 1 ? " sample (" : " samples (") +
                     format_bytes(static_cast<double>(c.bytes_in)) + " in, " +
                     format_bytes(static_cast<double>(c.stored)) + " stored) to " + std::to_string(streams.size()) +
                     " stream" + (streams.size() == 1 ? "" : "s") + " of '" + root + "' (" + stream_list + ")";
  line += skipped_words(by_option, present);
  char tail[160];
  std::snprintf(tail, sizeof tail, " in %.2f s (%.0f samples/s, %s/s); it now holds %llu", secs,
                static_cast<double>(c.added) / rate_secs,
                format_bytes(static_cast<double>(c.bytes_in) / rate_secs).c_str(),
                static_cast<unsigned long long>(now));
  return line + tail;
}

}  // namespace zrec::cli
