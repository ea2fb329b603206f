// Bounded gzip and bzip2 decoding of HDF5 chunks (see h5_bounded_filters.h).
#include "cli/import/h5_bounded_filters.h"

#include <bzlib.h>
#include <zlib.h>

#include <algorithm>
#include <climits>

#include <hdf5.h>

// libhdf5's internal registration (H5Zprivate.h), which unlike H5Zregister may replace
// a predefined filter; H5Z_class2_t is the public struct it copies into its table.
extern "C" herr_t H5Z_register(const H5Z_class2_t* cls);

namespace zrec::cli {

namespace {

thread_local H5DecodeScope* current_scope = nullptr;

// The id of the bzip2 filter PyTables and hdf5plugin write (its stream is BZ2_bzBuffToBuffCompress's).
constexpr H5Z_filter_t kBzip2Filter = 307;
// A codec's output per call at most, so that its 32-bit counters never wrap.
constexpr uint64_t kMaxCodecStep = uint64_t{1} << 30;

// What a bounded decode made of a stream: its size, or why it failed.
struct Decoded {
  uint64_t size = 0;
  std::string error;  // empty: the stream ended within the limit
};

std::string more_than(uint64_t limit) {
  return "decodes to more than the " + std::to_string(limit) + " bytes its chunk shape declares";
}

// The zlib stream `in` into `out` (`limit` bytes); one byte more means the stream holds
// more than the chunk (it goes to `spare`, and is the error).
Decoded inflate_bounded(const uint8_t* in, size_t n, uint8_t* out, uint64_t limit) {
  z_stream z{};
  if (n > UINT_MAX || inflateInit(&z) != Z_OK) return {0, "cannot be decoded (zlib cannot start)"};
  z.next_in = const_cast<Bytef*>(in);
  z.avail_in = static_cast<uInt>(n);
  Bytef spare = 0;
  Decoded d;
  for (;;) {
    const uint64_t done = z.total_out;
    z.next_out = done < limit ? out + done : &spare;
    z.avail_out = static_cast<uInt>(done < limit ? std::min(limit - done, kMaxCodecStep) : 1);
    const int rc = inflate(&z, Z_NO_FLUSH);
    if (z.total_out > limit) {
      d.error = more_than(limit);
      break;
    }
    if (rc == Z_STREAM_END) break;
    if (rc == Z_OK) continue;
    d.error = rc == Z_BUF_ERROR
                  ? std::string("ends before its zlib stream does")
                  : "is no valid zlib stream (" + std::string(z.msg != nullptr ? z.msg : "zlib error") + ")";
    break;
  }
  d.size = z.total_out;
  inflateEnd(&z);
  return d;
}

// The bzip2 stream `in` into `out`, as inflate_bounded.
Decoded bunzip_bounded(const uint8_t* in, size_t n, uint8_t* out, uint64_t limit) {
  bz_stream b{};
  if (n > UINT_MAX || BZ2_bzDecompressInit(&b, 0, 0) != BZ_OK) return {0, "cannot be decoded (bzip2 cannot start)"};
  b.next_in = const_cast<char*>(reinterpret_cast<const char*>(in));
  b.avail_in = static_cast<unsigned>(n);
  char spare = 0;
  Decoded d;
  const auto total = [&] { return (uint64_t{b.total_out_hi32} << 32) | b.total_out_lo32; };
  for (;;) {
    const uint64_t done = total();
    b.next_out = done < limit ? reinterpret_cast<char*>(out + done) : &spare;
    b.avail_out = static_cast<unsigned>(done < limit ? std::min(limit - done, kMaxCodecStep) : 1);
    const unsigned in_before = b.avail_in;
    const int rc = BZ2_bzDecompress(&b);
    if (total() > limit) {
      d.error = more_than(limit);
      break;
    }
    if (rc == BZ_STREAM_END) break;
    // BZ_OK without progress: the input ended inside the stream.
    if (rc == BZ_OK && (b.avail_in != in_before || total() != done)) continue;
    d.error = rc == BZ_OK ? "ends before its bzip2 stream does"
                          : "is no valid bzip2 stream (error " + std::to_string(rc) + ")";
    break;
  }
  d.size = total();
  BZ2_bzDecompressEnd(&b);
  return d;
}

}  // namespace

// The filter functions libhdf5 calls, with the codec each one decodes.
struct H5BoundedFilters {
  using Decode = Decoded (*)(const uint8_t*, size_t, uint8_t*, uint64_t);

  // Decodes *buf (nbytes) into a new buffer of the scope's limit, which replaces it; 0
  // (HDF5's failure) when there is no scope, or the stream breaks the bound (noted in the
  // scope). zrec writes no HDF5: encoding fails too.
  static size_t run(unsigned flags, size_t nbytes, size_t* buf_size, void** buf, Decode decode, const char* name) {
    H5DecodeScope* scope = current_scope;
    if ((flags & H5Z_FLAG_REVERSE) == 0 || scope == nullptr) return 0;
    const uint64_t limit = scope->limit_;
    auto* out = static_cast<uint8_t*>(H5allocate_memory(std::max<uint64_t>(limit, 1), false));
    if (out == nullptr) return 0;
    const auto* in = static_cast<const uint8_t*>(*buf);
    Decoded d = decode(in, nbytes, out, limit);
    if (d.error.empty() && scope->exact_ && d.size != limit)
      d.error = "decodes to " + std::to_string(d.size) + " bytes, not the " + std::to_string(limit) +
                " its chunk shape declares";
    if (!d.error.empty()) {
      if (!scope->failure_)
        scope->failure_ = H5DecodeFailure{name, d.error, std::string(reinterpret_cast<const char*>(in), nbytes)};
      H5free_memory(out);
      return 0;
    }
    H5free_memory(*buf);
    *buf = out;
    *buf_size = std::max<uint64_t>(limit, 1);
    return d.size;
  }

  static size_t deflate(unsigned flags, size_t, const unsigned[], size_t nbytes, size_t* buf_size, void** buf) {
    return run(flags, nbytes, buf_size, buf, inflate_bounded, "gzip");
  }
  static size_t bzip2(unsigned flags, size_t, const unsigned[], size_t nbytes, size_t* buf_size, void** buf) {
    return run(flags, nbytes, buf_size, buf, bunzip_bounded, "bzip2");
  }
};

void install_bounded_h5_filters() {
  static const bool done = [] {
    H5open();
    static const H5Z_class2_t deflate = {.version = H5Z_CLASS_T_VERS,
                                         .id = H5Z_FILTER_DEFLATE,
                                         .encoder_present = 0,
                                         .decoder_present = 1,
                                         .name = "deflate (zrec, bounded)",
                                         .can_apply = nullptr,
                                         .set_local = nullptr,
                                         .filter = H5BoundedFilters::deflate};
    H5Z_class2_t bzip2 = deflate;
    bzip2.id = kBzip2Filter;
    bzip2.name = "bzip2 (zrec, bounded)";
    bzip2.filter = H5BoundedFilters::bzip2;
    // A failure leaves libhdf5's own filter (or the plugin) in place: reading works, unbounded.
    const herr_t replaced = H5Z_register(&deflate), registered = H5Zregister(&bzip2);
    if (replaced < 0 || registered < 0) H5Eclear2(H5E_DEFAULT);
    return true;
  }();
  (void)done;
}

H5DecodeScope::H5DecodeScope(uint64_t limit, bool exact) : limit_(limit), exact_(exact), outer_(current_scope) {
  current_scope = this;
}

H5DecodeScope::~H5DecodeScope() { current_scope = outer_; }

}  // namespace zrec::cli
