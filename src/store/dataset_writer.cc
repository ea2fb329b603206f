// The writer of a dataset of named streams (see zrec/dataset.h): the root's lock and
// commit (store/root_writer.h) around the streams' StoreWriters.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>

#include "zrec/dataset.h"
#include "zrec/store.h"

#include "store/root_writer.h"
#include "store/stream_alignment.h"
#include "store/temp_sibling.h"
#include "zrec_support/file.h"

namespace zrec {

// The writer's state and its steps; DatasetWriter's public calls forward here.
struct DatasetWriter::Impl {
  struct Stream {
    std::string name;
    std::unique_ptr<StoreWriter> writer;
    bool created = false;  // this session made the store
  };

  Impl(std::string root, DatasetWriterOptions options, Context ctx);
  Status lock();
  Status adopt(const std::vector<std::string>& stores);
  Status open_streams();
  Stream* find_stream(const std::string& name);
  uint64_t committed_length() const;
  std::vector<std::string> stream_names() const;
  Result<std::vector<StreamCut>> recover();
  Result<StoreWriter*> stream(const std::string& name, const CreateOptions& create);
  Status publish();
  Status close();
  void abort(std::vector<std::string>* warnings = nullptr);

  const std::string root_;
  const DatasetWriterOptions options_;
  const Context ctx_;  // every stream's writer's, and the root's lock wait
  std::unique_ptr<RootWriter> marker_;
  RootState found_;
  std::vector<std::unique_ptr<Stream>> streams_;  // sorted by name
  bool dir_created_ = false, marked_ = false, recovered_ = false, published_ = false, done_ = false;
};

namespace {

// "a, b, c"
std::string join_names(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// The directory `path` is in ("." for a bare name).
std::string parent_of(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

}  // namespace

namespace {

// The streams' writers are the root's: they may open the streams its marker lists.
DatasetWriterOptions through_root(DatasetWriterOptions options) {
  options.writer.through_root = true;
  return options;
}

}  // namespace

DatasetWriter::Impl::Impl(std::string root, DatasetWriterOptions options, Context ctx)
    : root_(std::move(root)), options_(through_root(std::move(options))), ctx_(std::move(ctx)) {}

DatasetWriter::DatasetWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

DatasetWriter::~DatasetWriter() {
  if (!impl_->done_) impl_->abort();
}

Result<std::unique_ptr<DatasetWriter>> DatasetWriter::open(const std::string& root, const DatasetWriterOptions& options,
                                                           const Context& ctx) {
  std::unique_ptr<DatasetWriter> w(new DatasetWriter(std::make_unique<Impl>(root, options, ctx)));
  Status s = w->impl_->lock();
  // Under the root's lock: what killed writers left in the root (the marker's
  // temporaries went with the lock, store/root_writer.h).
  if (s.is_ok()) store::remove_abandoned_stream_temps(root, ctx.warn);
  if (s.is_ok()) s = w->impl_->open_streams();
  if (!s.is_ok()) {
    w->impl_->abort();
    return s;
  }
  return w;
}

const std::string& DatasetWriter::root() const { return impl_->root_; }
uint64_t DatasetWriter::committed_length() const { return impl_->committed_length(); }
const RootState& DatasetWriter::found() const { return impl_->found_; }
bool DatasetWriter::marked() const { return impl_->marked_; }
bool DatasetWriter::published() const { return impl_->published_; }
std::vector<std::string> DatasetWriter::stream_names() const { return impl_->stream_names(); }
StoreWriter* DatasetWriter::find(const std::string& name) {
  Impl::Stream* s = impl_->find_stream(name);
  return s == nullptr ? nullptr : s->writer.get();
}
Result<std::vector<StreamCut>> DatasetWriter::recover() { return impl_->recover(); }
Result<StoreWriter*> DatasetWriter::stream(const std::string& name, const CreateOptions& create) {
  return impl_->stream(name, create);
}
Status DatasetWriter::publish() { return impl_->publish(); }
Status DatasetWriter::close() { return impl_->close(); }
void DatasetWriter::abort(std::vector<std::string>* warnings) { impl_->abort(warnings); }

uint64_t DatasetWriter::Impl::committed_length() const { return marker_ ? marker_->state().length : found_.length; }

std::vector<std::string> DatasetWriter::Impl::stream_names() const {
  std::vector<std::string> names;
  for (const auto& s : streams_) names.push_back(s->name);
  return names;
}

DatasetWriter::Impl::Stream* DatasetWriter::Impl::find_stream(const std::string& name) {
  for (auto& s : streams_)
    if (s->name == name) return s.get();
  return nullptr;
}

// With adopt: every store's writer lock, equal lengths, then the marker.
Status DatasetWriter::Impl::adopt(const std::vector<std::string>& stores) {
  std::string lengths;
  bool agree = true;
  for (const auto& name : stores) {
    auto s = std::make_unique<Stream>();
    s->name = name;
    ZREC_ASSIGN_OR_RETURN(s->writer, StoreWriter::open(join_path(root_, name), options_.writer, ctx_));
    lengths += (lengths.empty() ? "" : ", ") + name + " " + std::to_string(s->writer->published_length());
    agree =
        agree && (streams_.empty() || s->writer->published_length() == streams_.front()->writer->published_length());
    streams_.push_back(std::move(s));
  }
  if (!agree)
    return invalid_argument("cannot adopt '" + root_ + "' as a root: its stores hold different numbers of records (" +
                            lengths +
                            "), and a root's streams hold one record per sample; nothing was changed (zrec does not "
                            "choose records to drop)");
  const RootState state{streams_.front()->writer->published_length(), stream_names()};
  ZREC_ASSIGN_OR_RETURN(marker_, RootWriter::create(root_, state));
  marked_ = true;
  found_ = state;
  return Status::ok();
}

// The root directory and its lock: a marked root's marker, or a new marker in a
// directory that holds no store yet (or, with adopt, in one of stores of one length).
Status DatasetWriter::Impl::lock() {
  for (int attempt = 0;; ++attempt) {
    if (attempt == 100)
      return Status(StatusCode::kBusy, "root '" + root_ + "' keeps changing under other writers (100 tries)");
    struct stat st;
    if (::stat(root_.c_str(), &st) != 0) {
      if (errno != ENOENT) return io::errno_status(errno, "cannot open", root_);
      if (::mkdir(root_.c_str(), 0755) == 0) dir_created_ = true;
      else if (errno != EEXIST) return io::errno_status(errno, "cannot create", root_);
      continue;
    }
    if (!S_ISDIR(st.st_mode)) return invalid_argument("'" + root_ + "' is not a directory");
    if (is_store_dir(root_))
      return invalid_argument("'" + root_ + "' is a store, not a directory of named streams (ROOT/<name>)");
    auto opened = RootWriter::open(root_, ctx_.wait, ctx_.control.cancel);
    if (opened.is_ok()) {
      marker_ = std::move(opened).value();
      found_ = marker_->state();
      return Status::ok();
    }
    if (opened.status().code() != StatusCode::kNotFound) return opened.status();
    // No marker: a new root, or a directory that is none.
    const std::vector<std::string> stores = child_stores(root_);
    if (!stores.empty()) {
      if (!options_.adopt)
        return invalid_argument("'" + root_ + "' holds stores (" + join_names(stores) + ") but no " + kRootMarkerFile +
                                " marker: it is no dataset of named streams, and nothing in it "
                                "is changed unless its stores are adopted as its streams");
      ZREC_RETURN_IF_ERROR(check_root_streams(root_, stores));
      const Status made = adopt(stores);
      if (made.code() != StatusCode::kAlreadyExists) return made;
      streams_.clear();  // marked meanwhile: open that one (the writers let their locks go)
      continue;
    }
    auto created = RootWriter::create(root_, RootState{});
    if (created.is_ok()) {
      marker_ = std::move(created).value();
      marked_ = true;
      // A directory this session made is durable in its parent before anything lands in it.
      if (dir_created_) return io::sync_directory(parent_of(root_));
      return Status::ok();
    }
    // Marked meanwhile (open that one), or the directory went away (make it again).
    if (created.status().code() != StatusCode::kAlreadyExists && created.status().code() != StatusCode::kNotFound)
      return created.status();
  }
}

// Every stream's writer lock, in name order, then the checks (nothing changed yet): the
// rule of store/stream_alignment.h, where a kLong stream is what recover() cuts back.
Status DatasetWriter::Impl::open_streams() {
  const uint64_t committed = found_.length;
  const std::vector<std::string> found = child_stores(root_);
  ZREC_RETURN_IF_ERROR(check_root_streams(root_, found));
  // Recovery cuts streams back: never through a link into a store outside the root.
  // (The rule's kLayout, refused with check_root_stream's own status.)
  for (const auto& name : found) ZREC_RETURN_IF_ERROR(check_root_stream(root_, name));
  // Before any store is opened: every listed stream is there (the lengths come next).
  for (const StreamProblem& p : store::stream_alignment(root_, found_, found, {}))
    if (p.kind == StreamProblem::Kind::kMissing)
      return invalid_argument("root '" + root_ + "' lists the stream '" + p.stream + "' in " + kRootMarkerFile +
                              ", but '" + join_path(root_, p.stream) + "' is not a store; nothing was changed");
  for (const auto& name : found) {
    if (find_stream(name) != nullptr) continue;  // adopted
    auto s = std::make_unique<Stream>();
    s->name = name;
    ZREC_ASSIGN_OR_RETURN(s->writer, StoreWriter::open(join_path(root_, name), options_.writer, ctx_));
    streams_.push_back(std::move(s));
  }
  std::map<std::string, uint64_t> lengths;
  for (const auto& s : streams_) lengths[s->name] = s->writer->published_length();
  const std::vector<StreamProblem> problems = store::stream_alignment(root_, found_, found, lengths);
  for (const auto& s : streams_) {  // the first stream in name order that breaks the rule
    const auto p = std::find_if(problems.begin(), problems.end(), [&](const StreamProblem& q) {
      return q.stream == s->name && (q.kind == StreamProblem::Kind::kShort || q.kind == StreamProblem::Kind::kUnlisted);
    });
    if (p == problems.end()) continue;
    const uint64_t n = lengths[s->name];
    const std::string path = join_path(root_, s->name);
    if (p->kind == StreamProblem::Kind::kShort)
      return invalid_argument("stream '" + path + "' holds " + std::to_string(n) + " records, fewer than the " +
                              std::to_string(committed) + " samples root '" + root_ +
                              "' committed: the stream lost records; nothing was changed");
    // With adopt, a store of exactly the committed samples joins the streams (listed by
    // the next publish): a stream made later, e.g. labels computed from the data.
    if (options_.adopt && n == committed) continue;
    if (options_.adopt)
      return invalid_argument("'" + path + "' holds " + std::to_string(n) + " records, but root '" + root_ +
                              "' committed " + std::to_string(committed) +
                              " samples: a store joins a root's streams holding exactly one record per sample; "
                              "nothing was changed");
    return invalid_argument("'" + path + "' is a store in root '" + root_ + "' but not one of its streams (" +
                            kRootMarkerFile + " lists " +
                            (found_.streams.empty() ? std::string("none") : join_names(found_.streams)) +
                            "); it is left alone: move it out of the root, or adopt it if it holds one record "
                            "per sample; nothing was changed");
  }
  return Status::ok();
}

Result<std::vector<StreamCut>> DatasetWriter::Impl::recover() {
  std::vector<StreamCut> cuts;
  const uint64_t committed = committed_length();
  for (auto& s : streams_) {
    const uint64_t n = s->writer->published_length();
    if (n <= committed) continue;
    ZREC_RETURN_IF_ERROR(s->writer->cut_back(committed));
    cuts.push_back({s->name, n});
  }
  recovered_ = true;
  return cuts;
}

Result<StoreWriter*> DatasetWriter::Impl::stream(const std::string& name, const CreateOptions& create) {
  if (Stream* s = find_stream(name)) return s->writer.get();
  if (!recovered_)
    return invalid_argument("DatasetWriter of root '" + root_ + "': stream('" + name +
                            "') creates a stream, which needs recover() first (it cuts the streams back to the "
                            "committed count); nothing was changed");
  if (const std::string why = stream_name_problem(name); !why.empty())
    return invalid_argument("'" + name + "' cannot name a stream: " + why + " (" + kStreamNameRule + ")");
  if (const uint64_t committed = committed_length(); committed > 0)
    return invalid_argument("root '" + root_ + "' holds " + std::to_string(committed) + " samples in streams " +
                            join_names(stream_names()) + "; a new stream '" + name + "' would not line up with them");
  auto s = std::make_unique<Stream>();
  s->name = name;
  const std::string path = join_path(root_, name);
  ZREC_RETURN_IF_ERROR(create_store(path, create, ctx_));
  s->created = true;
  // Kept before the writer opens, so that abort() takes the store back whatever happens.
  Stream* added = s.get();
  streams_.insert(std::upper_bound(streams_.begin(), streams_.end(), name,
                                   [](const std::string& n, const std::unique_ptr<Stream>& t) { return n < t->name; }),
                  std::move(s));
  ZREC_ASSIGN_OR_RETURN(added->writer, StoreWriter::open(path, options_.writer, ctx_));
  return added->writer.get();
}

Status DatasetWriter::Impl::publish() {
  if (!recovered_)
    return invalid_argument("DatasetWriter of root '" + root_ +
                            "': publish() needs recover() first (it cuts the streams back to the committed count); "
                            "nothing was published");
  if (!marker_)
    return invalid_argument("DatasetWriter of root '" + root_ +
                            "': publish() after the session was closed or aborted; nothing was published");
  uint64_t length = 0;
  std::string lengths;
  bool agree = true;
  for (const auto& s : streams_) {
    // A stream whose writer did not open: stream() failed, which ends the session.
    if (!s->writer)
      return invalid_argument("DatasetWriter of root '" + root_ + "': stream '" + s->name +
                              "' failed to open, so the session can only be aborted; nothing was published");
    lengths += (lengths.empty() ? "" : ", ") + s->name + " " + std::to_string(s->writer->length());
    if (&s == &streams_.front()) length = s->writer->length();
    agree = agree && s->writer->length() == length;
  }
  if (!agree)
    return invalid_argument("cannot publish root '" + root_ + "': its streams hold different numbers of records (" +
                            lengths + "); every sample has one record in each stream");
  const std::vector<std::string> names = stream_names();
  // Streams this session added are listed before anything is published in them.
  if (names != marker_->state().streams) ZREC_RETURN_IF_ERROR(marker_->commit({marker_->state().length, names}));
  published_ = true;
  for (auto& s : streams_) ZREC_RETURN_IF_ERROR(s->writer->publish());
  return marker_->commit({length, names});
}

Status DatasetWriter::Impl::close() {
  Status s = publish();
  for (auto& st : streams_) {
    if (!s.is_ok()) break;
    s = st->writer->close();
  }
  if (!s.is_ok()) {
    abort();
    return s;
  }
  done_ = true;  // the writers stay (closed) for their figures; the lock goes with this
  return Status::ok();
}

void DatasetWriter::Impl::abort(std::vector<std::string>* warnings) {
  auto warn = [&](const std::string& message) {
    if (warnings != nullptr) warnings->push_back(message);
  };
  done_ = true;
  for (auto& s : streams_)
    if (s->writer) s->writer->abort();  // lets each lock go
  if (published_) {
    streams_.clear();
    marker_.reset();
    return;
  }
  // Nothing published: what this session created goes again.
  for (auto& s : streams_) {
    if (!s->created) continue;
    s->writer.reset();
    const std::string path = join_path(root_, s->name);
    const Status removed = remove_empty_store(path);
    if (!removed.is_ok()) warn("left the stream '" + path + "' this run created: " + removed.message());
  }
  streams_.clear();
  if (marker_) {
    const Status s = marked_ ? marker_->remove() : marker_->commit(found_);
    if (!s.is_ok()) warn(s.message());
    marker_.reset();
  }
  if (dir_created_ && ::rmdir(root_.c_str()) != 0 && errno != ENOTEMPTY && errno != EEXIST)
    warn("left the directory '" + root_ + "' this run created: " + std::strerror(errno));
}

}  // namespace zrec
