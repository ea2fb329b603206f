// copy_to_local (see sync_local.h).
#include "cli/sync/sync_local.h"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "zrec/dataset.h"
#include "zrec/lanes.h"
#include "zrec/remote.h"

#include "zrec_support/file.h"

namespace zrec::cli {

namespace {

constexpr const char* kManifest = ".zrec-sync-manifest";

std::string parent_of(const std::string& path) {
  std::string p = path;
  while (p.size() > 1 && p.back() == '/') p.pop_back();
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? "." : slash == 0 ? "/" : p.substr(0, slash);
}

Result<std::unique_ptr<const io::Readable>> open_source(const std::string& path, const GlobalOptions& global,
                                                        size_t lanes = 1) {
  return io::open_for_reading(path, lanes, global.transfer_context());
}

// rel -> size, the files a killed run wrote whole.
std::map<std::string, uint64_t> read_manifest(const std::string& temp) {
  std::map<std::string, uint64_t> done;
  std::ifstream in(join_path(temp, kManifest));
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    uint64_t size = 0;
    std::string rel;
    if (fields >> size >> rel) done[rel] = size;
  }
  return done;
}

// Copies [0, size) of `from` into the new file `to`, synced: 8 MiB pieces on the lanes at
// once, so a remote source has as many ranges in flight as lanes (one connection each),
// where one request at a time would wait out every round trip.
Status copy_bytes(const io::Readable& from, uint64_t size, const std::string& to, Lanes& lanes,
                  LocalCopyCounts& counts) {
  ZREC_ASSIGN_OR_RETURN(const io::File out, io::File::open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  constexpr uint64_t kPiece = 8 << 20;
  std::vector<std::vector<uint8_t>> buffers(lanes.count());
  ZREC_RETURN_IF_ERROR(lanes.run((size + kPiece - 1) / kPiece, [&](size_t lane, size_t piece) -> Status {
    const uint64_t at = piece * kPiece;
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kPiece, size - at));
    std::vector<uint8_t>& buf = buffers[lane];
    buf.resize(kPiece);
    ZREC_RETURN_IF_ERROR(from.pread_exact(buf.data(), n, at));
    return out.pwrite_all(buf.data(), n, at);
  }));
  counts.bytes += size;
  return out.sync();
}

Status write_snapshot(const std::string& bytes, const std::string& to, LocalCopyCounts& counts) {
  ZREC_ASSIGN_OR_RETURN(const io::File out, io::File::open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  ZREC_RETURN_IF_ERROR(out.pwrite_all(bytes.data(), bytes.size(), 0));
  counts.bytes += bytes.size();
  return out.sync();
}

}  // namespace

std::string sync_temp_sibling(const std::string& dst) {
  std::string d = dst;
  while (d.size() > 1 && d.back() == '/') d.pop_back();
  const size_t slash = d.rfind('/');
  const std::string name = slash == std::string::npos ? d : d.substr(slash + 1);
  return join_path(parent_of(d), "." + name + ".zrec-sync");
}

Status copy_to_local(const SyncSource& src, const std::string& dst, bool force, const GlobalOptions& global,
                     LocalCopyCounts& counts) {
  struct stat st {};
  const bool exists = ::lstat(dst.c_str(), &st) == 0;
  if (exists && !force)
    return Status(StatusCode::kAlreadyExists,
                  "'" + dst + "' already exists: sync builds a new local copy (-f replaces it, in one rename)");
  if (exists && !S_ISDIR(st.st_mode))
    return invalid_argument("'" + dst + "' is not a directory; refused to replace it");
  const std::string temp = sync_temp_sibling(dst);
  if (::mkdir(temp.c_str(), 0755) != 0 && errno != EEXIST) return io::errno_status(errno, "cannot create", temp);
  const std::map<std::string, uint64_t> done = read_manifest(temp);
  for (const std::string& name : src.streams)
    if (::mkdir(join_path(temp, name).c_str(), 0755) != 0 && errno != EEXIST)
      return io::errno_status(errno, "cannot create", join_path(temp, name));
  // The marker and each meta.zr are read before any data file (the reverse of the publish
  // order): a data file only grows, so the copy holds every record they point to.
  std::vector<std::shared_ptr<std::string>> snapshots(src.files.size());
  for (size_t i = src.files.size(); i-- > 0;) {
    if (src.files[i].data) continue;
    ZREC_ASSIGN_OR_RETURN(const auto f, open_source(join_path(src.path, src.files[i].rel), global));
    ZREC_ASSIGN_OR_RETURN(const uint64_t size, f->size());
    snapshots[i] = std::make_shared<std::string>(size, '\0');
    ZREC_RETURN_IF_ERROR(f->pread_exact(snapshots[i]->data(), size, 0));
  }
  const std::shared_ptr<Lanes> lanes = global.read_context(src.path).lanes;
  std::ofstream manifest(join_path(temp, kManifest), std::ios::app);
  for (size_t i = 0; i < src.files.size(); ++i) {
    const SyncFile& file = src.files[i];
    const std::string to = join_path(temp, file.rel);
    if (snapshots[i]) {
      ZREC_RETURN_IF_ERROR(write_snapshot(*snapshots[i], to, counts));
      ++counts.files;
      continue;
    }
    ZREC_ASSIGN_OR_RETURN(const auto from, open_source(join_path(src.path, file.rel), global, lanes->count()));
    ZREC_ASSIGN_OR_RETURN(const uint64_t size, from->size());
    struct stat have {};
    if (const auto it = done.find(file.rel); it != done.end() && it->second == size && ::stat(to.c_str(), &have) == 0 &&
                                             static_cast<uint64_t>(have.st_size) == size) {
      ++counts.skipped;
      continue;
    }
    ZREC_RETURN_IF_ERROR(copy_bytes(*from, size, to, *lanes, counts));
    ++counts.files;
    manifest << size << ' ' << file.rel << '\n' << std::flush;
  }
  manifest.close();
  // The copy is checked as the source was before it is put in place.
  GlobalOptions local_only;
  ZREC_RETURN_IF_ERROR(examine_source(temp, false, local_only).status().with_context("the copy in '" + temp + "'"));
  if (::unlink(join_path(temp, kManifest).c_str()) != 0) return io::errno_status(errno, "cannot remove", kManifest);
  for (const std::string& name : src.streams) ZREC_RETURN_IF_ERROR(io::sync_directory(join_path(temp, name)));
  ZREC_RETURN_IF_ERROR(io::sync_directory(temp));
  if (exists) {
    if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, dst.c_str(), RENAME_EXCHANGE) != 0)
      return io::errno_status(errno, "cannot put the copy in place of", dst);
    std::error_code ec;
    std::filesystem::remove_all(std::filesystem::absolute(temp), ec);  // the old copy, now at the sibling's name
    if (ec) return io_error("cannot remove the old copy '" + temp + "': " + ec.message());
  } else if (::rename(temp.c_str(), dst.c_str()) != 0) {
    return io::errno_status(errno, "cannot put the copy in place at", dst);
  }
  return io::sync_directory(parent_of(dst));
}

}  // namespace zrec::cli
