// Store round trips through the core API: every codec x shards {1, 3, 255} x lanes
// {1, 2, 4}, Dense and Ragged, windows and chunks smaller than records, physical
// order, reopen, abort and crash consistency (docs/format.md §5-§8).
#include "zrec/store.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "zrec/store_writer.h"

#include "testutil.h"

using namespace zrec;

namespace {

Schema ragged_schema(uint32_t ndim, const char* dtype = "|u1") {
  Schema s;
  s.dtype = parse_dtype(dtype).value();
  s.ndim = ndim;
  return s;
}

// Records held by the test: payload + dims, and the logical bytes a reader returns.
struct TestRecords {
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<std::vector<uint64_t>> dims;
  std::vector<RecordRef> refs() const {
    std::vector<RecordRef> r;
    for (size_t i = 0; i < payloads.size(); ++i)
      r.push_back({payloads[i].data(), payloads[i].size(), dims.empty() ? nullptr : dims[i].data()});
    return r;
  }
  std::vector<uint8_t> logical(size_t i) const {
    std::vector<uint8_t> out;
    if (!dims.empty()) {
      out.resize(8 * dims[i].size());
      std::memcpy(out.data(), dims[i].data(), out.size());
    }
    out.insert(out.end(), payloads[i].begin(), payloads[i].end());
    return out;
  }
};

TestRecords make_dense(uint64_t first, size_t n, size_t width) {
  TestRecords t;
  for (size_t i = 0; i < n; ++i) t.payloads.push_back(test::record_bytes(first + i, width));
  return t;
}

TestRecords make_ragged(uint64_t first, size_t n) {
  TestRecords t;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t id = first + i;
    std::vector<uint64_t> dims = {1 + id % 7, 1 + (id * 5) % 300};
    t.payloads.push_back(test::record_bytes(id, dims[0] * dims[1]));
    t.dims.push_back(dims);
  }
  return t;
}

std::vector<std::vector<uint8_t>> read_all(Store& store, uint64_t window_bytes = kDefaultWindowBytes) {
  std::vector<uint64_t> ids(store.length());
  std::iota(ids.begin(), ids.end(), 0);
  std::vector<std::vector<uint8_t>> out;
  REQUIRE_OK(store.scan(ids, window_bytes, [&](const Window& w) {
    for (size_t k = 0; k < w.ids.size(); ++k) out.emplace_back(w.data + w.offsets[k], w.data + w.offsets[k + 1]);
    return Status::ok();
  }));
  return out;
}

CreateOptions options_for(Schema schema, Codec codec, uint32_t shards) {
  CreateOptions o;
  o.schema = std::move(schema);
  o.codec = codec;
  o.data_shards = shards;
  if (codec == Codec::kZstdDict) o.dictionary = test::test_dictionary();
  return o;
}

}  // namespace

TEST_SUITE("store") {
  TEST_CASE("round trips records for every codec, shard count and lane count") {
    for (Codec codec : {Codec::kRaw, Codec::kZstd, Codec::kZstdDict}) {
      for (uint32_t shards : {1u, 3u, 255u}) {
        for (size_t lanes : {1u, 2u, 4u}) {
          for (bool dense : {true, false}) {
            CAPTURE(to_string(codec));
            CAPTURE(shards);
            CAPTURE(lanes);
            CAPTURE(dense);
            test::TempDir dir;
            const std::string path = dir / "s";
            REQUIRE_OK(
                create_store(path, options_for(dense ? test::dense_schema({5, 3}) : ragged_schema(2), codec, shards)));
            const TestRecords recs = dense ? make_dense(0, 300, 60) : make_ragged(0, 300);
            {
              // Tiny chunks so every window has many chunks racing for shard tails.
              auto w = StoreWriter::open(path, {.chunk_bytes = 256, .sync = false},
                                         {.lanes = std::make_shared<Lanes>(lanes)});
              REQUIRE_OK(w);
              auto refs = recs.refs();
              REQUIRE_OK(w.value()->append(std::span(refs).first(100)));
              REQUIRE_OK(w.value()->append(std::span(refs).subspan(100)));
              REQUIRE_OK(w.value()->close());
            }
            auto store = Store::open(path, {}, {.lanes = std::make_shared<Lanes>(lanes)});
            REQUIRE_OK(store);
            REQUIRE(store.value()->length() == 300);
            const auto got = read_all(*store.value(), 1000);  // windows of a few records
            for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == recs.logical(i));
            // Random-order gather with per-record RecordLoc reads.
            if (dense) {
              std::vector<uint64_t> ids = {299, 0, 150, 7, 7, 298};
              std::vector<uint8_t> dest(ids.size() * 60);
              REQUIRE_OK(store.value()->gather(ids, nullptr, dest.data()));
              for (size_t k = 0; k < ids.size(); ++k)
                REQUIRE(std::equal(dest.begin() + k * 60, dest.begin() + (k + 1) * 60, recs.payloads[ids[k]].begin()));
            }
          }
        }
      }
    }
  }

  TEST_CASE("records packed for a raw store (StoreWriter::pack) give the same files as records appended") {
    for (uint32_t ndim : {0u, 1u, 2u}) {
      CAPTURE(ndim);
      test::TempDir dir;
      const uint32_t shards = 3;
      TestRecords recs;
      if (ndim == 0) {
        recs = make_dense(0, 200, 12);
      } else {
        for (uint64_t id = 0; id < 200; ++id) {
          std::vector<uint64_t> dims = {1 + id % 90};
          if (ndim == 2) dims.push_back(1 + id % 3);
          recs.payloads.push_back(test::record_bytes(id, ndim == 2 ? dims[0] * dims[1] : dims[0]));
          recs.dims.push_back(dims);
        }
      }
      const Schema schema = ndim == 0 ? test::dense_schema({12}, "|u1") : ragged_schema(ndim);
      const std::vector<RecordRef> refs = recs.refs();
      const std::string appended = dir / "appended", packed = dir / "packed", two_steps = dir / "two_steps";
      for (const std::string& path : {appended, packed, two_steps}) {
        REQUIRE_OK(create_store(path, options_for(schema, Codec::kRaw, shards)));
        // One lane: with more, chunks race for a shard's tail and the files differ in order.
        auto w = StoreWriter::open(path, {.chunk_bytes = 512, .sync = false}, {.lanes = std::make_shared<Lanes>(1)});
        REQUIRE_OK(w);
        StoreWriter& writer = *w.value();
        // Batches of 101, 1 and 98 records: every shard starts a batch once.
        const std::pair<size_t, size_t> batches[] = {{0, 101}, {101, 1}, {102, 98}};
        if (path == two_steps) {
          // As append-stream overlaps them: each batch's payload on a thread of its
          // own while the batch before gets its table here.
          PackedRecords p[2];
          for (size_t b = 0; b < 3; ++b) {
            PackedRecords& now = p[b % 2];
            REQUIRE_OK(
                writer.pack(std::span(refs).subspan(batches[b].first, batches[b].second), batches[b].first, now));
            Status payload;
            std::thread t([&] { payload = writer.write_packed_payload(now); });
            if (b > 0) REQUIRE_OK(writer.write_packed_table(p[(b + 1) % 2]));
            t.join();
            REQUIRE_OK(payload);
          }
          REQUIRE_OK(writer.write_packed_table(p[0]));
        }
        for (const auto& [first, count] : batches) {
          const auto batch = std::span(refs).subspan(first, count);
          if (path == appended) {
            REQUIRE_OK(writer.append(batch));
          } else if (path == packed) {
            PackedRecords p;
            REQUIRE_OK(writer.pack(batch, first, p));
            CHECK(p.size() == count);
            REQUIRE_OK(writer.append_packed(p));
          }
        }
        REQUIRE_OK(writer.close());
      }
      for (const std::string& path : {packed, two_steps}) {
        for (const char* file : {"meta.zr", "data_0.zr", "data_1.zr", "data_2.zr"})
          CHECK(test::read_file(appended + "/" + file) == test::read_file(path + "/" + file));
        auto store = Store::open(path);
        REQUIRE_OK(store);
        const auto got = read_all(*store.value());
        REQUIRE(got.size() == 200);
        for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == recs.logical(i));
      }
    }
  }

  TEST_CASE("packed records are refused for a compressed store, out of place, or from another store") {
    test::TempDir dir;
    TestRecords recs = make_ragged(0, 10);
    const std::vector<RecordRef> refs = recs.refs();
    const std::string zstd = dir / "zstd", raw = dir / "raw", other = dir / "other";
    REQUIRE_OK(create_store(zstd, options_for(ragged_schema(2), Codec::kZstd, 2)));
    REQUIRE_OK(create_store(raw, options_for(ragged_schema(2), Codec::kRaw, 2)));
    REQUIRE_OK(create_store(other, options_for(ragged_schema(2), Codec::kRaw, 3)));
    PackedRecords p;
    {
      auto w = StoreWriter::open(zstd, {.sync = false});
      REQUIRE_OK(w);
      CHECK(w.value()->pack(refs, 0, p).message() == "records are packed for a raw store; this one's codec is zstd");
    }
    auto w = StoreWriter::open(raw, {.sync = false});
    REQUIRE_OK(w);
    StoreWriter& writer = *w.value();
    std::vector<RecordRef> bad = refs;
    bad[4].size = 0;
    CHECK(writer.pack(bad, 0, p).message() == "record 4 of this batch is empty (records must be nonempty)");
    REQUIRE_OK(writer.pack(refs, 3, p));
    CHECK(writer.append_packed(p).message() == "records packed as IDs 3... follow 0 records, not 3");
    CHECK(writer.length() == 0);
    {
      auto o = StoreWriter::open(other, {.sync = false});
      REQUIRE_OK(o);
      REQUIRE_OK(o.value()->pack(refs, 0, p));
    }
    CHECK(writer.append_packed(p).message() == "records were packed for another store (its data shard count differs)");
    REQUIRE_OK(writer.pack(refs, 0, p));
    CHECK(writer.write_packed_table(p).message() ==
          "the RecordLocs of records packed as IDs 0... are written after their payload and those of the 0 records "
          "before");
    REQUIRE_OK(writer.write_packed_payload(p));
    CHECK(writer.write_packed_payload(p).message() == "packed records were written already (pack them again)");
    // While the table is pending nothing else goes in, and nothing is published.
    const std::string pending = "records 0..9 have their payload written and not their RecordLocs (write_packed_table)";
    CHECK(writer.append(refs).message() == pending);
    CHECK(writer.publish().message() == pending);
    CHECK(writer.length() == 0);
    REQUIRE_OK(writer.write_packed_table(p));
    CHECK(writer.length() == 10);
    REQUIRE_OK(writer.close());
    auto store = Store::open(raw);
    REQUIRE_OK(store);
    const auto got = read_all(*store.value());
    REQUIRE(got.size() == 10);
    for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == recs.logical(i));
  }

  TEST_CASE("with several lanes the physical order inside a shard differs from logical order, reads stay exact") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, options_for(test::dense_schema({1000}, "|u1"), Codec::kRaw, 1)));
    const TestRecords recs = make_dense(0, 4000, 1000);
    auto w =
        StoreWriter::open(path, {.chunk_bytes = 1000}, {.lanes = std::make_shared<Lanes>(4)});  // one record per chunk
    REQUIRE_OK(w);
    auto refs = recs.refs();
    REQUIRE_OK(w.value()->append(refs));
    REQUIRE_OK(w.value()->close());
    auto store = Store::open(path);
    REQUIRE_OK(store);
    std::vector<RecordLoc> locs(4000);
    REQUIRE_OK(store.value()->read_locs(0, 4000, locs.data()));
    size_t out_of_order = 0;
    for (size_t i = 1; i < locs.size(); ++i) out_of_order += locs[i].offset < locs[i - 1].offset;
    WARN_MESSAGE(out_of_order > 0, "lanes happened to write in ID order this time");
    const auto got = read_all(*store.value());
    for (size_t i = 0; i < got.size(); ++i) REQUIRE(got[i] == recs.logical(i));
  }

  TEST_CASE("an empty store, a single record, and records larger than the window and chunk") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, options_for(ragged_schema(1, "<f8"), Codec::kZstd, 4)));
    {
      auto store = Store::open(path);
      REQUIRE_OK(store);
      CHECK(store.value()->length() == 0);
      CHECK(read_all(*store.value()).empty());
    }
    TestRecords big;
    for (uint64_t n : {1ull, 3ull << 20, 5ull}) {  // 24 MiB middle record
      big.payloads.push_back(test::record_bytes(n, n * 8));
      big.dims.push_back({n});
    }
    auto w = StoreWriter::open(path, {.chunk_bytes = 1 << 20}, {.lanes = std::make_shared<Lanes>(2)});
    REQUIRE_OK(w);
    auto refs = big.refs();
    REQUIRE_OK(w.value()->append(std::span(refs).first(1)));
    REQUIRE_OK(w.value()->publish());
    REQUIRE_OK(w.value()->append(std::span(refs).subspan(1)));
    REQUIRE_OK(w.value()->close());
    auto store = Store::open(path);
    REQUIRE_OK(store);
    const auto got = read_all(*store.value(), 1 << 20);  // window smaller than record 1
    REQUIRE(got.size() == 3);
    for (size_t i = 0; i < 3; ++i) CHECK(got[i] == big.logical(i));

    // gather() takes one offset per record plus the end: ids.size() offsets alone (the
    // starts) were read one past their end before.
    const std::vector<uint64_t> ids = {0, 2};
    std::vector<uint8_t> dest(big.logical(0).size() + big.logical(2).size());
    const std::vector<uint64_t> starts = {0, big.logical(0).size()};
    CHECK(store.value()->gather(ids, nullptr, dest.data(), starts).message() ==
          "gather of 2 records needs 3 destination offsets (each record's start, then the end), not 2");
    const std::vector<uint64_t> offsets = {0, big.logical(0).size(), dest.size()};
    REQUIRE_OK(store.value()->gather(ids, nullptr, dest.data(), offsets));
    CHECK(std::equal(dest.begin() + offsets[1], dest.end(), big.logical(2).begin()));
  }

  TEST_CASE("scan reads ahead within its budget, and an error or exception from fn stops it cleanly") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, options_for(test::dense_schema({1000}, "|u1"), Codec::kZstd, 3)));
    const TestRecords recs = make_dense(0, 500, 1000);
    {
      auto w = StoreWriter::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
      REQUIRE_OK(w);
      auto refs = recs.refs();
      REQUIRE_OK(w.value()->append(refs));
      REQUIRE_OK(w.value()->close());
    }
    auto store = Store::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
    REQUIRE_OK(store);
    std::vector<uint64_t> ids(500);
    std::iota(ids.begin(), ids.end(), 0);
    // Two windows are in flight at once, so each holds at most half the budget.
    size_t windows = 0, seen = 0;
    REQUIRE_OK(store.value()->scan(ids, 10000, [&](const Window& w) {
      CHECK(w.offsets.back() <= 5000);
      CHECK(w.first_index == seen);
      for (size_t k = 0; k < w.ids.size(); ++k)
        CHECK(std::vector<uint8_t>(w.data + w.offsets[k], w.data + w.offsets[k + 1]) == recs.logical(seen + k));
      seen += w.ids.size();
      ++windows;
      return Status::ok();
    }));
    CHECK(seen == 500);
    CHECK(windows == 100);
    // An error from fn ends the scan with that error, after no further call.
    size_t calls = 0;
    Status s = store.value()->scan(
        ids, 10000, [&](const Window&) { return ++calls == 3 ? invalid_argument("stop here") : Status::ok(); });
    CHECK(s.message() == "stop here");
    CHECK(calls == 3);
    // An exception from fn leaves scan (the reader thread is joined first) ...
    CHECK_THROWS_AS((void)store.value()->scan(
                        ids, 10000, [&](const Window&) -> Status { throw std::runtime_error("thrown by fn"); }),
                    std::runtime_error);
    // ... and the store reads on, exactly.
    const auto again = read_all(*store.value(), 4000);
    REQUIRE(again.size() == 500);
    for (size_t i = 0; i < again.size(); ++i) REQUIRE(again[i] == recs.logical(i));
  }

  TEST_CASE("a scalar Dense store holds one value per record") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, options_for(test::dense_schema({}, "<f4"), Codec::kRaw, 2)));
    const TestRecords recs = make_dense(0, 10, 4);
    auto w = StoreWriter::open(path);
    REQUIRE_OK(w);
    auto refs = recs.refs();
    REQUIRE_OK(w.value()->append(refs));
    REQUIRE_OK(w.value()->close());
    auto store = Store::open(path);
    REQUIRE_OK(store);
    CHECK(store.value()->schema().dense_width() == 4);
    const auto got = read_all(*store.value());
    for (size_t i = 0; i < 10; ++i) CHECK(got[i] == recs.logical(i));
  }

  TEST_CASE("check() refuses records that break the schema, before any I/O") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, options_for(test::dense_schema({4}), Codec::kZstd, 2)));
    auto w = StoreWriter::open(path);
    REQUIRE_OK(w);
    std::vector<uint8_t> good(16), bad(12);
    std::vector<RecordRef> refs = {{good.data(), 16, nullptr}, {bad.data(), 12, nullptr}};
    Status s = w.value()->append(refs);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message() == "record 1 of this batch has 12 bytes; a record of dense <i4 (4,) has 16");
    CHECK(w.value()->length() == 0);
    REQUIRE_OK(w.value()->append(std::span(refs).first(1)));  // the writer is still usable
    REQUIRE_OK(w.value()->close());
  }

  TEST_CASE("abort restores every file to its published bytes") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, options_for(ragged_schema(2), Codec::kZstd, 3)));
    const TestRecords recs = make_ragged(0, 50);
    auto refs = recs.refs();
    {
      auto w = StoreWriter::open(path);
      REQUIRE_OK(w);
      REQUIRE_OK(w.value()->append(std::span(refs).first(20)));
      REQUIRE_OK(w.value()->close());
    }
    std::vector<std::vector<uint8_t>> before;
    for (const char* f : {"meta.zr", "data_0.zr", "data_1.zr", "data_2.zr"})
      before.push_back(test::read_file(dir / ("s/" + std::string(f))));
    {
      auto w = StoreWriter::open(path);
      REQUIRE_OK(w);
      REQUIRE_OK(w.value()->append(std::span(refs).subspan(20)));
      w.value()->abort();
    }
    int i = 0;
    for (const char* f : {"meta.zr", "data_0.zr", "data_1.zr", "data_2.zr"})
      CHECK(test::read_file(dir / ("s/" + std::string(f))) == before[i++]);
  }

  TEST_CASE("a writer that dies unpublished leaves the last published state, the next writer overwrites leftovers") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, options_for(test::dense_schema({8}), Codec::kZstd, 4)));
    const TestRecords recs = make_dense(0, 200, 32);
    auto refs = recs.refs();
    const pid_t child = ::fork();
    REQUIRE(child >= 0);
    if (child == 0) {
      auto w = StoreWriter::open(path);
      if (!w.is_ok() || !w.value()->append(std::span(refs).first(50)).is_ok() || !w.value()->publish().is_ok() ||
          !w.value()->append(std::span(refs).subspan(50, 100)).is_ok())
        ::_exit(3);
      ::_exit(0);  // dies without close(): no publication, no abort
    }
    int status = 0;
    REQUIRE(::waitpid(child, &status, 0) == child);
    REQUIRE(WIFEXITED(status));
    REQUIRE(WEXITSTATUS(status) == 0);
    {
      auto store = Store::open(path);
      REQUIRE_OK(store);
      REQUIRE(store.value()->length() == 50);
      const auto got = read_all(*store.value());
      for (size_t i = 0; i < 50; ++i) REQUIRE(got[i] == recs.logical(i));
    }
    auto w = StoreWriter::open(path);
    REQUIRE_OK(w);
    REQUIRE(w.value()->length() == 50);
    REQUIRE_OK(w.value()->append(std::span(refs).subspan(50)));
    REQUIRE_OK(w.value()->close());
    auto store = Store::open(path);
    REQUIRE_OK(store);
    const auto got = read_all(*store.value());
    REQUIRE(got.size() == 200);
    for (size_t i = 0; i < 200; ++i) REQUIRE(got[i] == recs.logical(i));
  }

  TEST_CASE("a second writer or a reader while a writer holds the store is refused as locked") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, options_for(test::dense_schema({2}), Codec::kRaw, 1)));
    auto w = StoreWriter::open(path);
    REQUIRE_OK(w);
    // flock locks belong to open file descriptions, so a second open in-process conflicts too.
    auto w2 = StoreWriter::open(path);
    REQUIRE_FALSE(w2.is_ok());
    CHECK(w2.status().code() == StatusCode::kBusy);
    CHECK(w2.status().message() == "store '" + path + "' is locked by another process (a reader or writer)");
    auto r = Store::open(path);
    REQUIRE_FALSE(r.is_ok());
    CHECK(r.status().message() == "store '" + path + "' is locked by another process (a writer)");
    REQUIRE_OK(w.value()->close());
    CHECK(Store::open(path).is_ok());
  }

  TEST_CASE("create refuses a path that holds anything and leaves no temporary behind") {
    test::TempDir dir;
    test::write_file(dir / "file", {1});
    auto o = options_for(test::dense_schema({2}), Codec::kRaw, 1);
    Status s = create_store(dir / "file", o);
    CHECK(s.code() == StatusCode::kAlreadyExists);
    CHECK(s.message() == "'" + (dir / "file") + "' already exists and is not an empty directory");
    REQUIRE_OK(create_store(dir / "s", o));
    CHECK(create_store(dir / "s", o).code() == StatusCode::kAlreadyExists);
    ::mkdir((dir / "empty").c_str(), 0755);
    REQUIRE_OK(create_store(dir / "empty/", o));  // an empty directory is fine
    CHECK(create_store(dir / "x", options_for(test::dense_schema({2}), Codec::kZstd, 0)).code() ==
          StatusCode::kInvalidArgument);
    auto raw_with_dict = o;
    raw_with_dict.dictionary = test::test_dictionary();
    CHECK(create_store(dir / "y", raw_with_dict).message() ==
          "a dictionary is only used with codec zstd_dict, not raw");
    int entries = 0;
    for (auto& e : std::filesystem::directory_iterator(dir.path())) entries += e.path().filename().string()[0] == '.';
    CHECK(entries == 0);
  }
}
