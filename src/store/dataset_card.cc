// The dataset card's file (zrec/dataset.h, "the dataset card"): read whole from a
// directory or a URL, replaced atomically under the writer's lock.
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "zrec/dataset.h"
#include "zrec/remote.h"

#include "io/location.h"
#include "io/store_lock.h"
#include "store/root_writer.h"
#include "store/store_files.h"
#include "zrec_support/file.h"

namespace zrec {

namespace {

// A temporary card is this prefix and mkstemp's six characters; one left by a killed
// edit is removed by the next (it runs under the same lock, so none is in use).
constexpr const char* kCardTempPrefix = ".zrec-card.json.tmp-";

Status too_large(const std::string& path, uint64_t size) {
  return invalid_argument("card '" + redact_url(path) + "' holds " + std::to_string(size) + " bytes, over the " +
                          std::to_string(kMaxCardBytes) + " a card may hold");
}

Result<std::string> read_whole(const io::Readable& f, const std::string& path) {
  ZREC_ASSIGN_OR_RETURN(const uint64_t size, f.size());
  if (size > kMaxCardBytes) return too_large(path, size);
  std::string bytes(size, '\0');
  ZREC_RETURN_IF_ERROR(f.pread_exact(bytes.data(), bytes.size(), 0));
  return bytes;
}

void remove_stale_temporaries(const std::string& dir) {
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return;
  const std::string prefix = kCardTempPrefix;
  while (dirent* e = ::readdir(d)) {
    const std::string name = e->d_name;
    if (name.size() == prefix.size() + 6 && name.starts_with(prefix)) ::unlink(join_path(dir, name).c_str());
  }
  ::closedir(d);
}

// The hold that keeps other writers out while the card changes: the root's marker or
// the store's meta.zr, exclusively locked.
struct WriterHold {
  std::unique_ptr<RootWriter> root;
  io::File meta;
};

Result<WriterHold> hold_writer_lock(const std::string& path, const Context& ctx) {
  WriterHold hold;
  ZREC_ASSIGN_OR_RETURN(const std::optional<RootState> marker, read_root_marker(path));
  if (marker) {
    ZREC_ASSIGN_OR_RETURN(hold.root, RootWriter::open(path, ctx.wait, ctx.control.cancel));
    return hold;
  }
  if (!is_store_dir(path))
    return invalid_argument("'" + path + "' is neither a store (no " + std::string(kMetaFile) + ") nor a root (no " +
                            kRootMarkerFile + " marker): a card goes with one of them");
  ZREC_ASSIGN_OR_RETURN(hold.meta, io::File::open(join_path(path, kMetaFile), O_RDONLY));
  ZREC_RETURN_IF_ERROR(io::lock_store(hold.meta, io::LockMode::kExclusive, ctx.wait, ctx.control.cancel, path));
  return hold;
}

Status replace_card(const std::string& dir, const std::string& bytes) {
  std::string temp = join_path(dir, std::string(kCardTempPrefix) + "XXXXXX");
  const int fd = ::mkostemp(temp.data(), O_CLOEXEC);
  if (fd < 0) return io::errno_status(errno, "cannot create", temp);
  io::File f(fd, temp);
  Status s = f.pwrite_all(bytes.data(), bytes.size(), 0);
  if (s.is_ok()) s = f.sync();
  const std::string card = join_path(dir, kCardFile);
  if (s.is_ok() && ::fchmod(fd, 0644) != 0) s = io::errno_status(errno, "cannot set the mode of", temp);
  if (s.is_ok() && ::rename(temp.c_str(), card.c_str()) != 0) s = io::errno_status(errno, "cannot rename", temp);
  if (!s.is_ok()) {
    ::unlink(temp.c_str());
    return s;
  }
  return io::sync_directory(dir);
}

}  // namespace

Result<std::optional<std::string>> read_card(const std::string& path, const Context& ctx) {
  const io::Location card = io::Location(path).child(kCardFile);
  const auto not_regular = [](const std::string& at) {
    return invalid_argument("card '" + at + "' is not a regular file");
  };
  ZREC_ASSIGN_OR_RETURN(const auto f, card.open_if_present(uint64_t{1} << 20, ctx, not_regular));
  if (!f) return std::optional<std::string>();
  ZREC_ASSIGN_OR_RETURN(std::string bytes, read_whole(*f, card.shown()));
  return std::optional<std::string>(std::move(bytes));
}

Status write_card(const std::string& path, const std::optional<std::string>& bytes, const Context& ctx) {
  ZREC_RETURN_IF_ERROR(io::Location(path).local_path("stores' and roots' cards").status());
  if (bytes && bytes->size() > kMaxCardBytes) return too_large(join_path(path, kCardFile), bytes->size());
  ZREC_ASSIGN_OR_RETURN(const WriterHold hold, hold_writer_lock(path, ctx));
  remove_stale_temporaries(path);
  if (bytes) return replace_card(path, *bytes);
  const std::string card = join_path(path, kCardFile);
  if (::unlink(card.c_str()) != 0 && errno != ENOENT) return io::errno_status(errno, "cannot remove", card);
  return io::sync_directory(path);
}

}  // namespace zrec
