// zrec completion bash|zsh: prints a shell completion script generated from the CLI11
// app tree itself, so subcommands and flags added later are completed without anyone
// editing a list. The build runs it to produce the installed scripts (CMakeLists.txt).
//
// What a value completes to is decided here, per option or positional:
//   - named value sets (codec, format, framing, parse, tier, workload and dtype names):
//     the words the option's own table holds (option_choices.h), the table its command
//     checks the value against;
//   - store arguments (positionals named store/stores/src/dst, or described as stores
//     and not files) and --dir/--export: directories;
//   - other text values (-o, --dict, --files-from, ...): file names;
//   - numbers, sizes and shapes: nothing (the shell offers no guesses).
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "cli/app/command.h"
#include "cli/app/did_you_mean.h"
#include "cli/options/option_choices.h"
#include "cli/options/usage_error.h"
#include "cli/report/console.h"

namespace zrec::cli {

namespace {

enum class ValueKind { kNone, kWords, kFiles, kDirs };

struct Value {
  ValueKind kind = ValueKind::kNone;
  std::string words;  // space-separated, for kWords
};

Value value_of_option(const CLI::Option* o) {
  if (const Choices* words = choices_of(o)) {
    std::string joined;
    for (const std::string& w : *words) joined += (joined.empty() ? "" : " ") + w;
    return {ValueKind::kWords, joined};
  }
  for (const std::string& l : o->get_lnames()) {
    const std::string name = "--" + l;
    if (name == "--dir" || name == "--export") return {ValueKind::kDirs, {}};
    // append-tar's --parse takes EXT=int|float|ints|floats: nothing to offer.
    if (name == "--shape" || name == "--bytes" || name == "--parse") return {};
  }
  // Text values are paths unless listed above; numbers (UINT, INT, FLOAT) complete to nothing.
  return o->get_type_name().starts_with("TEXT") ? Value{ValueKind::kFiles, {}} : Value{};
}

Value value_of_positional(const CLI::Option* o) {
  const std::string name = o->get_name(true);
  const std::string& about = o->get_description();
  if (name == "selection") return {};
  const bool about_stores = about.starts_with("Store") && about.find("file") == std::string::npos;
  if (name == "store" || name == "stores" || name == "src" || name == "dst" || about_stores)
    return {ValueKind::kDirs, {}};
  return {ValueKind::kFiles, {}};
}

std::vector<std::string> option_names(const CLI::Option* o) {
  std::vector<std::string> names;
  for (const std::string& s : o->get_snames()) names.push_back("-" + s);
  for (const std::string& l : o->get_lnames()) names.push_back("--" + l);
  return names;
}

// Hidden options (group "": deprecated spellings) are not offered.
std::vector<const CLI::Option*> flags_of(const CLI::App* app) {
  return app->get_options([](const CLI::Option* o) { return o->nonpositional() && !o->get_group().empty(); });
}

std::vector<const CLI::Option*> positionals_of(const CLI::App* app) {
  return app->get_options([](const CLI::Option* o) { return !o->nonpositional() && o->get_positional(); });
}

std::vector<const CLI::App*> visible_commands(const CLI::App& root) {
  return root.get_subcommands([](const CLI::App* a) { return !a->get_group().empty(); });
}

std::string join(const std::vector<std::string>& v, const char* sep = " ") {
  std::string out;
  for (const std::string& s : v) out += (out.empty() ? "" : sep) + s;
  return out;
}

// What one shell's script does to complete a value of each kind; `words` is a format
// string whose {} is the value's words.
struct ShellActions {
  const char* words;
  const char* files;
  const char* dirs;
  const char* none;
};

constexpr ShellActions kBashActions{"COMPREPLY=($(compgen -W '{}' -- \"$cur\"))", "_zrec_paths -f", "_zrec_paths -d",
                                    "COMPREPLY=()"};
constexpr ShellActions kZshActions{"({})", "_files", "_files -/", " "};

std::string shell_action(const Value& v, const ShellActions& actions) {
  switch (v.kind) {
    case ValueKind::kWords:
      return fmt::format(fmt::runtime(actions.words), v.words);
    case ValueKind::kFiles:
      return actions.files;
    case ValueKind::kDirs:
      return actions.dirs;
    case ValueKind::kNone:
      break;
  }
  return actions.none;
}

// ---- bash ---------------------------------------------------------------------------

std::string bash_reply(const Value& v) { return shell_action(v, kBashActions); }

// The parts of the bash script that come from the CLI: the command names, the flags,
// and the case arms that complete option values, flags and positionals.
struct BashCases {
  std::vector<std::string> command_names, global_flags, valued;  // valued: "cmd:-x" patterns
  std::string value_cases;                                       // case "$cmd:$prev" arms
  std::string flag_cases, positional_cases;
};

BashCases bash_cases(const CLI::App& root) {
  BashCases b;
  const auto commands = visible_commands(root);
  for (const CLI::App* c : commands) b.command_names.push_back(c->get_name());
  for (const CLI::Option* o : flags_of(&root)) {
    for (const std::string& n : option_names(o)) b.global_flags.push_back(n);
    if (!takes_value(o)) continue;
    b.value_cases +=
        fmt::format("    *:{}) {}; return ;;\n", join(option_names(o), "|*:"), bash_reply(value_of_option(o)));
    for (const std::string& n : option_names(o)) b.valued.push_back("*:" + n);
  }
  for (const CLI::App* c : commands) {
    std::vector<std::string> flags;
    for (const CLI::Option* o : flags_of(c)) {
      for (const std::string& n : option_names(o)) flags.push_back(n);
      if (!takes_value(o)) continue;
      std::vector<std::string> pats;
      for (const std::string& n : option_names(o)) pats.push_back(c->get_name() + ":" + n);
      b.value_cases += fmt::format("    {}) {}; return ;;\n", join(pats, "|"), bash_reply(value_of_option(o)));
      for (const std::string& p : pats) b.valued.push_back(p);
    }
    for (const std::string& g : b.global_flags)
      if (std::find(flags.begin(), flags.end(), g) == flags.end()) flags.push_back(g);
    b.flag_cases += fmt::format("    {}) words='{}' ;;\n", c->get_name(), join(flags));
    // Positionals by index; the last one repeats when it takes several values.
    std::string arms;
    const auto pos = positionals_of(c);
    for (size_t i = 0; i < pos.size(); ++i) {
      const bool last_repeats = i + 1 == pos.size() && pos[i]->get_expected_max() != 1;
      arms += fmt::format("        {}) {} ;;\n", last_repeats ? "*" : std::to_string(i),
                          bash_reply(value_of_positional(pos[i])));
    }
    b.positional_cases += fmt::format("    {})\n      case $npos in\n{}      esac ;;\n", c->get_name(), arms);
  }
  return b;
}

std::string bash_script(const CLI::App& root, const std::string& version) {
  const BashCases b = bash_cases(root);
  const std::vector<std::string>& command_names = b.command_names;
  const std::vector<std::string>& valued = b.valued;
  return fmt::format(
      R"(# bash completion for zrec {version}; generated by 'zrec completion bash' from the CLI itself.
# Completes subcommands, their flags, codec/format/framing names and store directories.

# Fills COMPREPLY with files (-f) or directories (-d) matching $cur.
_zrec_paths() {{
  local IFS=$'\n'
  compopt -o filenames 2>/dev/null
  COMPREPLY=($(compgen "$1" -- "$cur"))
}}

_zrec() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}}
  local cmd="" npos=0 i w skip=0 words
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${{COMP_WORDS[i]}}
    if ((skip)); then skip=0; continue; fi
    if [[ -z $cmd ]]; then
      case $w in
        {commands}) cmd=$w ;;
        *) case "*:$w" in {global_valued}) skip=1 ;; esac ;;
      esac
      continue
    fi
    case $w in
      --) ;;
      -?*) case "$cmd:$w" in {valued}) [[ $w != *=* ]] && skip=1 ;; esac ;;
      *) npos=$((npos + 1)) ;;
    esac
  done
  # The value of an option given as --opt=VALUE.
  if [[ $cur == --*=* ]]; then
    prev=${{cur%%=*}}
    cur=${{cur#*=}}
  fi
  case "$cmd:$prev" in
{value_cases}  esac
  if [[ -z $cmd ]]; then
    if [[ $cur == -* ]]; then
      COMPREPLY=($(compgen -W '{global_flags}' -- "$cur"))
    else
      COMPREPLY=($(compgen -W '{commands_words}' -- "$cur"))
    fi
    return
  fi
  if [[ $cur == -* ]]; then
    case $cmd in
{flag_cases}    esac
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
    return
  fi
  case $cmd in
{positional_cases}  esac
}}
complete -F _zrec zrec
)",
      fmt::arg("version", version), fmt::arg("commands", join(command_names, "|")),
      fmt::arg("commands_words", join(command_names)), fmt::arg("global_flags", join(b.global_flags)),
      fmt::arg("global_valued",
               [&] {
                 std::vector<std::string> g;
                 for (const std::string& v : valued)
                   if (v.starts_with("*:")) g.push_back(v);
                 return g.empty() ? std::string("-") : join(g, "|");
               }()),
      fmt::arg("valued", valued.empty() ? std::string("-") : join(valued, "|")), fmt::arg("value_cases", b.value_cases),
      fmt::arg("flag_cases", b.flag_cases), fmt::arg("positional_cases", b.positional_cases));
}

// ---- zsh ----------------------------------------------------------------------------

// A description fit for an _arguments spec inside single quotes: its first clause, with
// the characters _arguments gives meaning to (: [ ]) left out and quotes escaped.
std::string zsh_text(const std::string& about) {
  std::string out;
  for (char ch : about) {
    if (ch == ';' || ch == '\n') break;
    if (ch == ':' || ch == '[' || ch == ']' || ch == '\\') continue;
    if (ch == '\'') out += "'\\''";
    else out += ch;
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == ',')) out.pop_back();
  return out;
}

std::string zsh_action(const Value& v) { return shell_action(v, kZshActions); }

// `skip`: the flags of a subcommand, whose names the root's own specs must not repeat.
std::string zsh_option_specs(const CLI::App* app, const std::string& indent, const CLI::App* skip = nullptr) {
  std::string out;
  for (const CLI::Option* o : flags_of(app)) {
    if (skip) {
      bool shadowed = false;
      for (const std::string& n : option_names(o))
        for (const CLI::Option* s : flags_of(skip))
          for (const std::string& m : option_names(s)) shadowed = shadowed || n == m;
      if (shadowed) continue;
    }
    const std::string about = zsh_text(o->get_description());
    for (const std::string& n : option_names(o)) {
      // Repeatable flags (-v -v) get '*'; valued long options accept --opt=VALUE or --opt VALUE.
      const bool repeats = !takes_value(o) && o->get_multi_option_policy() == CLI::MultiOptionPolicy::TakeAll;
      std::string spec = (repeats ? "*" : "") + n;
      if (takes_value(o)) {
        spec += (n.starts_with("--") ? "=" : "+");
        spec += "[" + about + "]:value:" + zsh_action(value_of_option(o));
      } else {
        spec += "[" + about + "]";
      }
      out += indent + "'" + spec + "'\n";
    }
  }
  return out;
}

std::string zsh_script(const CLI::App& root, const std::string& version) {
  std::string command_list, command_cases;
  for (const CLI::App* c : visible_commands(root)) {
    command_list += fmt::format("    '{}:{}'\n", c->get_name(), zsh_text(c->get_description()));
    std::string specs = zsh_option_specs(c, "        ") + zsh_option_specs(&root, "        ", c);
    const auto pos = positionals_of(c);
    for (size_t i = 0; i < pos.size(); ++i) {
      const bool repeats = i + 1 == pos.size() && pos[i]->get_expected_max() != 1;
      specs += fmt::format("        '{}:{}:{}'\n", repeats ? "*" : "", pos[i]->get_name(true),
                           zsh_action(value_of_positional(pos[i])));
    }
    command_cases += fmt::format("    ({})\n      _arguments -s \\\n{}      ;;\n", c->get_name(), [&] {
      std::string lines;
      size_t start = 0;
      while (start < specs.size()) {
        size_t end = specs.find('\n', start);
        lines += specs.substr(start, end - start) + " \\\n";
        start = end + 1;
      }
      return lines.substr(0, lines.size() - 3) + "\n";
    }());
  }
  return fmt::format(
      R"(#compdef zrec
# zsh completion for zrec {version}; generated by 'zrec completion zsh' from the CLI itself.

_zrec() {{
  local curcontext=$curcontext state line
  local -a commands
  commands=(
{command_list}  )
  _arguments -C \
{global_specs}    '1:command:->command' \
    '*::argument:->argument'
  case $state in
    (command) _describe -t commands 'zrec command' commands ;;
    (argument)
      case $words[1] in
{command_cases}      esac
      ;;
  esac
}}

_zrec "$@"
)",
      fmt::arg("version", version), fmt::arg("command_list", command_list),
      fmt::arg("global_specs",
               [&] {
                 std::string lines;
                 const std::string g = zsh_option_specs(&root, "    ");
                 size_t start = 0;
                 while (start < g.size()) {
                   size_t end = g.find('\n', start);
                   lines += g.substr(start, end - start) + " \\\n";
                   start = end + 1;
                 }
                 return lines;
               }()),
      fmt::arg("command_cases", command_cases));
}

}  // namespace

Command register_completion(CLI::App& root, const GlobalOptions&) {
  auto shell = std::make_shared<std::string>();
  CLI::App* cmd = root.add_subcommand("completion", "Print a bash or zsh completion script for zrec");
  cmd->group("");  // hidden: the installed scripts are generated from it at build time
  cmd->add_option("shell", *shell, "bash or zsh")->required();
  return Command{cmd,
                 [shell, &root]() -> Status {
                   std::string script;
                   if (*shell == "bash") script = bash_script(root, ZREC_VERSION);
                   else if (*shell == "zsh") script = zsh_script(root, ZREC_VERSION);
                   else throw UsageError("unknown shell '" + *shell + "' (bash or zsh)");
                   ZREC_ASSIGN_OR_RETURN(Output out, Output::open("-"));
                   ZREC_RETURN_IF_ERROR(out.write(script));
                   return out.flush();
                 },
                 nullptr, [] { return true; }};
}

}  // namespace zrec::cli
