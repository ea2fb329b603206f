#include "cli/app/help_format.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/app/did_you_mean.h"
#include "cli/app/help_text.h"
#include "cli/options/option_choices.h"

namespace zrec::cli {

namespace {

// Value sets of more words than this (--dtype's NumPy names) keep a one-word placeholder.
constexpr size_t kMaxPlaceholderWords = 6;

std::string upper(std::string s) {
  for (char& c : s) c = c == '-' ? '_' : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

// The placeholder for an option's value: its words when it takes a few named values
// (--framing lines|nul|u32le|u64le, as the man pages' synopses write them), N for
// numbers, FILE/LIST/DIR for paths, BYTES for sizes, else the option's long name in
// capitals (--dtype DTYPE), as man pages and argparse write it.
std::string placeholder(const CLI::Option* o) {
  if (const Choices* words = choices_of(o); words && words->size() <= kMaxPlaceholderWords) {
    std::string joined;
    for (const std::string& w : *words) joined += (joined.empty() ? "" : "|") + w;
    return joined;
  }
  const std::string type = o->get_type_name();
  if (type.starts_with("UINT") || type.starts_with("INT") || type.starts_with("FLOAT")) return "N";
  static const std::map<std::string, std::string> paths = {
      {"output", "FILE"},
      {"input", "FILE"},
      {"dict", "FILE"},
      {"manifest", "FILE"},
      {"keys", "FILE"},
      {"against", "FILE"},
      {"indices-from", "FILE"},
      {"files-from", "LIST"},
      {"dir", "DIR"},
      {"export", "DIR"},
      {"maxsize", "BYTES"},
      {"resume-file", "FILE"},
      {"remote-timeout", "SECONDS"},
      {"endpoint-url", "URL"},
  };
  const std::vector<std::string>& longs = o->get_lnames();
  if (longs.empty()) return "VALUE";
  const auto p = paths.find(longs.front());
  return p != paths.end() ? p->second : upper(longs.front());
}

// "--dense --shape" for a set of options, sorted so the text does not depend on pointers.
std::string names_of(const std::set<CLI::Option*>& options) {
  std::vector<std::string> names;
  for (const CLI::Option* o : options) names.push_back(o->get_name());
  std::sort(names.begin(), names.end());
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

class HelpFormatter : public CLI::Formatter {
 public:
  HelpFormatter() {
    label("Positionals", "Arguments");
    label("SUBCOMMAND", "COMMAND");
  }

  std::string make_help(const CLI::App* app, std::string name, CLI::AppFormatMode mode) const override {
    if (mode == CLI::AppFormatMode::Sub) return make_expanded(app);
    std::stringstream out;
    out << make_description(app) << make_usage(app, name) << make_positionals(app) << make_groups(app, mode);
    if (const CLI::App* root = app->get_parent()) {
      const auto globals = root->get_options([root](const CLI::Option* o) {
        return o->nonpositional() && o != root->get_help_ptr() && o != root->get_version_ptr();
      });
      if (!globals.empty()) out << make_group("Global options", false, globals);
    }
    out << make_subcommands(app, mode) << '\n' << make_footer(app);
    return out.str();
  }

  // What the command does, in prose, then its examples: both from its man page
  // (help_text.h); the root's page is zrec.1.
  std::string make_footer(const CLI::App* app) const override {
    const std::string command = app->get_parent() ? app->get_name() : "zrec";
    std::string footer(help_description(command));
    if (const std::string_view examples = help_examples(command); !examples.empty())
      footer += (footer.empty() ? "" : "\n") + std::string("Examples:\n") + std::string(examples);
    return footer;
  }

  std::string make_option_name(const CLI::Option* o, bool is_positional) const override {
    if (is_positional) return upper(o->get_name(true, false));
    // CLI11 writes a flag's value for a bare use into its name ("--wait{forever}"); the
    // one such flag, --wait, also takes =SECONDS, which is what help shows.
    const std::string name = o->get_name(false, true);
    const size_t brace = name.find('{');
    return brace == std::string::npos ? name : name.substr(0, brace) + "[=SECONDS]";
  }

  std::string make_option_opts(const CLI::Option* o) const override {
    if (o->get_positional() || !takes_value(o)) return {};
    return " " + placeholder(o);
  }

  std::string make_option_desc(const CLI::Option* o) const override {
    std::string desc = o->get_description();
    if (o->get_required() && !o->get_positional()) desc += " (required)";
    if (!o->get_needs().empty()) desc += " (needs " + names_of(o->get_needs()) + ")";
    if (!o->get_excludes().empty()) desc += " (not with " + names_of(o->get_excludes()) + ")";
    if (!o->get_envname().empty()) desc += " (env: " + o->get_envname() + ")";
    if (!o->get_default_str().empty() && desc.find("(default") == std::string::npos)
      desc += " (default: " + o->get_default_str() + ")";
    return desc;
  }

  std::string make_option_usage(const CLI::Option* o) const override {
    std::string usage = make_option_name(o, true);
    if (o->get_expected_max() > 1) usage += "...";
    return o->get_required() ? usage : "[" + usage + "]";
  }
};

}  // namespace

void use_help_format(CLI::App& root) { root.formatter(std::make_shared<HelpFormatter>()); }

}  // namespace zrec::cli
