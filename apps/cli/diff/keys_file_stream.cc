// add_keys_file (see keys_file_stream.h): the file's lines appended, a window at a time,
// to a Ragged '|u1' store, the record type of append-tar --keys-stream's __key__, so the
// record hashes diff compares are the same whichever way a side holds its keys.
#include "cli/diff/keys_file_stream.h"

#include <fcntl.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "zrec/dataset.h"
#include "zrec/dtype.h"
#include "zrec/remote.h"
#include "zrec/store.h"
#include "zrec/store_writer.h"

#include "cli/formats/printable.h"
#include "cli/os/side_file.h"

namespace zrec::cli {

namespace {

constexpr size_t kWindowBytes = size_t{4} << 20;

// Appends the complete lines of `pending` to `writer` (one record each), keeping an
// unfinished last line in `pending`. `line` counts the lines appended so far.
Status append_lines(StoreWriter& writer, std::string& pending, bool at_end, uint64_t& line, const std::string& where) {
  std::vector<RecordRef> records;
  std::vector<uint64_t> dims;
  size_t start = 0;
  dims.reserve(pending.size() / 2 + 1);
  for (size_t nl; (nl = pending.find('\n', start)) != std::string::npos || (at_end && start < pending.size());) {
    const size_t end = nl == std::string::npos ? pending.size() : nl;
    const size_t len = end > start && pending[end - 1] == '\r' ? end - start - 1 : end - start;
    ++line;
    if (len == 0) return invalid_argument(where + ": line " + std::to_string(line) + " is empty: a key names a sample");
    dims.push_back(len);
    records.push_back({reinterpret_cast<const uint8_t*>(pending.data() + start), len, &dims.back()});
    start = nl == std::string::npos ? pending.size() : nl + 1;
  }
  if (!records.empty()) ZREC_RETURN_IF_ERROR(writer.append(records));
  pending.erase(0, start);
  return Status::ok();
}

}  // namespace

Status add_keys_file(DiffSide& side, const std::string& file, const std::string& option,
                     const std::string& scratch_dir) {
  const std::string where = option + " '" + printable(file) + "'";
  if (file == "-") return invalid_argument(where + ": keys come from a file (both sides may need one), not stdin");
  if (side.find(kKeyStream) != nullptr)
    return invalid_argument(where + ": '" + redact_url(side.path) + "' has a " + kKeyStream +
                            " stream already; give keys one way");
  ZREC_ASSIGN_OR_RETURN(const io::File in, open_side_file(file, option));
  const std::string path = scratch_dir + "/" + (option.ends_with("a") ? "keys-a" : "keys-b");
  Schema schema;
  ZREC_ASSIGN_OR_RETURN(schema.dtype, parse_dtype("|u1"));
  schema.ndim = 1;
  CreateOptions create;
  create.schema = schema;
  create.codec = Codec::kRaw;
  create.data_shards = 1;
  ZREC_RETURN_IF_ERROR(create_store(path, create));
  ZREC_ASSIGN_OR_RETURN(std::unique_ptr<StoreWriter> writer, StoreWriter::open(path, {.sync = false}));
  std::string pending;
  std::vector<char> buf(kWindowBytes);
  uint64_t line = 0;
  ZREC_ASSIGN_OR_RETURN(const uint64_t size, in.size());
  for (uint64_t at = 0; at < size;) {
    const size_t n = static_cast<size_t>(std::min<uint64_t>(buf.size(), size - at));
    ZREC_RETURN_IF_ERROR(in.pread_exact(buf.data(), n, at));
    at += n;
    pending.append(buf.data(), n);
    if (pending.size() >= kWindowBytes) ZREC_RETURN_IF_ERROR(append_lines(*writer, pending, false, line, where));
    if (line > side.length) break;
  }
  ZREC_RETURN_IF_ERROR(append_lines(*writer, pending, true, line, where));
  if (line != side.length)
    return invalid_argument(where + " holds " + std::to_string(line) + " keys, and '" + redact_url(side.path) + "' " +
                            std::to_string(side.length) + " samples: one line per sample");
  ZREC_RETURN_IF_ERROR(writer->close());
  ZREC_ASSIGN_OR_RETURN(std::unique_ptr<Store> keys, Store::open(path));
  side.streams.push_back({kKeyStream, std::move(keys)});
  std::sort(side.streams.begin(), side.streams.end(),
            [](const DiffStream& x, const DiffStream& y) { return x.name < y.name; });
  return Status::ok();
}

}  // namespace zrec::cli
