// Vocabulary (token_text.h).
#include "cli/view/token_text.h"

#include <cstring>

namespace zrec::cli::view {

namespace {

constexpr std::string_view kBpeSpace = "\xC4\xA0";        // 'Ġ' U+0120
constexpr std::string_view kBpeNewline = "\xC4\x8A";      // 'Ċ' U+010A
constexpr std::string_view kPieceSpace = "\xE2\x96\x81";  // '▁' U+2581

void replace_all(std::string& s, std::string_view from, std::string_view to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
}

// Element k of `data` as a signed 64-bit ID (unsigned IDs past INT64_MAX: -1).
int64_t element(const DType& dtype, const uint8_t* data, uint64_t k) {
  const uint32_t n = dtype.itemsize;
  uint8_t b[8] = {};
  for (uint32_t i = 0; i < n; ++i) b[i] = data[k * n + (dtype.big_endian() ? n - 1 - i : i)];
  uint64_t v = 0;
  for (uint32_t i = 0; i < n; ++i) v |= uint64_t{b[i]} << (8 * i);
  if (dtype.kind == DTypeKind::kInt && n < 8 && (v >> (8 * n - 1)) != 0) v |= ~uint64_t{0} << (8 * n);  // sign
  if (dtype.kind == DTypeKind::kUInt && v > uint64_t{INT64_MAX}) return -1;
  return static_cast<int64_t>(v);
}

}  // namespace

Vocabulary::Vocabulary(LineList tokens) : tokens_(std::move(tokens)), style_(Style::kWords) {
  for (size_t i = 0; i < tokens_.size(); ++i) {
    const std::string_view t = tokens_[i];
    if (t.starts_with(kBpeSpace)) {
      style_ = Style::kByteLevelBpe;
      return;
    }
    if (t.starts_with(kPieceSpace)) {
      style_ = Style::kSentencePiece;
      return;
    }
    if (t.starts_with("##") && t.size() > 2) style_ = Style::kWordPiece;
  }
}

bool is_token_dtype(const DType& dtype) {
  return (dtype.kind == DTypeKind::kInt || dtype.kind == DTypeKind::kUInt) && dtype.itemsize <= 8;
}

std::string Vocabulary::decode(const DType& dtype, const uint8_t* data, uint64_t count, size_t max_bytes) const {
  std::string out;
  for (uint64_t k = 0; k < count && out.size() <= max_bytes; ++k) {
    const int64_t id = element(dtype, data, k);
    if (id < 0 || static_cast<uint64_t>(id) >= tokens_.size()) {
      if (style_ == Style::kWords || style_ == Style::kWordPiece) out += out.empty() ? "" : " ";
      out += "\xE2\x9F\xA8" + std::to_string(id) + "\xE2\x9F\xA9";  // ⟨ID⟩
      continue;
    }
    const std::string_view t = tokens_[static_cast<size_t>(id)];
    switch (style_) {
      case Style::kByteLevelBpe:
      case Style::kSentencePiece:
        out += t;
        break;
      case Style::kWordPiece:
        if (t.starts_with("##")) {
          out.append(t.substr(2));
          break;
        }
        [[fallthrough]];
      case Style::kWords:
        if (!out.empty()) out += ' ';
        out += t;
        break;
    }
  }
  if (style_ == Style::kByteLevelBpe) {
    replace_all(out, kBpeSpace, " ");
    replace_all(out, kBpeNewline, "\n");
  } else if (style_ == Style::kSentencePiece) {
    replace_all(out, kPieceSpace, " ");
    if (out.starts_with(' ')) out.erase(0, 1);  // the first word's marker
  }
  if (out.size() > max_bytes) {
    size_t cut = max_bytes;
    while (cut > 0 && (static_cast<uint8_t>(out[cut]) & 0xC0) == 0x80) --cut;  // not inside a UTF-8 character
    out.resize(cut);
    out += "\xE2\x80\xA6";  // …
  }
  return out;
}

const Vocabulary* find_vocabulary(const Vocabularies& vocabs, const std::string& stream) {
  const auto it = vocabs.find(stream);
  return it == vocabs.end() ? nullptr : &it->second;
}

void write_tokens_text(JsonWriter& j, const Vocabulary* vocab, const DType& dtype, const uint8_t* payload,
                       uint64_t payload_bytes, size_t max_bytes) {
  if (vocab == nullptr || !is_token_dtype(dtype) || payload == nullptr) return;
  j.key("tokens_text").value(vocab->decode(dtype, payload, payload_bytes / dtype.itemsize, max_bytes));
}

}  // namespace zrec::cli::view
