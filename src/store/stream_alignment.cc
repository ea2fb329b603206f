// Whether a root's stores line up with its commit (store/stream_alignment.h).
#include "store/stream_alignment.h"

#include <algorithm>

namespace zrec::store {

std::vector<StreamProblem> stream_alignment(const std::string& root, const RootState& state,
                                            const std::vector<std::string>& stores,
                                            const std::map<std::string, uint64_t>& lengths) {
  std::vector<StreamProblem> out;
  auto length_of = [&](const std::string& name) -> std::optional<uint64_t> {
    const auto it = lengths.find(name);
    return it == lengths.end() ? std::nullopt : std::optional<uint64_t>(it->second);
  };
  for (const auto& name : stores)
    if (Status s = check_root_stream(root, name); !s.is_ok())
      out.push_back({StreamProblem::Kind::kLayout, name, std::nullopt, s.message()});
  for (const auto& name : state.streams) {
    if (!std::binary_search(stores.begin(), stores.end(), name)) {
      // A stream that holds no committed sample may be gone: a session that created it
      // was killed while taking it back, and the next commit no longer lists it.
      if (state.length > 0) out.push_back({StreamProblem::Kind::kMissing, name, std::nullopt, {}});
      continue;
    }
    const std::optional<uint64_t> n = length_of(name);
    if (!n || *n == state.length) continue;
    out.push_back({*n < state.length ? StreamProblem::Kind::kShort : StreamProblem::Kind::kLong, name, n, {}});
  }
  for (const auto& name : stores) {
    if (std::binary_search(state.streams.begin(), state.streams.end(), name)) continue;
    const std::optional<uint64_t> n = length_of(name);
    // An empty store while nothing is committed: a stream a killed first run created.
    if (state.length == 0 && n == uint64_t{0}) continue;
    out.push_back({StreamProblem::Kind::kUnlisted, name, n, {}});
  }
  return out;
}

}  // namespace zrec::store
