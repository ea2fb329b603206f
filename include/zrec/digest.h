// Digests: a hash of a store's logical content, independent of codec, dictionary,
// level, shard count and physical order, so that recompress and concat can prove they
// changed nothing. Built on SHA-256 (FIPS 180-4); recomputable from NumPy + hashlib.
//
// Definition (version 1; docs/compression.md and man/zrec-digest.1 say the same):
//   R_i    = SHA-256(logical record i)        (Ragged: the 8*ndim-byte LE shape prefix,
//                                              then the payload; Dense: the payload)
//   header = "zrec-digest-v1\n"
//            "dtype=<canonical dtype>\n"       e.g. "dtype=<i4\n"
//            "ndim=<ndim>\n"
//            "item_shape=<d0>,<d1>,...\n"     Dense ("item_shape=\n" for a scalar record)
//            or "ragged\n"                     Ragged
//            "length=<number of records>\n"
//   digest = SHA-256(header || R_0 || R_1 || ... || R_{length-1})
// Per-record hashes are computed on all of the store's lanes (Store::lanes(), the
// executor of the Context it was opened in); the store digest hashes only 32 bytes per record, so
// the whole is as parallel as the read.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "zrec/context.h"
#include "zrec/store.h"

namespace zrec {

using RecordHash = std::array<uint8_t, 32>;

struct DigestOptions {
  uint64_t window_bytes = kDefaultWindowBytes;  // logical bytes read per window
  // Called with each record's hash R_i, in record order (from the calling thread).
  std::function<Status(uint64_t id, const RecordHash& hash)> per_record;
  // The records to hash, when not all of them: `count` records, the one at position p
  // being record id_at(p) (each < the store's length), e.g. a prefix or a selection.
  // The header's length is then `count`, so the digest of a prefix of N records equals
  // the digest of a store holding exactly those N.
  std::function<uint64_t(uint64_t position)> id_at = nullptr;
  uint64_t count = 0;
};

// The digest header for a schema and record count (the text above).
std::string digest_header(const Schema& schema, uint64_t length);

// Reads every record of `store` and returns the digest. Errors: those of Store::scan
// (a malformed record), or of per_record. ctx.control is checked before each record
// (kCancelled "interrupted") and hears the records and logical bytes hashed so far, out
// of `count` (or the store's length) records, every 64 records and at the end of each window.
Result<RecordHash> digest_store(Store& store, const DigestOptions& options = {}, const Context& ctx = {});

// Lowercase hex of a hash, 64 characters.
std::string hash_to_hex(const RecordHash& hash);

// SHA-256 of the bytes of the file at `path` (a URL too), as sha256sum computes it, and
// their count: a file's checksum for those who publish it (a dataset's Croissant card lists
// every file with one), not a digest of records.
struct FileHash {
  RecordHash sha256{};
  uint64_t bytes = 0;
};
Result<FileHash> file_sha256(const std::string& path, const Context& ctx = {});

// --- roots of named streams (docs/format.md §12; docs/compression.md says the same) ----
// A stream's digest is digest_store() over the root's committed samples 0 .. length-1.
// The dataset's digest (version 1) hashes the streams' names with their digests:
//   dataset = SHA-256("zrec-root-digest-v1\n" "length=<committed samples>\n"
//                     then per stream, in bytewise order of names: "<name> <hex digest>\n")
// and a sample's digest, the same lines of each stream's record hash R_i:
//   sample_i = SHA-256("<name> <hex R_i>\n" per stream, in the same order)
// Stream names follow the stream name rule (zrec/dataset.h): no space, no newline.
struct NamedHash {
  std::string name;
  RecordHash hash;
};
RecordHash digest_dataset(uint64_t length, const std::vector<NamedHash>& streams);
RecordHash digest_sample(const std::vector<NamedHash>& records);

}  // namespace zrec
