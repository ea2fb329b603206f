// zstd-backed record codecs.
#include "codec/record_codec.h"

#define ZSTD_STATIC_LINKING_ONLY  // ZSTD_findFrameCompressedSize, ZSTD_getFrameHeader
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "format/layout.h"

namespace zrec::codec {

namespace {
std::string zstd_error(size_t code) { return ZSTD_getErrorName(code); }
// Decoder::check decodes records up to this size whole; larger ones stream through a
// buffer of this size.
constexpr size_t kCheckBufferBytes = size_t{1} << 20;
}  // namespace

Result<std::shared_ptr<Dictionary>> Dictionary::load(std::vector<uint8_t> bytes) {
  if (bytes.size() < format::kMinDictBytes)
    return malformed("dict.zr has " + std::to_string(bytes.size()) + " bytes; a dictionary needs at least 8");
  std::shared_ptr<Dictionary> d(new Dictionary());
  d->bytes_ = std::move(bytes);
  d->ddict_ = ZSTD_createDDict(d->bytes_.data(), d->bytes_.size());
  if (d->ddict_ == nullptr) return malformed("dict.zr is not a dictionary zstd accepts");
  return d;
}

Dictionary::~Dictionary() {
  ZSTD_freeDDict(ddict_);
  ZSTD_freeCDict(cdict_);
}

Result<const ZSTD_CDict_s*> Dictionary::cdict(int level) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cdict_ != nullptr && cdict_level_ == level) return static_cast<const ZSTD_CDict_s*>(cdict_);
  ZSTD_freeCDict(cdict_);
  cdict_ = ZSTD_createCDict(bytes_.data(), bytes_.size(), level);
  cdict_level_ = level;
  if (cdict_ == nullptr) return malformed("dict.zr cannot be loaded as a compression dictionary");
  return static_cast<const ZSTD_CDict_s*>(cdict_);
}

Result<Encoder> Encoder::create(const EncoderOptions& options) {
  Encoder e;
  e.codec_ = options.codec;
  if (options.codec == Codec::kRaw) return e;
  const int level = options.level != 0              ? options.level
                    : options.codec == Codec::kZstd ? format::kZstdLevel
                                                    : format::kZstdDictLevel;
  e.cctx_ = ZSTD_createCCtx();
  if (e.cctx_ == nullptr) return io_error("cannot allocate a zstd compression context");
  ZSTD_CCtx_setParameter(e.cctx_, ZSTD_c_contentSizeFlag, 1);
  ZSTD_CCtx_setParameter(e.cctx_, ZSTD_c_checksumFlag, options.checksum ? 1 : 0);
  if (options.codec == Codec::kZstdDict) {
    if (!options.dictionary) return invalid_argument("codec zstd_dict needs a dictionary");
    ZREC_ASSIGN_OR_RETURN(const ZSTD_CDict_s* cdict, options.dictionary->cdict(level));
    size_t r = ZSTD_CCtx_refCDict(e.cctx_, cdict);
    if (ZSTD_isError(r)) return invalid_argument("cannot use the dictionary: " + zstd_error(r));
    // The CDict carries its level; the frame parameters still come from the context.
    ZSTD_CCtx_setParameter(e.cctx_, ZSTD_c_compressionLevel, level);
  } else {
    size_t r = ZSTD_CCtx_setParameter(e.cctx_, ZSTD_c_compressionLevel, level);
    if (ZSTD_isError(r)) return invalid_argument("zstd level " + std::to_string(level) + ": " + zstd_error(r));
  }
  return e;
}

Encoder::Encoder(Encoder&& o) noexcept { *this = std::move(o); }
Encoder& Encoder::operator=(Encoder&& o) noexcept {
  std::swap(codec_, o.codec_);
  std::swap(cctx_, o.cctx_);
  return *this;
}
Encoder::~Encoder() { ZSTD_freeCCtx(cctx_); }

size_t Encoder::bound(size_t n) const { return codec_ == Codec::kRaw ? n : ZSTD_compressBound(n); }

Result<size_t> Encoder::encode(const uint8_t* src, size_t n, uint8_t* dst, size_t capacity) {
  if (codec_ == Codec::kRaw) {
    std::memcpy(dst, src, n);
    return n;
  }
  // compress2 keeps the referenced CDict and parameters across calls (sticky).
  size_t r = ZSTD_compress2(cctx_, dst, capacity, src, n);
  if (ZSTD_isError(r)) return io_error("zstd compression failed: " + zstd_error(r));
  return r;
}

Status check_frame(const uint8_t* src, size_t phys_length, size_t logic_length) {
  // Exactly one standard zstd frame (docs/format.md §10): no skippable frame, nothing after.
  static constexpr uint8_t kFrameMagic[4] = {0x28, 0xB5, 0x2F, 0xFD};  // ZSTD_MAGICNUMBER, LE
  if (phys_length < 4 || std::memcmp(src, kFrameMagic, 4) != 0)
    return malformed("stored bytes are not a zstd frame (bad magic number)");
  const size_t frame = ZSTD_findFrameCompressedSize(src, phys_length);
  if (ZSTD_isError(frame)) return malformed("zstd frame is damaged (" + zstd_error(frame) + ")");
  if (frame != phys_length)
    return malformed("stored bytes hold " + std::to_string(phys_length - frame) +
                     " bytes after the zstd frame (one frame per record)");
  const unsigned long long content = ZSTD_getFrameContentSize(src, phys_length);
  if (content != ZSTD_CONTENTSIZE_UNKNOWN && content != ZSTD_CONTENTSIZE_ERROR && content != logic_length)
    return malformed("zstd frame declares " + std::to_string(content) + " bytes but logic_length is " +
                     std::to_string(logic_length));
  return Status::ok();
}

std::optional<bool> frame_has_checksum(const uint8_t* src, size_t n) {
  ZSTD_frameHeader header;
  if (ZSTD_getFrameHeader(&header, src, n) != 0 || header.frameType != ZSTD_frame) return std::nullopt;
  return header.checksumFlag != 0;
}

Decoder::Decoder(Codec codec, std::shared_ptr<Dictionary> dictionary)
    : codec_(codec), dictionary_(std::move(dictionary)) {
  if (codec_ != Codec::kRaw) dctx_ = ZSTD_createDCtx();
}
Decoder::Decoder(Decoder&& o) noexcept
    : codec_(o.codec_), dictionary_(std::move(o.dictionary_)), dctx_(o.dctx_), sink_(std::move(o.sink_)) {
  o.dctx_ = nullptr;
}
Decoder& Decoder::operator=(Decoder&& o) noexcept {
  std::swap(codec_, o.codec_);
  std::swap(dictionary_, o.dictionary_);
  std::swap(dctx_, o.dctx_);
  std::swap(sink_, o.sink_);
  return *this;
}
Decoder::~Decoder() { ZSTD_freeDCtx(dctx_); }

Status Decoder::decode(const uint8_t* src, size_t phys_length, uint8_t* dst, size_t logic_length) {
  if (codec_ == Codec::kRaw) {
    if (phys_length != logic_length)
      return malformed("raw record has phys_length " + std::to_string(phys_length) + " != logic_length " +
                       std::to_string(logic_length));
    if (src != dst) std::memcpy(dst, src, logic_length);
    return Status::ok();
  }
  if (dctx_ == nullptr) return io_error("cannot allocate a zstd decompression context");
  ZREC_RETURN_IF_ERROR(check_frame(src, phys_length, logic_length));
  size_t r = codec_ == Codec::kZstdDict
                 ? ZSTD_decompress_usingDDict(dctx_, dst, logic_length, src, phys_length, dictionary_->ddict())
                 : ZSTD_decompressDCtx(dctx_, dst, logic_length, src, phys_length);
  if (ZSTD_isError(r)) return malformed("zstd frame does not decode (" + zstd_error(r) + ")");
  if (r != logic_length)
    return malformed("zstd frame decompresses to " + std::to_string(r) + " bytes, not logic_length " +
                     std::to_string(logic_length));
  return Status::ok();
}

Status Decoder::check(const uint8_t* src, size_t phys_length, size_t logic_length, uint8_t* head, size_t head_bytes) {
  head_bytes = std::min(head_bytes, logic_length);
  if (codec_ == Codec::kRaw || logic_length <= kCheckBufferBytes) {
    const uint8_t* decoded = src;
    if (codec_ != Codec::kRaw) {
      if (sink_.size() < logic_length) sink_.resize(logic_length);
      decoded = sink_.data();
    }
    ZREC_RETURN_IF_ERROR(decode(src, phys_length, const_cast<uint8_t*>(decoded), logic_length));
    if (head_bytes > 0) std::memcpy(head, decoded, head_bytes);
    return Status::ok();
  }
  if (dctx_ == nullptr) return io_error("cannot allocate a zstd decompression context");
  ZREC_RETURN_IF_ERROR(check_frame(src, phys_length, logic_length));
  // Streaming decoders refuse windows over 2^27 bytes by default; decode() (one shot)
  // takes any, and so must this. The window is at most the record's size.
  ZSTD_DCtx_reset(dctx_, ZSTD_reset_session_only);
  ZSTD_DCtx_setParameter(dctx_, ZSTD_d_windowLogMax, ZSTD_WINDOWLOG_MAX);
  if (codec_ == Codec::kZstdDict) ZSTD_DCtx_refDDict(dctx_, dictionary_->ddict());
  if (sink_.size() < kCheckBufferBytes) sink_.resize(kCheckBufferBytes);
  ZSTD_inBuffer in{src, phys_length, 0};
  size_t produced = 0;
  for (size_t left = 1; left != 0;) {
    ZSTD_outBuffer out{sink_.data(), sink_.size(), 0};
    left = ZSTD_decompressStream(dctx_, &out, &in);
    if (ZSTD_isError(left)) return malformed("zstd frame does not decode (" + zstd_error(left) + ")");
    if (produced < head_bytes) std::memcpy(head + produced, sink_.data(), std::min(head_bytes - produced, out.pos));
    produced += out.pos;
    if (produced > logic_length)
      return malformed("zstd frame decompresses to more than logic_length " + std::to_string(logic_length) + " bytes");
    // All input taken and the output not full: the frame has nothing more to give.
    if (left != 0 && in.pos == in.size && out.pos < out.size) return malformed("zstd frame is truncated");
  }
  if (produced != logic_length)
    return malformed("zstd frame decompresses to " + std::to_string(produced) + " bytes, not logic_length " +
                     std::to_string(logic_length));
  return Status::ok();
}

}  // namespace zrec::codec
