// Copying records between stores (recompress, concat): windows of records go from a
// Store to a StoreWriter either as stored frames (same codec and dictionary: no
// decoding, no encoding) or decoded and encoded again, each phase on all lanes.
#include "zrec/transfer.h"

#include <algorithm>
#include <cstring>
#include <numeric>

#include "format/endian.h"
#include "zrec_support/memory.h"

namespace zrec {

namespace {

// IDs handled per step: their RecordLocs (16 bytes each) and ids stay bounded.
constexpr uint64_t kIdChunk = 65536;

// What the progress sink hears: the running counts.
void report(const Control& control, const TransferStats& stats) {
  control.report({.records = stats.records, .bytes = stats.logical_bytes});
}

std::string shape_text(const std::vector<uint64_t>& shape) {
  std::string s = "(";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + (shape.size() == 1 ? ",)" : ")");
}

// Calls fn(ids, locs) for each run of up to kIdChunk IDs of `src`, in order: the IDs
// and their RecordLocs, read from the table in one sequential read. Only the first
// options.max_records records, less options.skip_ids (left out of both spans).
template <typename Fn>
Status for_each_id_chunk(const Store& src, const TransferOptions& options, Fn fn) {
  std::vector<uint64_t> ids;
  std::vector<RecordLoc> locs;
  const uint64_t length = std::min(src.length(), options.max_records);
  const std::vector<uint64_t>& skip = options.skip_ids;
  auto next_skip = skip.begin();
  for (uint64_t first = 0; first < length; first += kIdChunk) {
    const uint64_t count = std::min(kIdChunk, length - first);
    ids.resize(count);
    std::iota(ids.begin(), ids.end(), first);
    locs.resize(count);
    ZREC_RETURN_IF_ERROR(src.read_locs(first, count, locs.data()));
    if (next_skip != skip.end() && *next_skip < first + count) {
      size_t kept = 0;
      for (size_t k = 0; k < count; ++k) {
        if (next_skip != skip.end() && *next_skip == first + k) {
          ++next_skip;
          continue;
        }
        ids[kept] = ids[k];
        locs[kept++] = locs[k];
      }
      ids.resize(kept);
      locs.resize(kept);
      if (kept == 0) continue;
    }
    ZREC_RETURN_IF_ERROR(fn(std::span<const uint64_t>(ids), std::span<const RecordLoc>(locs)));
  }
  return Status::ok();
}

// Frame copy reads and checks windows of at most this many stored bytes.
// Performance note: a zstd frame copy is bound by decoding every frame to check it
// (issue 9), on all lanes; the window only batches records for the writer. With the
// default 64 MiB, first touching the buffer's pages and growing it (resize() doubled,
// copied and zeroed it when a window was a few bytes larger than the last) took half
// of a zstd reshard's time on a VM. An 8 MiB buffer, reserved once and backed by huge
// pages where the kernel offers them, is touched once and stays warm. (Reading the
// next window while this one is written was tried: no faster, as decoding keeps every
// lane busy.)
constexpr uint64_t kMaxCopyWindow = uint64_t{8} << 20;

Status copy_frames(Store& src, StoreWriter& dst, const TransferOptions& options, const Control& control,
                   TransferStats* stats) {
  const uint64_t window_bytes = std::max<uint64_t>(1, std::min(options.window_bytes, kMaxCopyWindow));
  std::vector<uint8_t> buffer;
  buffer.reserve(std::min(window_bytes, src.stored_bytes()));
  advise_huge_pages(buffer.data(), buffer.capacity());
  std::vector<uint64_t> offsets;
  std::vector<EncodedRecord> records;
  return for_each_id_chunk(src, options, [&](std::span<const uint64_t> ids, std::span<const RecordLoc> locs) -> Status {
    const uint64_t count = ids.size();
    for (uint64_t begin = 0; begin < count;) {
      ZREC_RETURN_IF_ERROR(control.check());
      uint64_t end = begin, bytes = 0;
      while (end < count && (end == begin || bytes + locs[end].phys_length <= window_bytes))
        bytes += locs[end++].phys_length;
      const auto window_ids = ids.subspan(begin, end - begin);
      // A remote source has no descriptor to copy from: its bytes are read.
      const bool kernel_copy = options.kernel_copy && !src.is_remote();
      ZREC_RETURN_IF_ERROR(src.read_stored(window_ids, locs.data() + begin, buffer, offsets, !kernel_copy));
      const bool have_bytes = !kernel_copy || !src.checks_need_no_bytes();
      records.resize(window_ids.size());
      uint64_t logical = 0;
      for (size_t k = 0; k < window_ids.size(); ++k) {
        const RecordLoc& loc = locs[begin + k];
        records[k] =
            EncodedRecord{have_bytes ? buffer.data() + offsets[k] : nullptr, loc.phys_length, loc.logic_length};
        if (kernel_copy) {
          records[k].src_fd = src.data_fd(static_cast<uint32_t>(window_ids[k] % src.data_shards()));
          records[k].src_offset = loc.offset;
        }
        logical += loc.logic_length;
      }
      ZREC_RETURN_IF_ERROR(dst.append_encoded(records));
      stats->records += records.size();
      stats->frames_copied += records.size();
      stats->logical_bytes += logical;
      stats->source_stored_bytes += bytes;
      report(control, *stats);
      // A window that grew for one oversized record gives the memory back.
      if (buffer.size() > 2 * window_bytes) std::vector<uint8_t>().swap(buffer);
      begin = end;
    }
    return Status::ok();
  });
}

Status recode(Store& src, StoreWriter& dst, const TransferOptions& options, const Control& control,
              TransferStats* stats) {
  const Schema& schema = src.schema();
  const uint64_t prefix = schema.is_dense() ? 0 : schema.shape_prefix_bytes();
  std::vector<RecordRef> refs;
  std::vector<uint64_t> dims;  // Ragged: shape prefixes copied out, so dims are u64-aligned
  return for_each_id_chunk(src, options, [&](std::span<const uint64_t> ids, std::span<const RecordLoc> locs) -> Status {
    // Stored sizes for the statistics; scan reads the same slice of the table again.
    for (const RecordLoc& loc : locs) stats->source_stored_bytes += loc.phys_length;
    return src.scan(ids, options.window_bytes, [&](const Window& w) -> Status {
      ZREC_RETURN_IF_ERROR(control.check());
      const size_t m = w.ids.size();
      refs.resize(m);
      if (prefix > 0) dims.resize(m * schema.ndim);
      for (size_t k = 0; k < m; ++k) {
        const uint8_t* record = w.data + w.offsets[k];
        const uint64_t size = w.offsets[k + 1] - w.offsets[k];
        if (prefix > 0) {
          uint64_t* d = dims.data() + k * schema.ndim;
          for (uint32_t j = 0; j < schema.ndim; ++j) d[j] = format::load_le<uint64_t>(record + 8 * j);
          refs[k] = RecordRef{record + prefix, size - prefix, d};
        } else {
          refs[k] = RecordRef{record, size, nullptr};
        }
      }
      ZREC_RETURN_IF_ERROR(dst.append(refs));
      stats->records += m;
      stats->records_recoded += m;
      stats->logical_bytes += w.offsets.back();
      report(control, *stats);
      return Status::ok();
    });
  });
}

}  // namespace

std::string schema_difference(const Schema& a, const Schema& b) {
  if (a == b) return "";
  auto describe_geometry = [](const Schema& s) {
    return s.is_dense() ? "Dense " + shape_text(*s.item_shape) : "Ragged ndim=" + std::to_string(s.ndim);
  };
  if (a.is_dense() != b.is_dense()) return describe_geometry(a) + " vs " + describe_geometry(b);
  std::string diff;
  auto add = [&](const std::string& d) { diff += (diff.empty() ? "" : ", ") + d; };
  if (a.dtype != b.dtype) add("dtype '" + a.dtype.str() + "' vs '" + b.dtype.str() + "'");
  if (a.is_dense()) {
    if (*a.item_shape != *b.item_shape)
      add("item_shape " + shape_text(*a.item_shape) + " vs " + shape_text(*b.item_shape));
  } else if (a.ndim != b.ndim) {
    add("ndim " + std::to_string(a.ndim) + " vs " + std::to_string(b.ndim));
  }
  return diff.empty() ? a.describe() + " vs " + b.describe() : diff;
}

uint64_t skipped_below(const TransferOptions& options, uint64_t records) {
  const auto& skip = options.skip_ids;
  return static_cast<uint64_t>(std::lower_bound(skip.begin(), skip.end(), records) - skip.begin());
}

bool frames_compatible(const Store& src, const StoreWriter& dst) {
  return src.codec() == dst.codec() && src.dictionary() == dst.dictionary();
}

Status append_store(Store& src, StoreWriter& dst, const TransferOptions& options, TransferStats* stats,
                    const Context& ctx) {
  const std::string diff = schema_difference(src.schema(), dst.schema());
  if (!diff.empty()) return invalid_argument("schema of '" + src.path() + "' differs from the destination's: " + diff);
  TransferStats local;
  if (stats == nullptr) stats = &local;
  if (options.frame_copy && frames_compatible(src, dst)) {
    ++stats->sources_copied;
    return copy_frames(src, dst, options, ctx.control, stats);
  }
  return recode(src, dst, options, ctx.control, stats);
}

Status build_from_stores(const std::vector<Store*>& sources, const std::string& dst, const CreateOptions& create,
                         const WriterOptions& writer, const TransferOptions& options, TransferStats* stats,
                         const Context& ctx) {
  for (Store* src : sources) {
    const std::string diff = schema_difference(create.schema, src->schema());
    if (!diff.empty())
      return invalid_argument("schema of '" + src->path() + "' differs from the destination's: " + diff);
  }
  return build_store(
      dst, create, writer,
      [&](StoreWriter& w) -> Status {
        for (Store* src : sources) ZREC_RETURN_IF_ERROR(append_store(*src, w, options, stats, ctx));
        if (stats != nullptr) stats->stored_bytes = w.stored_bytes();
        return Status::ok();
      },
      ctx);
}

}  // namespace zrec
