// Token records shown as text (zrec view --vocab STREAM=FILE): a tokenizer's vocabulary,
// one token per line (line i is token i, as BERT's vocab.txt and most tokenizers' token
// lists are written), turns a record of token IDs back into the text it encodes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "zrec/dtype.h"

#include "cli/report/json.h"
#include "cli/view/line_list.h"

namespace zrec::cli::view {

// The text shown of a token record: in a grid cell, on its own page.
inline constexpr size_t kGridTokensTextBytes = 2048;
inline constexpr size_t kFullTokensTextBytes = 256 * 1024;

class Vocabulary {
 public:
  // How tokens join into text, told from the vocabulary itself: byte-level BPE (GPT-2,
  // RoBERTa: 'Ġ' marks a space, 'Ċ' a newline), SentencePiece ('▁' marks a space),
  // WordPiece ('##' continues a word; others start one), or else words with spaces.
  enum class Style { kByteLevelBpe, kSentencePiece, kWordPiece, kWords };

  explicit Vocabulary(LineList tokens);
  Style style() const { return style_; }
  size_t size() const { return tokens_.size(); }

  // The text of the `count` token IDs at `data` (integers of `dtype`, as a record's
  // payload holds them), at most `max_bytes` long (then "…"). An ID past the
  // vocabulary (or negative) shows as "⟨ID⟩". Valid only for integer dtypes.
  std::string decode(const DType& dtype, const uint8_t* data, uint64_t count, size_t max_bytes) const;

 private:
  LineList tokens_;
  Style style_;
};

// Whether records of `dtype` can be token IDs (integers).
bool is_token_dtype(const DType& dtype);

// The --vocab files by stream name; find_vocabulary: a stream's, or null.
using Vocabularies = std::map<std::string, Vocabulary>;
const Vocabulary* find_vocabulary(const Vocabularies& vocabs, const std::string& stream);

// The cell (or record) key "tokens_text": a record of token IDs of a stream with a
// vocabulary, as text, at most max_bytes (then "…"); nothing for other records.
void write_tokens_text(JsonWriter& j, const Vocabulary* vocab, const DType& dtype, const uint8_t* payload,
                       uint64_t payload_bytes, size_t max_bytes);

}  // namespace zrec::cli::view
