// parse_json_object: see json_line.h. A recursive-descent parser of the JSON grammar
// (RFC 8259) for the values it accepts.
#include "cli/formats/json_line.h"

#include "cli/formats/json_scan.h"

namespace zrec::cli {

namespace {

class Parser {
 public:
  explicit Parser(std::string_view s) : in_(s, "not a JSON object") {}

  Result<std::vector<JsonField>> object() {
    std::vector<JsonField> out;
    in_.space();
    if (!in_.eat('{')) return in_.bad("expected '{' (each line is one JSON object)");
    in_.space();
    if (in_.eat('}')) return end(std::move(out));
    for (;;) {
      JsonField f;
      in_.space();
      if (in_.peek() != '"') return in_.bad("expected a key in double quotes");
      ZREC_RETURN_IF_ERROR(in_.string(f.key));
      for (const auto& o : out)
        if (o.key == f.key) return in_.bad("the key \"" + f.key + "\" is repeated");
      in_.space();
      if (!in_.eat(':')) return in_.bad("expected ':' after a key");
      in_.space();
      ZREC_RETURN_IF_ERROR(value(f));
      out.push_back(std::move(f));
      in_.space();
      if (in_.eat('}')) return end(std::move(out));
      if (!in_.eat(',')) return in_.bad("expected ',' or '}'");
    }
  }

 private:
  static bool starts_number(char c) { return c == '-' || (c >= '0' && c <= '9'); }

  Result<std::vector<JsonField>> end(std::vector<JsonField> out) {
    in_.space();
    if (!in_.at_end()) return in_.bad("text after the object");
    return out;
  }
  Status value(JsonField& f) {
    const char c = in_.peek();
    if (c == '"') {
      f.kind = JsonField::Kind::kString;
      return in_.string(f.text);
    }
    if (c == '[') {
      f.kind = JsonField::Kind::kArray;
      return array(f, 0);
    }
    if (starts_number(c)) {
      f.kind = JsonField::Kind::kNumber;
      number(f);
      return Status::ok();
    }
    return in_.bad("a value must be a string, a number or an array of numbers");
  }
  Status array(JsonField& f, int depth) {
    if (depth > 32) return in_.bad("arrays nested more than 32 deep");
    in_.eat('[');
    in_.space();
    if (in_.eat(']')) return Status::ok();
    for (;;) {
      in_.space();
      if (in_.peek() == '[') ZREC_RETURN_IF_ERROR(array(f, depth + 1));
      else if (starts_number(in_.peek())) number(f);
      else return in_.bad("an array holds numbers (or arrays of numbers) only");
      in_.space();
      if (in_.eat(']')) return Status::ok();
      if (!in_.eat(',')) return in_.bad("expected ',' or ']' in an array");
    }
  }
  void number(JsonField& f) {
    if (!f.text.empty()) f.text += ' ';
    in_.number(f.text);
    ++f.count;
  }

  JsonScanner in_;
};

}  // namespace

Result<std::vector<JsonField>> parse_json_object(std::string_view line) { return Parser(line).object(); }

}  // namespace zrec::cli
