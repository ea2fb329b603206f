// Catalog and StoreLease (see view_catalog.h).
#include "cli/view/view_catalog.h"

#include <sys/stat.h>

#include <algorithm>

#include "zrec/dataset.h"
#include "zrec/remote.h"

#include "cli/formats/path_name.h"

namespace zrec::cli::view {

struct StoreLease::Pool {
  std::string dir;
  size_t capacity = 1;
  Context ctx;  // lanes, remote settings; no lock wait; a snapshot while a writer appends
  std::mutex mutex;
  std::condition_variable returned;
  struct Idle {
    std::unique_ptr<Store> store;
    uint64_t generation;
    std::chrono::steady_clock::time_point since;
  };
  std::vector<Idle> idle;   // guarded by mutex
  size_t out = 0;           // leases held; guarded by mutex
  uint64_t generation = 0;  // guarded by mutex; refresh() bumps it

  void put_back(std::unique_ptr<Store> store, uint64_t store_generation) {
    std::unique_ptr<Store> stale;  // closed outside the lock
    {
      std::lock_guard<std::mutex> lock(mutex);
      --out;
      if (store_generation == generation)
        idle.push_back({std::move(store), store_generation, std::chrono::steady_clock::now()});
      else stale = std::move(store);
    }
    returned.notify_one();
  }
};

StoreLease::StoreLease(StoreLease&& other) noexcept
    : pool_(std::exchange(other.pool_, nullptr)), store_(std::move(other.store_)), generation_(other.generation_) {}

StoreLease::~StoreLease() {
  if (pool_ != nullptr && store_ != nullptr) pool_->put_back(std::move(store_), generation_);
}

Result<std::unique_ptr<Catalog>> Catalog::open(const std::vector<std::string>& paths,
                                               const std::vector<std::string>& keys, size_t instances,
                                               const Context& ctx) {
  std::unique_ptr<Catalog> c(new Catalog());
  c->lanes_ = ctx.lanes;
  Context opening = ctx;
  opening.wait = {};
  opening.snapshot_if_busy = true;
  for (size_t i = 0; i < paths.size(); ++i) {
    ViewPath p;
    p.path = paths[i];
    if (is_store_dir(p.path, ctx)) {
      p.streams.push_back({base_name(p.path), p.path});
    } else {
      struct stat st;
      if (!is_url(p.path) && ::stat(p.path.c_str(), &st) != 0) return not_found("'" + p.path + "' does not exist");
      if (!is_url(p.path) && !S_ISDIR(st.st_mode))
        return not_found("'" + p.path + "' is not a zrecord store and holds none");
      p.root = true;
      ZREC_ASSIGN_OR_RETURN(const Dataset dataset, Dataset::open(p.path, {}, ctx));
      for (const std::string& name : dataset.stores())
        if (!name.starts_with('.')) p.streams.push_back({name, join_path(p.path, name)});
      if (p.streams.empty()) return not_found("'" + redact_url(p.path) + "' is not a zrecord store and holds none");
    }
    if (i < keys.size() && !keys[i].empty()) {
      ZREC_ASSIGN_OR_RETURN(p.keys, KeyIndex::open(keys[i]));
    } else if (p.root) {
      for (size_t s = 0; s < p.streams.size(); ++s)
        if (p.streams[s].name == kKeyStream) p.key_stream = s;
    }
    c->pools_.emplace_back();
    for (const ViewStream& s : p.streams) {
      auto pool = std::make_unique<StoreLease::Pool>();
      pool->dir = s.dir;
      pool->capacity = std::max<size_t>(1, instances);
      pool->ctx = opening;
      c->pools_.back().push_back(std::move(pool));
    }
    c->paths_.push_back(std::move(p));
  }
  // Each store once now: a store that cannot be read stops the command before it serves.
  for (size_t i = 0; i < c->paths_.size(); ++i)
    for (size_t j = 0; j < c->paths_[i].streams.size(); ++j) ZREC_RETURN_IF_ERROR(c->lease(i, j).status());
  c->sweeper_ = start_background_thread([raw = c.get()] { raw->sweep_loop(); });
  return c;
}

Catalog::~Catalog() {
  {
    std::lock_guard<std::mutex> lock(sweep_mutex_);
    stopping_ = true;
  }
  sweep_wake_.notify_all();
  if (sweeper_.joinable()) sweeper_.join();
}

Result<StoreLease> Catalog::lease(size_t path, size_t stream) {
  StoreLease::Pool& pool = *pools_[path][stream];
  uint64_t generation;
  {
    std::unique_lock<std::mutex> lock(pool.mutex);
    pool.returned.wait(lock, [&] { return pool.out < pool.capacity; });
    ++pool.out;
    generation = pool.generation;
    std::erase_if(pool.idle, [&](const StoreLease::Pool::Idle& i) { return i.generation != generation; });
    if (!pool.idle.empty()) {
      std::unique_ptr<Store> store = std::move(pool.idle.back().store);
      pool.idle.pop_back();
      return StoreLease(&pool, std::move(store), generation);
    }
  }
  // Opened outside the pool's lock: other leases on this stream go on meanwhile.
  auto store = Store::open(pool.dir, {}, pool.ctx);
  if (!store.is_ok()) {
    {
      std::lock_guard<std::mutex> lock(pool.mutex);
      --pool.out;
    }
    pool.returned.notify_one();
    return store.status();
  }
  return StoreLease(&pool, std::move(*store), generation);
}

void Catalog::refresh(size_t path) {
  for (auto& pool : pools_[path]) {
    std::vector<StoreLease::Pool::Idle> closing;
    {
      std::lock_guard<std::mutex> lock(pool->mutex);
      ++pool->generation;
      closing.swap(pool->idle);
    }
  }
}

void Catalog::sweep_loop() {
  std::unique_lock<std::mutex> lock(sweep_mutex_);
  while (!stopping_) {
    sweep_wake_.wait_for(lock, kIdleClose / 4);
    const auto cutoff = std::chrono::steady_clock::now() - kIdleClose;
    for (auto& per_path : pools_) {
      for (auto& pool : per_path) {
        std::vector<StoreLease::Pool::Idle> closing;  // closed (lock released) outside the pool's lock
        {
          std::lock_guard<std::mutex> pool_lock(pool->mutex);
          auto old = std::stable_partition(pool->idle.begin(), pool->idle.end(),
                                           [&](const StoreLease::Pool::Idle& i) { return i.since > cutoff; });
          std::move(old, pool->idle.end(), std::back_inserter(closing));
          pool->idle.erase(old, pool->idle.end());
        }
      }
    }
  }
}

}  // namespace zrec::cli::view
