// Per-record encoding and decoding (docs/format.md §6): raw, zstd, zstd_dict. Each record
// is one independent zstd frame with its content size set. Contexts are per lane and
// reused; the dictionary is built once and shared read-only by every lane.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "zrec/format.h"
#include "zrec/status.h"

struct ZSTD_CCtx_s;
struct ZSTD_DCtx_s;
struct ZSTD_CDict_s;
struct ZSTD_DDict_s;

namespace zrec::codec {

// The zstd dictionary of a zstd_dict store (dict.zr). Thread-safe after construction.
class Dictionary {
 public:
  // Checks docs/format.md §10 (>= 8 bytes, accepted by ZSTD_createDDict). kMalformed on failure.
  static Result<std::shared_ptr<Dictionary>> load(std::vector<uint8_t> bytes);
  ~Dictionary();

  const std::vector<uint8_t>& bytes() const { return bytes_; }
  const ZSTD_DDict_s* ddict() const { return ddict_; }
  // The compression dictionary for `level`, built on first use (writers only).
  Result<const ZSTD_CDict_s*> cdict(int level);

 private:
  Dictionary() = default;
  std::vector<uint8_t> bytes_;
  ZSTD_DDict_s* ddict_ = nullptr;
  std::mutex mu_;
  int cdict_level_ = 0;
  ZSTD_CDict_s* cdict_ = nullptr;  // guarded by mu_ until built
};

struct EncoderOptions {
  Codec codec = Codec::kZstd;
  int level = 0;                           // 0: the format's level (3 for zstd, 15 for zstd_dict)
  bool checksum = false;                   // zstd frame content checksum
  std::shared_ptr<Dictionary> dictionary;  // required for zstd_dict
};

// One lane's encoder. Not thread-safe; make one per lane.
class Encoder {
 public:
  static Result<Encoder> create(const EncoderOptions& options);
  Encoder(Encoder&&) noexcept;
  Encoder& operator=(Encoder&&) noexcept;
  ~Encoder();

  // Upper bound of the stored size of a logical record of n bytes.
  size_t bound(size_t n) const;
  // Encodes src[0..n) into dst (capacity >= bound(n)); returns the stored size.
  Result<size_t> encode(const uint8_t* src, size_t n, uint8_t* dst, size_t capacity);

 private:
  Encoder() = default;
  Codec codec_ = Codec::kRaw;
  ZSTD_CCtx_s* cctx_ = nullptr;
};

// Checks, without decompressing, that `src` is exactly one standard zstd frame (no
// skippable frame, nothing after it; docs/format.md §10) whose declared content size, if the
// frame carries one, is logic_length. kMalformed names the rule broken. Decoder::decode
// applies the same checks; frame copies (recompress, concat) use this one alone.
Status check_frame(const uint8_t* src, size_t phys_length, size_t logic_length);

// Whether the zstd frame starting at src (n bytes of it; its header is at most 18
// bytes) carries a content checksum (the XXH64 of the decoded content, which every
// zstd decoder verifies). nullopt when no frame header can be read there.
std::optional<bool> frame_has_checksum(const uint8_t* src, size_t n);

// One lane's decoder. Not thread-safe; make one per lane.
class Decoder {
 public:
  Decoder(Codec codec, std::shared_ptr<Dictionary> dictionary);
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;
  ~Decoder();

  // Decodes one stored record into dst, which receives exactly logic_length bytes.
  // For zstd codecs, src must be exactly one zstd frame (nothing before or after,
  // docs/format.md §10) whose content decompresses to exactly logic_length bytes.
  // kMalformed describes the rule broken ("not a single zstd frame", "decompresses to
  // N bytes, not M", zstd's own error name).
  Status decode(const uint8_t* src, size_t phys_length, uint8_t* dst, size_t logic_length);

  // Checks one stored record exactly as decode() would (zstd: decoded in full, so the
  // content checksum, when the frame has one, is verified too) without keeping the
  // content, except its first head_bytes (at most logic_length), copied to `head` (a
  // Ragged shape prefix, for the caller to check). Memory: records up to 1 MiB are
  // decoded whole into a buffer the decoder keeps; larger ones stream through it, so a
  // 2 GiB record costs 1 MiB plus zstd's window. Frame copies (recompress, concat) use
  // this, so a copied record is checked as thoroughly as a read checks it.
  Status check(const uint8_t* src, size_t phys_length, size_t logic_length, uint8_t* head, size_t head_bytes);

 private:
  Codec codec_;
  std::shared_ptr<Dictionary> dictionary_;
  ZSTD_DCtx_s* dctx_ = nullptr;
  std::vector<uint8_t> sink_;  // check(): decoded bytes nobody keeps
};

}  // namespace zrec::codec
