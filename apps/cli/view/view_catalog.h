// The stores a `zrec view` serves: exactly the PATHs of its command line, addressed by
// their index there (no path ever comes from a URL). A PATH is one store, or a root of
// named streams (a directory whose subdirectories are stores, docs/format.md §1), whose
// streams are addressed by their index in name order.
//
// Stores are opened on demand and let go of when idle: a lease holds one open Store for
// one request; an instance unused for kIdleClose is closed by a background sweep, so a
// page left open in a browser does not keep a writer off the store (a reader's shared
// lock, docs/format.md §7) longer than that. Opening uses snapshot_if_busy: while a writer
// appends, the last published state is shown (and Store::writer_active() says so).
// refresh() makes the next lease open the store again, so a reload sees what was
// published since.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "zrec/context.h"
#include "zrec/lanes.h"
#include "zrec/status.h"
#include "zrec/store.h"

#include "cli/view/key_index.h"

namespace zrec::cli::view {

struct ViewStream {
  std::string name;  // the stream's directory name; for a PATH that is a store, its base name
  std::string dir;   // the store directory
};

struct ViewPath {
  std::string path;   // as given on the command line
  bool root = false;  // a root of named streams (else: one store)
  std::vector<ViewStream> streams;
  std::unique_ptr<KeyIndex> keys;  // --keys for this PATH, or null
  // Without --keys, a root's __key__ stream (append-tar --keys-stream): its records are
  // the samples' keys.
  std::optional<size_t> key_stream;
  bool has_keys() const { return keys != nullptr || key_stream.has_value(); }
};

class Catalog;

// One open Store for the duration of a request. Move-only; returns the store on destruction.
class StoreLease {
 public:
  StoreLease(StoreLease&& other) noexcept;
  StoreLease& operator=(StoreLease&&) = delete;
  ~StoreLease();
  Store& operator*() const { return *store_; }
  Store* operator->() const { return store_.get(); }

 private:
  friend class Catalog;
  struct Pool;
  StoreLease(Pool* pool, std::unique_ptr<Store> store, uint64_t generation)
      : pool_(pool), store_(std::move(store)), generation_(generation) {}
  Pool* pool_;
  std::unique_ptr<Store> store_;
  uint64_t generation_;
};

class Catalog {
 public:
  static constexpr std::chrono::milliseconds kIdleClose{2000};

  // Checks each PATH (a store, or a directory holding stores: "'P' is not a zrecord store
  // and holds none" otherwise) and opens each store once, so that a broken one is
  // reported before serving. keys[i] (when given and not empty) is the --keys file of
  // PATH i. `instances`: open Stores one stream may have at once (concurrent requests on
  // it); ctx: the executor every Store shares and how URLs are read (Stores open
  // without waiting for a lock, as a snapshot while a writer appends).
  static Result<std::unique_ptr<Catalog>> open(const std::vector<std::string>& paths,
                                               const std::vector<std::string>& keys, size_t instances,
                                               const Context& ctx);
  ~Catalog();

  const std::vector<ViewPath>& paths() const { return paths_; }

  // A lease on stream `stream` of PATH `path` (both in range: the caller checks), waiting
  // while `instances` leases on it are out. Errors: Store::open's.
  Result<StoreLease> lease(size_t path, size_t stream);

  // The next leases on PATH `path` open its stores again (a new snapshot).
  void refresh(size_t path);

 private:
  Catalog() = default;
  void sweep_loop();

  std::vector<ViewPath> paths_;
  std::vector<std::vector<std::unique_ptr<StoreLease::Pool>>> pools_;  // [path][stream]
  std::shared_ptr<Lanes> lanes_;
  std::mutex sweep_mutex_;
  std::condition_variable sweep_wake_;
  bool stopping_ = false;
  std::thread sweeper_;
};

}  // namespace zrec::cli::view
