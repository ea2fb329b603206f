// zrec append-files: each file's bytes become one record of a Ragged '|u1' store
// (ndim 1), in list order: files named on the command line, or lists of names from
// --files-from or stdin (newline- or, with --null, NUL-separated, as find -print0
// writes them; zrec_support/file_list.h has the rule). --manifest maps record IDs back to the
// files.
//
// Performance note: files are read in batches by a small pool of reader lanes while
// the previous batch is being appended (encoded on the writer's lanes): two batches
// in flight, each about half the window budget. A file costs open, fstat, one read
// (regular files are read at their size) and close; the records are appended
// straight from the reader's buffers, without another copy.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <charconv>
#include <future>
#include <memory>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "zrec/format.h"

#include "cli/app/command.h"
#include "cli/formats/line_field.h"
#include "cli/import/append_command.h"
#include "cli/import/append_session.h"
#include "cli/options/option_values.h"
#include "cli/options/usage_error.h"
#include "cli/os/output_guard.h"
#include "cli/os/side_file.h"
#include "cli/report/console.h"
#include "zrec_support/background_task.h"
#include "zrec_support/file.h"
#include "zrec_support/file_list.h"
#include "zrec_support/input_stream.h"

namespace zrec::cli {

namespace {

struct AppendFilesArgs {
  std::string store;
  std::vector<std::string> files;
  std::string files_from;
  bool null = false;
  bool skip_missing = false;
  bool skip_empty = false;
  std::string manifest;
  AppendArgs append;
};

// What append-files is to `zrec --help`, and its STORE operand.
constexpr AppendCommandForm kAppendFiles{.name = "append-files",
                                         .about = "Append files as records: each file's bytes become one record",
                                         .store = "Store to append to (Ragged '|u1', ndim 1)"};

// A |u1 record's payload is at most 2^31 - 1 bytes minus its 8-byte shape prefix.
// Files per read-ahead batch: enough to amortize a batch's barrier, few enough that
// reading and appending overlap well on a list of small files.
constexpr size_t kMaxBatchFiles = 2048;
// Reader lanes: file reads are mostly system calls, which scale with a few threads.
constexpr size_t kMaxReadLanes = 8;
// Warnings listed one by one for --skip-missing before only counting.
constexpr uint64_t kListedWarnings = 10;

// --- reading files ahead ------------------------------------------------------------

// A growable byte buffer that does not zero what it adds (reads overwrite it).
class Arena {
 public:
  uint64_t size() const { return used_; }
  uint8_t* data() { return data_.get(); }
  // Room for n more bytes after size(); returns where they start.
  uint8_t* extend(uint64_t n) {
    if (used_ + n > capacity_) {
      uint64_t cap = std::max<uint64_t>({used_ + n, capacity_ * 2, uint64_t{1} << 20});
      auto grown = std::make_unique_for_overwrite<uint8_t[]>(cap);
      if (used_ > 0) std::memcpy(grown.get(), data_.get(), used_);
      data_ = std::move(grown);
      capacity_ = cap;
    }
    uint8_t* at = data_.get() + used_;
    used_ += n;
    return at;
  }
  void truncate(uint64_t size) { used_ = std::min(used_, size); }
  // Empties the arena, giving memory back when one large file grew it past `keep`.
  void clear(uint64_t keep) {
    used_ = 0;
    if (capacity_ > keep) {
      data_.reset();
      capacity_ = 0;
    }
  }

 private:
  std::unique_ptr<uint8_t[]> data_;
  uint64_t capacity_ = 0, used_ = 0;
};

// One file of a batch, as a reader lane found it.
struct FileRead {
  Status status;  // not ok: missing or unreadable (--skip-missing skips it)
  uint32_t lane = 0;
  uint64_t offset = 0;  // its bytes are arenas[lane][offset, offset + size)
  uint64_t size = 0;
  bool too_large = false;  // larger than a record holds (size is its size; nothing read)
};

// Entries [first, first + count) of the list, read.
struct Batch {
  size_t first = 0, count = 0;
  std::vector<FileRead> items;
  std::vector<Arena> arenas;  // one per reader lane
};

// Opens a name of the list for reading. O_NONBLOCK: opening a FIFO must not wait for a
// writer (it is then refused, as not a regular file); reads of regular files ignore it.
Result<io::File> open_input(const std::string& path) { return io::File::open(path, O_RDONLY | O_NOCTTY | O_NONBLOCK); }

// Only regular files are records: a pipe or a device could block forever or never end.
Status not_regular(const std::string& path, const struct stat& st) {
  if (S_ISDIR(st.st_mode)) return io::errno_status(EISDIR, "cannot read", path);
  return io_error("cannot read '" + path + "': not a regular file (a pipe, socket or device)");
}

// Reads `path` whole to the end of `arena`.
void read_file(const std::string& path, Arena& arena, FileRead& r) {
  auto opened = open_input(path);
  if (!opened.is_ok()) {
    r.status = opened.status();
    return;
  }
  const io::File file = std::move(opened).value();
  const int fd = file.fd();
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    r.status = io::errno_status(errno, "cannot read", path);
    return;
  }
  if (!S_ISREG(st.st_mode)) {
    r.status = not_regular(path, st);
    return;
  }
  r.offset = arena.size();
  auto read_into = [&](uint8_t* dst, uint64_t n) -> int64_t {
    for (;;) {
      const ssize_t got = ::read(fd, dst, std::min<uint64_t>(n, uint64_t{1} << 30));
      if (got >= 0) return got;
      if (errno != EINTR) return -1;
    }
  };
  if (st.st_size > 0) {
    // The file's bytes as of its size when opened: one read for a small file.
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (size > kMaxRagged1dPayloadBytes) {
      r.too_large = true;
      r.size = size;
      return;
    }
    uint8_t* dst = arena.extend(size);
    uint64_t got = 0;
    while (got < size) {
      const int64_t n = read_into(dst + got, size - got);
      if (n < 0) {
        r.status = io::errno_status(errno, "cannot read", path);
        break;
      }
      if (n == 0) break;  // it shrank meanwhile
      got += static_cast<uint64_t>(n);
    }
    arena.truncate(r.offset + got);
    r.size = got;
  } else {
    // Empty, or a file that reports no size (in /proc): read to the end.
    constexpr uint64_t kChunk = uint64_t{64} << 10;
    for (;;) {
      uint8_t* dst = arena.extend(kChunk);
      const int64_t n = read_into(dst, kChunk);
      arena.truncate(r.offset + r.size + static_cast<uint64_t>(std::max<int64_t>(n, 0)));
      if (n < 0) {
        r.status = io::errno_status(errno, "cannot read", path);
        break;
      }
      if (n == 0) break;
      r.size += static_cast<uint64_t>(n);
      if (r.size > kMaxRagged1dPayloadBytes) {
        r.too_large = true;
        break;
      }
    }
  }
  if (!r.status.is_ok() || r.too_large) arena.truncate(r.offset);
}

// Reads batches of the list with up to `readers` tasks on the command's lanes; fill() is
// called from a read-ahead thread while the main thread appends the previous batch
// (the writer's encoding shares the same lanes: Lanes::run takes concurrent callers).
class BatchReader {
 public:
  BatchReader(const std::vector<std::string>& names, std::shared_ptr<Lanes> lanes, size_t readers, uint64_t batch_bytes)
      : names_(names), lanes_(std::move(lanes)), readers_(readers), batch_bytes_(std::max<uint64_t>(batch_bytes, 1)) {}

  // Reads names [first, ...) into `b`: up to kMaxBatchFiles files, and no more once
  // batch_bytes are read (each lane may finish the file it has started). Stops early,
  // with fewer files, when interrupted.
  Status fill(Batch& b, size_t first) {
    const size_t limit = std::min(names_.size(), first + kMaxBatchFiles);
    b.first = first;
    b.items.resize(limit - first);
    b.arenas.resize(readers_);
    for (Arena& a : b.arenas) a.clear(2 * batch_bytes_);
    std::atomic<size_t> next{first};
    std::atomic<uint64_t> bytes{0};
    // Each task is one reader that keeps claiming files, with its own arena.
    Status s = lanes_->run(readers_, [&](size_t, size_t reader) -> Status {
      for (;;) {
        if (bytes.load(std::memory_order_relaxed) >= batch_bytes_ || interrupted()) return Status::ok();
        const size_t k = next.fetch_add(1, std::memory_order_relaxed);
        if (k >= limit) return Status::ok();
        FileRead& r = b.items[k - first];
        r = FileRead{};
        r.lane = static_cast<uint32_t>(reader);
        read_file(names_[k], b.arenas[reader], r);
        bytes.fetch_add(r.size, std::memory_order_relaxed);
      }
    });
    // Every index below min(next, limit) was claimed, and so read.
    b.count = std::min(next.load(), limit) - first;
    return s;
  }

 private:
  const std::vector<std::string>& names_;
  std::shared_ptr<Lanes> lanes_;
  const size_t readers_;
  const uint64_t batch_bytes_;
};

// --- the manifest -------------------------------------------------------------------

// "id<TAB>path<TAB>bytes" lines for the records published, appended to a file that
// is kept in step with the store. Lines go to the file before the publication they
// belong to (and are fsynced with it), so after any kill the manifest lists every
// published record, in ID order, possibly followed by lines of records that were not
// published: IDs >= the store's length, the last perhaps cut short. The next
// append-files with the same --manifest removes those first, so a resumed run keeps
// the manifest exact; lines written for records aborted are truncated away at once.
class Manifest {
 public:
  // `published`: the store's length (IDs below it are published). Sets *dropped to the
  // number of trailing lines removed.
  static Result<std::unique_ptr<Manifest>> open(const std::string& path, uint64_t published, uint64_t* dropped) {
    // A side file: a FIFO named as the manifest must not block the open (it is refused).
    ZREC_ASSIGN_OR_RETURN(io::File f, open_side_file(path, "--manifest", O_RDWR | O_CREAT | O_APPEND));
    ZREC_ASSIGN_OR_RETURN(uint64_t size, f.size());
    ZREC_ASSIGN_OR_RETURN(uint64_t kept, published_end(f, size, published, dropped));
    if (kept != size) {
      ZREC_RETURN_IF_ERROR(f.truncate(kept));
      ZREC_RETURN_IF_ERROR(f.sync());
    }
    auto m = std::unique_ptr<Manifest>(new Manifest(std::move(f)));
    m->committed_ = m->written_ = kept;
    return m;
  }

  // Backslash, tab, newline and CR in paths are written as \\, \t, \n and \r, so
  // that every line has three fields.
  void add(uint64_t id, const std::string& path, uint64_t bytes) {
    buffer_ += std::to_string(id);
    buffer_ += '\t';
    append_line_field(buffer_, path, LineField::kTabSeparated);
    buffer_ += '\t';
    buffer_ += std::to_string(bytes);
    buffer_ += '\n';
  }
  bool wants_flush() const { return buffer_.size() >= (size_t{1} << 20); }

  Status flush() {
    if (buffer_.empty()) return Status::ok();
    ZREC_RETURN_IF_ERROR(file_.write_all(buffer_.data(), buffer_.size()));
    written_ += buffer_.size();
    buffer_.clear();
    return Status::ok();
  }
  // Before a publication: its lines reach the disk first.
  Status prepare() {
    ZREC_RETURN_IF_ERROR(flush());
    return file_.sync();
  }
  void commit() { committed_ = written_; }
  void rollback() {
    buffer_.clear();
    if (written_ != committed_) (void)file_.truncate(committed_);
    written_ = committed_;
  }

 private:
  explicit Manifest(io::File f) : file_(std::move(f)) {}

  // Where the line holding the bytes just before `pos` starts: after the last '\n' before it.
  static Result<uint64_t> line_start(const io::File& f, uint64_t pos) {
    char chunk[4096];
    while (pos > 0) {
      const uint64_t n = std::min<uint64_t>(pos, sizeof chunk);
      ZREC_RETURN_IF_ERROR(f.pread_exact(chunk, n, pos - n));
      for (uint64_t k = n; k > 0; --k)
        if (chunk[k - 1] == '\n') return pos - n + k;
      pos -= n;
    }
    return uint64_t{0};
  }

  // The size the manifest keeps: without the trailing lines of unpublished records (ID
  // >= `published`) and without a last line cut short by a kill. Stops at the first
  // line from the end that is published, or that is not a manifest line at all.
  static Result<uint64_t> published_end(const io::File& f, uint64_t size, uint64_t published, uint64_t* dropped) {
    *dropped = 0;
    uint64_t end = size;
    while (end > 0) {
      char last;
      ZREC_RETURN_IF_ERROR(f.pread_exact(&last, 1, end - 1));
      ZREC_ASSIGN_OR_RETURN(uint64_t start, line_start(f, last == '\n' ? end - 1 : end));
      if (last == '\n') {
        char head[24] = {};
        const uint64_t n = std::min<uint64_t>(end - start, sizeof head);
        ZREC_RETURN_IF_ERROR(f.pread_exact(head, n, start));
        uint64_t id = 0;
        auto [tab, ec] = std::from_chars(head, head + n, id);
        if (ec != std::errc() || tab == head + n || *tab != '\t' || id < published) break;
      }
      end = start;
      ++*dropped;
    }
    return end;
  }

  io::File file_;
  std::string buffer_;
  uint64_t committed_ = 0, written_ = 0;  // file sizes: as of the last publication, and now
};

// --- the command --------------------------------------------------------------------

class FilesAppender {
 public:
  FilesAppender(const AppendFilesArgs& a, const GlobalOptions& g, AppendSession& session,
                const std::vector<std::string>& names, Manifest* manifest)
      : a_(a), g_(g), session_(session), names_(names), manifest_(manifest) {}

  Status run() {
    size_t k = 0;
    ZREC_RETURN_IF_ERROR(skip_first(k));
    if (k >= names_.size()) return Status::ok();
    const std::shared_ptr<Lanes> lanes = g_.context(Work::kWrite).lanes;
    BatchReader reader(names_, lanes, std::min(lanes->count(), kMaxReadLanes), session_.window_bytes() / 2);
    Batch batches[2];
    BackgroundTask ahead;
    auto read_ahead = [&](Batch& b, size_t first) {
      ahead.start([&reader, &b, first] { return reader.fill(b, first); });
    };
    read_ahead(batches[0], k);
    for (int cur = 0; ahead.started(); cur ^= 1) {
      ZREC_RETURN_IF_ERROR(ahead.wait());
      Batch& b = batches[cur];
      const size_t after = b.first + b.count;
      if (after < names_.size() && b.count > 0 && !interrupted()) read_ahead(batches[cur ^ 1], after);
      Status s = append_batch(b);
      if (!s.is_ok()) {
        (void)ahead.wait();  // it writes into the other batch
        return s;
      }
    }
    return session_.check_interrupt();
  }

  uint64_t missing() const { return missing_; }
  uint64_t empty() const { return empty_; }

 private:
  Status empty_error(const std::string& path) const {
    return invalid_argument("'" + path + "' is empty (records are nonempty; --skip-empty skips empty files)");
  }
  Status too_large_error(const std::string& path, uint64_t size) const {
    return invalid_argument("'" + path + "' is " + std::to_string(size) + " bytes; a record holds at most " +
                            std::to_string(kMaxRagged1dPayloadBytes));
  }

  void note_missing(const Status& why) {
    ++missing_;
    session_.count_non_record();
    if (missing_ <= kListedWarnings || g_.verbosity >= 1) {
      session_.warn("skipping: " + why.message());
      if (missing_ == kListedWarnings && g_.verbosity < 1)
        session_.warn("further skipped files are counted, not listed (-v lists them)");
    }
  }

  // The records to skip (--skip-first K, then those already in the store past
  // --from-length): the first names that are records. Without --skip-missing and
  // --skip-empty every name of --skip-first was one, so they are passed over without
  // any I/O; otherwise each is opened to tell. Each file found present is opened and its
  // size compared with the stored record's (the store's table has it: a regenerated
  // list whose files differ in size is refused at the first, where it used to get its
  // tail appended); with --check-present it is read and compared byte for byte; with
  // --no-check-present it is passed over unopened.
  Status skip_first(size_t& k) {
    if (!a_.skip_missing && !a_.skip_empty) {
      const uint64_t n = std::min<uint64_t>(session_.to_skip_unread(true), names_.size());
      session_.skip_records(n);
      k = n;
    }
    for (; k < names_.size() && session_.to_skip() > 0; ++k) {
      ZREC_RETURN_IF_ERROR(session_.check_interrupt());
      const std::string& path = names_[k];
      auto file = open_input(path);
      struct stat st {};
      Status why;
      if (!file.is_ok()) why = file.status();
      else if (::fstat(file->fd(), &st) != 0) why = io::errno_status(errno, "cannot read", path);
      else if (!S_ISREG(st.st_mode)) why = not_regular(path, st);
      if (!why.is_ok()) {
        if (!a_.skip_missing) return why;
        note_missing(why);
      } else if (st.st_size == 0) {
        if (!a_.skip_empty) return empty_error(path);
        ++empty_;
        session_.count_non_record();
      } else {
        session_.skip_record();
        if (session_.compares_skipped(false)) ZREC_RETURN_IF_ERROR(compare_present(path));
        else if (session_.compares_skipped_size(false))
          ZREC_RETURN_IF_ERROR(session_.compare_skipped_size(static_cast<uint64_t>(st.st_size), "'" + path + "'"));
      }
    }
    return Status::ok();
  }

  // Compares the file `path`, found present, with its stored record.
  Status compare_present(const std::string& path) {
    Arena arena;
    FileRead r;
    read_file(path, arena, r);
    ZREC_RETURN_IF_ERROR(r.status);
    if (r.too_large) return too_large_error(path, r.size);
    uint64_t dims = r.size;
    return session_.compare_skipped({arena.data() + r.offset, r.size}, &dims, "'" + path + "'");
  }

  Status append_batch(Batch& b) {
    ZREC_RETURN_IF_ERROR(session_.check_interrupt());
    refs_.clear();
    which_.clear();
    dims_.assign(b.count, 0);
    // A file that cannot be a record stops the run, after the files before it (which a
    // checkpoint may still publish).
    Status stop;
    for (size_t j = 0; j < b.count && stop.is_ok(); ++j) {
      const FileRead& r = b.items[j];
      const std::string& path = names_[b.first + j];
      if (!r.status.is_ok()) {
        if (!a_.skip_missing) stop = r.status;
        else note_missing(r.status);
        continue;
      }
      if (r.too_large) {
        stop = too_large_error(path, r.size);
        continue;
      }
      if (r.size == 0) {
        if (!a_.skip_empty) {
          stop = empty_error(path);
        } else {
          ++empty_;
          session_.count_non_record();
        }
        continue;
      }
      dims_[j] = r.size;
      refs_.push_back(RecordRef{b.arenas[r.lane].data() + r.offset, r.size, &dims_[j]});
      which_.push_back(j);
      session_.count_input(r.size);
    }
    // Appended in pieces that end at checkpoints, so the manifest lines written before
    // a publication are exactly those of the records it publishes.
    for (size_t i = 0; i < refs_.size();) {
      const size_t n = std::min<uint64_t>(refs_.size() - i, session_.room_before_checkpoint());
      if (manifest_ != nullptr) {
        for (size_t t = i; t < i + n; ++t)
          manifest_->add(session_.next_id() + (t - i), names_[b.first + which_[t]], refs_[t].size);
        if (manifest_->wants_flush()) ZREC_RETURN_IF_ERROR(manifest_->flush());
      }
      ZREC_RETURN_IF_ERROR(session_.append(std::span<const RecordRef>(refs_).subspan(i, n)));
      i += n;
    }
    return stop;
  }

  const AppendFilesArgs& a_;
  const GlobalOptions& g_;
  AppendSession& session_;
  const std::vector<std::string>& names_;
  Manifest* manifest_;
  std::vector<RecordRef> refs_;
  std::vector<size_t> which_;  // batch index of each ref
  std::vector<uint64_t> dims_;
  uint64_t missing_ = 0, empty_ = 0;
};

Status run_append_files(const AppendFilesArgs& a, const GlobalOptions& g) {
  // Where the names come from, in order: FILE operands ('-' reads a list from stdin
  // there), then --files-from.
  int stdin_lists = static_cast<int>(std::count(a.files.begin(), a.files.end(), "-")) + (a.files_from == "-" ? 1 : 0);
  if (stdin_lists > 1) throw UsageError("stdin can be read only once: give '-' once (as FILE or --files-from -)");
  if (a.files.empty() && a.files_from.empty())
    throw UsageError("no files: name FILEs, give --files-from LIST, or - to read the names from stdin");
  if (stdin_lists > 0 && stdin_is_terminal())
    throw UsageError("refusing to read a list of names from a terminal (pipe it in, or use --files-from LIST)");
  if (a.manifest == "-")
    throw UsageError("--manifest needs a file name (it is truncated back when records are not published)");

  ZREC_RETURN_IF_ERROR(refuse_output_into_stores(a.manifest, "--manifest", {a.store}));
  ZREC_RETURN_IF_ERROR(check_side_file(a.files_from, "--files-from", true));
  ZREC_ASSIGN_OR_RETURN(auto session, AppendSession::open("append-files", a.store, a.append, g));
  std::unique_ptr<Manifest> manifest;
  uint64_t missing = 0, empty = 0;
  // Everything past this point ends in finish(), which reports interruptions.
  Status s = [&]() -> Status {
    const Schema& schema = session->schema();
    if (schema.is_dense() || schema.ndim != 1 || schema.dtype.str() != "|u1")
      return invalid_argument("the store must be Ragged '|u1' with ndim 1 (one record of bytes per file), but '" +
                              a.store + "' is " + schema.describe() +
                              " (make one with: zrec create --ragged --dtype '|u1' --ndim 1 STORE)");
    const ListSeparator separator = a.null ? ListSeparator::kNul : ListSeparator::kNewline;
    std::vector<std::string> names;
    for (const auto& f : a.files) {
      if (f == "-") ZREC_RETURN_IF_ERROR(read_file_list("-", separator, names, g.context(Work::kWrite).control));
      else names.push_back(f);
    }
    if (!a.files_from.empty())
      ZREC_RETURN_IF_ERROR(read_file_list(a.files_from, separator, names, g.context(Work::kWrite).control));
    session->progress().set_total_records(names.size());

    if (!a.manifest.empty()) {
      uint64_t dropped = 0;
      ZREC_ASSIGN_OR_RETURN(manifest, Manifest::open(a.manifest, session->next_id(), &dropped));
      session->follow(manifest.get(), dropped, "'" + a.manifest + "'", "records an interrupted run did not publish");
    }
    FilesAppender appender(a, g, *session, names, manifest.get());
    Status run = appender.run();
    missing = appender.missing();
    empty = appender.empty();
    return run;
  }();
  session->outcome().set("missing_files_skipped", missing).set("empty_files_skipped", empty);
  if (missing > 0)
    session->add_final_warning("skipped " + std::to_string(missing) + " missing or unreadable file" +
                               (missing == 1 ? "" : "s"));
  if (empty > 0)
    session->add_final_warning("skipped " + std::to_string(empty) + " empty file" + (empty == 1 ? "" : "s"));
  return session->finish(std::move(s));
}

// append-files's own options, between STORE and the options every append takes.
void add_files_options(CLI::App* cmd, AppendFilesArgs& a) {
  cmd->add_option("files", a.files, "Files to append, in order; - reads a list of names from stdin");
  cmd->add_option("--files-from", a.files_from,
                  "Read the names of files to append from LIST (- for stdin), after any FILEs");
  cmd->add_flag("-0,--null", a.null, "Names in lists are NUL-separated (find -print0), not newline-separated");
  cmd->add_flag("--skip-missing", a.skip_missing,
                "Skip files that are missing or unreadable, with a warning, instead of failing");
  cmd->add_flag("--skip-empty", a.skip_empty, "Skip empty files instead of failing (records are nonempty)");
  cmd->add_option("--manifest", a.manifest, "Append 'id<TAB>path<TAB>bytes' lines for the records published to FILE");
}

}  // namespace

Command register_append_files(CLI::App& root, const GlobalOptions& global) {
  return register_append(root, global, kAppendFiles, add_files_options, run_append_files);
}

}  // namespace zrec::cli
