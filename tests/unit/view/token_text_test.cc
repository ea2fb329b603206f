// Tests for token records shown as text (apps/cli/view/token_text): the joining style
// told from the vocabulary, IDs of every integer dtype, IDs past it, the length cap.
#include "cli/view/token_text.h"

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace zrec::cli::view {

namespace {

template <typename T>
std::vector<uint8_t> ids(std::initializer_list<T> values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

DType int_dtype(char kind, uint32_t size) {
  DType d;
  d.kind = kind == 'i' ? DTypeKind::kInt : DTypeKind::kUInt;
  d.itemsize = size;
  d.byte_order = size == 1 ? '|' : '<';
  return d;
}

// A vocabulary file's lines, as zrec view reads them.
LineList lines(std::initializer_list<std::string> tokens) {
  std::string text;
  for (const std::string& t : tokens) text += t + "\n";
  return LineList(std::vector<uint8_t>(text.begin(), text.end()));
}

std::vector<std::string_view> all(const LineList& l) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < l.size(); ++i) out.push_back(l[i]);
  return out;
}

std::string decode(const Vocabulary& v, const DType& d, const std::vector<uint8_t>& bytes, size_t max = 1000) {
  return v.decode(d, bytes.data(), bytes.size() / d.itemsize, max);
}

}  // namespace

TEST_SUITE("token_text") {
  TEST_CASE("a names file's lines: CR before a newline dropped, empty lines kept, a last line without newline kept") {
    const auto file = [](std::string_view text) { return LineList(std::vector<uint8_t>(text.begin(), text.end())); };
    CHECK(all(file("a\r\n\nb\rc\n\r\nlast")) == std::vector<std::string_view>{"a", "", "b\rc", "", "last"});
    CHECK(all(file("x\n\n")) == std::vector<std::string_view>{"x", ""});
    CHECK(all(file("tail\r")) == std::vector<std::string_view>{"tail\r"});  // only a CR before a newline goes
    CHECK(file("").size() == 0);
    CHECK(file("\n\n\n").size() == 3);
  }

  TEST_CASE("byte-level BPE tokens join as they are with G-dot as a space and C-dot as a newline") {
    const Vocabulary v(lines({"Hello", "\xC4\xA0world", "!", "\xC4\x8A",
                              "\xC4\xA0"
                              "again"}));
    CHECK(v.style() == Vocabulary::Style::kByteLevelBpe);
    CHECK(decode(v, int_dtype('i', 4), ids<int32_t>({0, 1, 2, 3, 4})) == "Hello world!\n again");
  }

  TEST_CASE("SentencePiece pieces join with the word marker as a space but for the first word") {
    const Vocabulary v(lines({"\xE2\x96\x81The",
                              "\xE2\x96\x81"
                              "cat",
                              "s"}));
    CHECK(v.style() == Vocabulary::Style::kSentencePiece);
    CHECK(decode(v, int_dtype('u', 2), ids<uint16_t>({0, 1, 2})) == "The cats");
  }

  TEST_CASE("WordPiece pieces starting with ## continue a word and others start one") {
    const Vocabulary v(lines({"[CLS]", "play", "##ing", "chess"}));
    CHECK(v.style() == Vocabulary::Style::kWordPiece);
    CHECK(decode(v, int_dtype('i', 8), ids<int64_t>({0, 1, 2, 3})) == "[CLS] playing chess");
  }

  TEST_CASE("IDs past the vocabulary or negative show bracketed and big-endian and one-byte IDs read right") {
    const Vocabulary v(lines({"a", "b"}));
    CHECK(v.style() == Vocabulary::Style::kWords);
    CHECK(decode(v, int_dtype('i', 4), ids<int32_t>({1, 7, -3, 0})) ==
          "b \xE2\x9F\xA8"
          "7\xE2\x9F\xA9 \xE2\x9F\xA8-3\xE2\x9F\xA9 a");
    CHECK(decode(v, int_dtype('u', 1), ids<uint8_t>({0, 1})) == "a b");
    DType be = int_dtype('u', 2);
    be.byte_order = '>';
    CHECK(decode(v, be, {0, 1, 0, 0}) == "b a");
  }

  TEST_CASE("the text is cut at max bytes and never inside a UTF-8 character") {
    const Vocabulary v(lines({"\xC3\xA9t\xC3\xA9"}));  // "été", 5 bytes
    const std::string s = decode(v, int_dtype('i', 4), ids<int32_t>({0, 0, 0}), 6);
    CHECK(s == "\xC3\xA9t\xC3\xA9 \xE2\x80\xA6");
    CHECK(is_token_dtype(int_dtype('u', 8)));
    DType f;
    f.kind = DTypeKind::kFloat;
    f.itemsize = 4;
    CHECK(!is_token_dtype(f));
  }
}

}  // namespace zrec::cli::view
