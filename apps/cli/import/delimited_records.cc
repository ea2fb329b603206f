// Lines and NUL-separated records of bytes: mapped, then streamed (see delimited_records.h).
#include "cli/import/delimited_records.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <span>
#include <vector>

#include "zrec/format.h"

#include "cli/import/record_window.h"
#include "cli/os/mapped_file.h"

namespace zrec::cli {

namespace {

// Streamed reads ask for at least this much room.
constexpr uint64_t kMinReadRoom = uint64_t{1} << 20;
// Mapped pages are given back in steps this large, not after every batch (a release
// is a system call that also flushes the other thread's view of the pages).
constexpr uint64_t kReleaseBytes = uint64_t{8} << 20;
// A mapped file is searched for a delimiter at most this far before the search asks
// whether the file shrank.
constexpr uint64_t kScanStepBytes = uint64_t{1} << 20;

class DelimitedReader {
 public:
  DelimitedReader(io::InputStream& in, AppendSession& s, const DelimitedInput& how) : in_(in), s_(s), how_(how) {}

  Status read() {
    if (how_.may_map) ZREC_RETURN_IF_ERROR(read_mapped());
    return read_streamed();
  }

 private:
  std::string where() const { return how_.label + " " + how_.unit + " " + std::to_string(number_); }

  // Checks the next record: false when it is not appended (an empty one under
  // --skip-empty, or one the session skips, compared with the stored one first where
  // it asks). (Inline: once per line of ~100 bytes.)
  Result<bool> admit(std::span<const uint8_t> record) {
    ++number_;
    if (record.empty()) {
      if (how_.skip_empty) return false;
      return invalid_argument(where() + " is empty (records are nonempty; --skip-empty drops empty ones)");
    }
    if (record.size() > kMaxRagged1dPayloadBytes)
      return invalid_argument(where() + " is " + std::to_string(record.size()) + " bytes; a record holds at most " +
                              std::to_string(kMaxRagged1dPayloadBytes));
    if (!s_.skip_record()) return true;
    if (s_.compares_skipped(true)) {
      const uint64_t dims = record.size();
      ZREC_RETURN_IF_ERROR(s_.compare_skipped(record, &dims, where()));
    }
    return false;
  }

  // admit()'s answer for the common record, a nonempty one of at most the limit with
  // nothing left to skip, without building a Result per line; false: ask admit().
  bool admitted_at_once(std::span<const uint8_t> record) {
    if (record.empty() || record.size() > kMaxRagged1dPayloadBytes || s_.to_skip() > 0) return false;
    ++number_;
    return true;
  }

  Status too_long() {
    ++number_;
    return invalid_argument(where() + " is longer than " + std::to_string(kMaxRagged1dPayloadBytes) +
                            " bytes, the most a record holds");
  }

  // The next delimiter in [from, end) of `map`, or null. Searched a step at a time, so
  // that once the file shrank (the rest reads as zeros, each page a fault) the search
  // stops within a step instead of faulting through the rest of the mapping.
  const uint8_t* find_delimiter(const MappedFile& map, const uint8_t* from, const uint8_t* end) const {
    for (;;) {
      const auto step = static_cast<size_t>(std::min<uint64_t>(end - from, kScanStepBytes));
      const void* hit = std::memchr(from, how_.delimiter, step);
      if (hit != nullptr) return static_cast<const uint8_t*>(hit);
      from += step;
      if (from == end || map.shrank()) return nullptr;
    }
  }

  // The complete records of a regular file, cut from its mapping in batches the size
  // of the session's windows and appended behind (the next batch is cut while the one
  // before is written). Leaves `in` at the first byte not consumed: an unterminated
  // last record, or what the file grew by, is streamed after.
  Status read_mapped() {
    const off_t at = ::lseek(in_.fd(), 0, SEEK_CUR);
    if (at < 0 || in_.position() != 0) return Status::ok();
    const std::unique_ptr<MappedFile> map = MappedFile::map(in_.fd(), static_cast<uint64_t>(at));
    if (!map) return Status::ok();
    const uint8_t* pos = map->bytes().data();
    const uint8_t* const end = pos + map->bytes().size();
    const uint64_t batch_records = s_.window_records();
    const uint64_t batch_bytes = s_.window_buffer_bytes();
    // Two batches: one being cut while the one before is written. Sized once (the
    // refs point into dims), and filled by index: no capacity check per line.
    std::vector<RecordRef> refs[2];
    std::vector<uint64_t> dims[2];
    // A raw store's batches are packed as stored here (StoreWriter::pack), so that the
    // write thread only writes their bytes (their RecordLocs are written from here too,
    // RecordWindow::append_behind).
    // Performance note: the write thread bounds a mapped file's append. It copied each
    // line behind its prefix, checked it and set its RecordLoc itself, then wrote the
    // table: on tmpfs 1.36-1.42x `cat`, the reading thread idle a third of the time.
    // With both moved here, 1.09-1.21x (docs/bench.md, "Tiny appends").
    const bool pack = s_.writer().codec() == Codec::kRaw;
    PackedRecords packed[2];
    for (int k = 0; k < 2; ++k) {
      refs[k].resize(batch_records);
      dims[k].resize(batch_records);
    }
    const uint8_t* released = pos;  // the pages before it were let go
    Status status;
    for (int cur = 0;; cur ^= 1) {
      const uint8_t* const batch_start = pos;
      status = s_.check_interrupt();  // (a batch of skipped records appends nothing to check it)
      if (!status.is_ok()) break;
      const uint64_t room = std::min(batch_records, s_.room_before_checkpoint());
      map->populate(pos, batch_bytes);
      uint64_t n = 0;
      bool more = true;
      while (n < room && static_cast<uint64_t>(pos - batch_start) < batch_bytes) {
        const uint8_t* hit = find_delimiter(*map, pos, end);
        if (hit == nullptr) {
          more = false;
          break;
        }
        const std::span<const uint8_t> record(pos, hit);
        pos = hit + 1;
        if (!admitted_at_once(record)) {
          Result<bool> keep = admit(record);
          if (!keep.is_ok()) {
            status = keep.status();
            break;
          }
          if (!keep.value()) continue;
        }
        dims[cur][n] = record.size();
        refs[cur][n] = RecordRef{record.data(), record.size(), &dims[cur][n]};
        ++n;
      }
      if (!status.is_ok()) break;
      s_.count_input(static_cast<uint64_t>(pos - batch_start));
      const std::span<const RecordRef> batch(refs[cur].data(), n);
      // (The batch before may still be written from packed[cur ^ 1], never from this one.)
      if (pack) status = s_.writer().pack(batch, s_.next_id(), packed[cur]);
      // Waits for the batch before, so everything before batch_start is written.
      if (status.is_ok()) status = pack ? s_.append_behind(packed[cur]) : s_.append_behind(batch);
      if (!status.is_ok() || !more) break;
      if (static_cast<uint64_t>(batch_start - released) >= kReleaseBytes) {
        map->release_before(batch_start);
        released = batch_start;
      }
    }
    // The batch in flight reads the mapping: it ends first.
    const Status written = s_.wait_appended();
    if (status.is_ok()) status = written;
    if (map->shrank())
      return invalid_argument(how_.label +
                              " shrank while it was read (another process truncated it); nothing of "
                              "this run is published");
    ZREC_RETURN_IF_ERROR(status);
    if (static_cast<uint64_t>(end - pos) > kMaxRagged1dPayloadBytes) return too_long();
    ZREC_ASSIGN_OR_RETURN(uint64_t skipped, in_.skip(static_cast<uint64_t>(pos - map->bytes().data())));
    (void)skipped;  // a file that shrank since is streamed from its end: nothing more
    return Status::ok();
  }

  // Records read with large reads straight into the window and cut there.
  Status read_streamed() {
    uint64_t scanned = 0;  // leading bytes of pending() known to hold no delimiter
    uint64_t dims = 0;
    for (;;) {
      ZREC_ASSIGN_OR_RETURN(std::span<uint8_t> space, s_.input_space(kMinReadRoom));
      ZREC_ASSIGN_OR_RETURN(size_t got, in_.read_some(space.data(), space.size()));
      if (got == 0) break;
      s_.input_written(got);
      for (;;) {
        const std::span<const uint8_t> pending = s_.pending();
        // (An empty window has no data pointer at all: memchr must not see it.)
        const void* hit = pending.size() > scanned
                              ? std::memchr(pending.data() + scanned, how_.delimiter, pending.size() - scanned)
                              : nullptr;
        if (hit == nullptr) {
          scanned = pending.size();
          if (scanned > kMaxRagged1dPayloadBytes) return too_long();
          break;
        }
        ZREC_RETURN_IF_ERROR(take(static_cast<const uint8_t*>(hit) - pending.data(), 1, dims));
        scanned = 0;
      }
    }
    if (!s_.pending().empty()) ZREC_RETURN_IF_ERROR(take(s_.pending().size(), 0, dims));  // unterminated last one
    return Status::ok();
  }

  // The first `len` bytes of the window's pending input as the next record, then `gap`
  // bytes of delimiter dropped.
  Status take(uint64_t len, uint64_t gap, uint64_t& dims) {
    ZREC_ASSIGN_OR_RETURN(bool keep, admit(s_.pending().first(len)));
    if (!keep) return s_.drop(len + gap);
    dims = len;
    return s_.cut(len, gap, &dims);
  }

  io::InputStream& in_;
  AppendSession& s_;
  const DelimitedInput& how_;
  uint64_t number_ = 0;  // records seen, counting from 1
};

}  // namespace

Status read_delimited_records(io::InputStream& in, AppendSession& s, const DelimitedInput& how) {
  return DelimitedReader(in, s, how).read();
}

}  // namespace zrec::cli
