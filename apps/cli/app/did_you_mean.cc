#include "cli/app/did_you_mean.h"

#include <algorithm>
#include <vector>

#include <CLI/CLI.hpp>

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

bool takes_value(const CLI::Option* o) { return o->get_expected_max() > 0 && o->get_type_size_max() > 0; }

namespace {

// The option `name` ("--threads", "-o") of the command, or of the root: CLI11 lets the
// root's options follow the command word (fallthrough).
const CLI::Option* find_option(const CLI::App& root, const CLI::App* cmd, const std::string& name) {
  if (cmd != nullptr)
    if (const CLI::Option* o = cmd->get_option_no_throw(name)) return o;
  return root.get_option_no_throw(name);
}

// Every long option name ("--threads") the command and the root accept.
std::vector<std::string> long_names(const CLI::App& root, const CLI::App* cmd) {
  std::vector<std::string> names;
  for (const CLI::App* app : {cmd, &root}) {
    if (app == nullptr) continue;
    for (const CLI::Option* o : app->get_options())
      for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  }
  return names;
}

UnknownName unknown_option(const CLI::App& root, const CLI::App* cmd, const std::string& typed) {
  UnknownName u;
  u.where = cmd == nullptr ? "zrec" : "zrec " + cmd->get_name();
  u.message = "unknown option '" + typed + "'";
  // "-threads" is most likely "--threads", so short words are compared to long names too.
  const std::string near = closest_name(typed, long_names(root, cmd));
  if (!near.empty()) u.message += "; did you mean '" + near + "'?";
  return u;
}

// Names users bring from other tools, and the zrec command that does that job.
std::string familiar_name(const std::string& typed) {
  static const std::pair<const char*, const char*> kFamiliar[] = {
      {"ls", "info"},     {"list", "info"},        {"stat", "info"},        {"show", "info"}, {"check", "verify"},
      {"fsck", "verify"}, {"test", "verify"},      {"validate", "verify"},  {"dump", "cat"},  {"export", "cat"},
      {"hash", "digest"}, {"sha256sum", "digest"}, {"import", "append-tar"}};
  for (const auto& [name, command] : kFamiliar)
    if (typed == name) return command;
  return {};
}

UnknownName unknown_command(const CLI::App& root, const std::string& typed) {
  std::vector<std::string> names;
  for (const CLI::App* c : root.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); }))
    names.push_back(c->get_name());  // listed commands only: hidden ones are not suggested
  UnknownName u{true, "zrec", "unknown command '" + typed + "'"};
  std::string near = familiar_name(typed);
  if (near.empty()) near = closest_name(typed, names);
  if (!near.empty()) u.message += "; did you mean '" + near + "'?";
  return u;
}

// Commands whose operands after the first may be a SELECTION, where -1 is an index.
bool takes_selection(const CLI::App& cmd) {
  return cmd.get_option_no_throw("selection") != nullptr || cmd.get_name() == "digest";
}

// "-19" where no operand may be negative: an option, as zstd spells a level.
UnknownName negative_number_option(const CLI::App* cmd, const std::string& typed) {
  UnknownName u;
  u.where = cmd == nullptr ? "zrec" : "zrec " + cmd->get_name();
  u.message = "unknown option '" + typed + "'";
  if (cmd != nullptr && cmd->get_option_no_throw("--level") != nullptr)
    u.message += "; did you mean '--level " + typed.substr(1) + "'?";
  return u;
}

}  // namespace

std::optional<UnknownName> find_unknown_name(const CLI::App& root, const std::vector<std::string>& args) {
  const CLI::App* cmd = nullptr;
  size_t positionals = 0;  // the command's own operands seen so far
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--") break;
    const bool is_long = word.size() > 2 && word.compare(0, 2, "--") == 0;
    const bool is_short = !is_long && word.size() > 1 && word[0] == '-' && word[1] != '-';
    if (is_long || is_short) {
      const size_t eq = word.find('=');
      const std::string name = is_long ? word.substr(0, eq) : word.substr(0, 2);
      if (const CLI::Option* o = find_option(root, cmd, name)) {
        // The value is the next word unless attached: --codec=raw, -ofile.
        const bool attached = is_long ? eq != std::string::npos : word.size() > 2;
        if (!attached && takes_value(o)) ++i;
        continue;
      }
      const bool negative_number = is_short && word[1] >= '0' && word[1] <= '9';
      if (!negative_number) return unknown_option(root, cmd, is_long ? name : word);
      // A number is an operand only where one may be negative: a SELECTION (cat
      // STORE -1). Elsewhere "-19" is a compression level typed as zstd takes it.
      if (cmd == nullptr || !takes_selection(*cmd) || positionals == 0) return negative_number_option(cmd, word);
    }
    if (cmd != nullptr) {  // one of the command's own positionals
      ++positionals;
      continue;
    }
    for (const CLI::App* c : root.get_subcommands({}))
      if (c->get_name() == word) cmd = c;
    if (cmd == nullptr) return unknown_command(root, word);
  }
  return std::nullopt;
}

}  // namespace zrec::cli
