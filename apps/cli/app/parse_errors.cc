#include "cli/app/parse_errors.h"

#include <cctype>
#include <cstdlib>
#include <string_view>

#include <CLI/CLI.hpp>

namespace zrec::cli {

namespace {

// An operand's name as --help writes it ("store" -> "STORE"); options stay as they are.
std::string display_name(std::string name) {
  if (name.starts_with("-")) {
    const size_t comma = name.find(',');  // "-o,--output": the long name
    if (comma != std::string::npos) name = name.substr(comma + 1);
    return name;
  }
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

// The words after the first ": " of CLI11's message, or all of it.
std::string after_colon(const std::string& what) {
  const size_t at = what.find(": ");
  return at == std::string::npos ? what : what.substr(at + 2);
}

// CLI11 lists extra arguments last first ("y x" for `... x y`): "'x' 'y'", in the order typed.
std::string quoted_words_reversed(const std::string& words) {
  std::string out;
  size_t start = 0;
  while (start < words.size()) {
    size_t end = words.find(' ', start);
    if (end == std::string::npos) end = words.size();
    if (end > start) out = "'" + words.substr(start, end - start) + "'" + (out.empty() ? "" : " ") + out;
    start = end + 1;
  }
  return out;
}

// "Value 0 not in range 1 to 1024" -> "'0' is out of range (1 to 1024)"; CLI11's range
// check says the same of a word that is no number: "'abc' is not a number (1 to 1024)".
std::string validation_words(const std::string& msg) {
  const std::string value = "Value ", range = " not in range ";
  const size_t at = msg.find(range);
  if (!msg.starts_with(value) || at == std::string::npos) return msg;
  const std::string given = msg.substr(value.size(), at - value.size());
  char* end = nullptr;
  (void)std::strtod(given.c_str(), &end);
  const bool number = !given.empty() && end != nullptr && *end == '\0';
  return "'" + given + (number ? "' is out of range (" : "' is not a number (") + msg.substr(at + range.size()) + ")";
}

}  // namespace

std::string parse_error_message(const CLI::ParseError& e) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr) {
    const std::string words = after_colon(what);
    return (words.find(' ') == std::string::npos ? "unexpected operand " : "unexpected operands ") +
           quoted_words_reversed(words);
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e) != nullptr) {
    if (what == "A subcommand is required" || what.starts_with("Requires at least")) return "no command given";
    const std::string suffix = " is required";
    if (what.size() > suffix.size() && what.compare(what.size() - suffix.size(), suffix.size(), suffix) == 0) {
      const std::string name = what.substr(0, what.size() - suffix.size());
      return name.starts_with("-") ? "option " + display_name(name) + " is required"
                                   : "missing operand " + display_name(name);
    }
    return what;
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) != nullptr) {
    // "--codec: 1 required TEXT missing", "Expected exactly 1 arguments to --x, got 0"
    std::string name = what.substr(0, what.find(':'));
    if (what.starts_with("Expected ")) {
      const size_t to = what.find(" to ");
      name = to == std::string::npos ? "" : what.substr(to + 4, what.find(',', to) - to - 4);
    }
    if (name.empty() || name.find(' ') != std::string::npos) return "an option is missing its value";
    return name.starts_with("-") ? "option " + display_name(name) + " needs a value"
                                 : "operand " + display_name(name) + " needs a value";
  }
  if (dynamic_cast<const CLI::ConversionError*>(&e) != nullptr) {
    const std::string convert = "Could not convert: ";
    if (what.starts_with(convert)) {  // "Could not convert: --threads = abc"
      const std::string rest = what.substr(convert.size());
      const size_t eq = rest.find(" = ");
      if (eq != std::string::npos)
        return display_name(rest.substr(0, eq)) + ": '" + rest.substr(eq + 3) + "' is not a valid value";
    }
    if (what.find(": too many inputs for a flag") != std::string::npos ||
        what.find(": Should be true/false or a number") != std::string::npos)
      return "option " + what.substr(0, what.find(':')) + " takes no value";
    const std::string allowed = "The value ";
    if (what.starts_with(allowed)) {  // "The value X is not an allowed value for NAME"
      const size_t is = what.find(" is not an allowed value for ");
      if (is != std::string::npos)
        return display_name(what.substr(is + 29)) + ": '" + what.substr(allowed.size(), is - allowed.size()) +
               "' is not a valid value";
    }
    return what;
  }
  if (dynamic_cast<const CLI::ValidationError*>(&e) != nullptr) {
    // "NAME: MESSAGE", MESSAGE from zrec's own checks, or CLI11's range check.
    const size_t at = what.find(": ");
    if (at == std::string::npos) return validation_words(what);
    return display_name(what.substr(0, at)) + ": " + validation_words(what.substr(at + 2));
  }
  if (dynamic_cast<const CLI::ExcludesError*>(&e) != nullptr) {
    const size_t at = what.find(" excludes ");
    if (at != std::string::npos)
      return display_name(what.substr(0, at)) + " and " + display_name(what.substr(at + 10)) +
             " cannot be used together";
  }
  if (dynamic_cast<const CLI::RequiresError*>(&e) != nullptr) {
    const size_t at = what.find(" requires ");
    if (at != std::string::npos)
      return display_name(what.substr(0, at)) + " needs " + display_name(what.substr(at + 10));
  }
  if (dynamic_cast<const CLI::InvalidError*>(&e) != nullptr) return "too many operands";
  return what;
}

}  // namespace zrec::cli
