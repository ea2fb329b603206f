// Store-to-store copies (include/zrec/transfer.h), build_store's temporaries, the content
// digest (include/zrec/digest.h) and dictionary training (include/zrec/dict.h).
#include "zrec/transfer.h"

#include <sys/stat.h>

#include <atomic>
#include <cstring>
#include <filesystem>

#include "zrec/context.h"
#include "zrec/dataset.h"
#include "zrec/dict.h"
#include "zrec/digest.h"
#include "zrec/store.h"
#include "zrec/store_writer.h"

#include "format/sha256.h"
#include "store/sample_indices.h"
#include "testutil.h"

using namespace zrec;

namespace {

Schema ragged_u2() {
  Schema s;
  s.dtype = parse_dtype("<u2").value();
  s.ndim = 2;
  return s;
}

Schema dense_i4() {
  Schema s;
  s.dtype = parse_dtype("<i4").value();
  s.ndim = 2;
  s.item_shape = std::vector<uint64_t>{6, 10};
  return s;
}

// Logical records (Ragged: with the LE shape prefix) made from testutil's generator.
std::vector<std::vector<uint8_t>> make_records(const Schema& schema, uint64_t first, size_t n) {
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t id = first + i;
    if (schema.is_dense()) {
      out.push_back(test::record_bytes(id, schema.dense_width()));
      continue;
    }
    const uint64_t dims[2] = {1 + id % 5, 1 + (id * 7) % 90};
    std::vector<uint8_t> r(16);
    std::memcpy(r.data(), dims, 16);
    auto payload = test::record_bytes(id, 2 * dims[0] * dims[1]);
    r.insert(r.end(), payload.begin(), payload.end());
    out.push_back(std::move(r));
  }
  return out;
}

Status append_records(StoreWriter& w, const Schema& schema, const std::vector<std::vector<uint8_t>>& records) {
  std::vector<RecordRef> refs;
  std::vector<uint64_t> dims(records.size() * 2);
  for (size_t i = 0; i < records.size(); ++i) {
    if (schema.is_dense()) {
      refs.push_back({records[i].data(), records[i].size(), nullptr});
    } else {
      std::memcpy(&dims[2 * i], records[i].data(), 16);
      refs.push_back({records[i].data() + 16, records[i].size() - 16, &dims[2 * i]});
    }
  }
  return w.append(refs);
}

CreateOptions create_options(const Schema& schema, Codec codec, uint32_t shards, std::vector<uint8_t> dict = {}) {
  CreateOptions o;
  o.schema = schema;
  o.codec = codec;
  o.data_shards = shards;
  if (codec == Codec::kZstdDict) o.dictionary = dict.empty() ? test::test_dictionary() : std::move(dict);
  return o;
}

void build(const std::string& path, const CreateOptions& o, const std::vector<std::vector<uint8_t>>& records) {
  REQUIRE_OK(create_store(path, o));
  auto w = StoreWriter::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
  REQUIRE_OK(w);
  REQUIRE_OK(append_records(**w, o.schema, records));
  REQUIRE_OK((*w)->close());
}

std::vector<std::vector<uint8_t>> read_all(const std::string& path) {
  auto store = Store::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
  REQUIRE_OK(store);
  std::vector<uint64_t> ids((*store)->length());
  for (uint64_t i = 0; i < ids.size(); ++i) ids[i] = i;
  std::vector<std::vector<uint8_t>> out;
  REQUIRE_OK((*store)->scan(ids, 1 << 12, [&](const Window& w) {
    for (size_t k = 0; k < w.ids.size(); ++k) out.emplace_back(w.data + w.offsets[k], w.data + w.offsets[k + 1]);
    return Status::ok();
  }));
  return out;
}

std::string digest_of(const std::string& path) {
  auto store = Store::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
  REQUIRE_OK(store);
  auto d = digest_store(**store, {.window_bytes = 1 << 12, .per_record = {}});
  REQUIRE_OK(d);
  return hash_to_hex(d.value());
}

bool exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

// A Control whose sink checks that the counts never go back and keeps the last, and
// which cancels (flag 15, as SIGTERM) once `stop_at` records are done (0: never).
struct WatchingControl {
  Progress last;
  int reports = 0;
  std::atomic<int> stop{0};
  Control control(uint64_t stop_at = 0) {
    return {.cancel = {&stop, -1}, .progress = [this, stop_at](const Progress& p) {
              CHECK(p.records >= last.records);
              CHECK(p.bytes >= last.bytes);
              last = p;
              ++reports;
              if (stop_at != 0 && p.records >= stop_at) stop = 15;
            }};
  }
};

}  // namespace

TEST_SUITE("transfer") {
  TEST_CASE("recompress between every pair of codecs, resharding, keeps every record") {
    for (const Schema& schema : {ragged_u2(), dense_i4()}) {
      const auto records = make_records(schema, 0, 157);
      for (Codec from : {Codec::kRaw, Codec::kZstd, Codec::kZstdDict}) {
        test::TempDir dir;
        build(dir / "src", create_options(schema, from, 3), records);
        const std::string src_digest = digest_of(dir / "src");
        for (Codec to : {Codec::kRaw, Codec::kZstd, Codec::kZstdDict}) {
          for (uint32_t shards : {1u, 5u}) {
            CAPTURE(schema.describe());
            CAPTURE(to_string(from));
            CAPTURE(to_string(to));
            CAPTURE(shards);
            auto src = Store::open(dir / "src", {}, {.lanes = std::make_shared<Lanes>(2)});
            REQUIRE_OK(src);
            const std::string dst = dir / ("dst-" + std::string(to_string(to)) + std::to_string(shards));
            TransferStats stats;
            TransferOptions t;
            t.window_bytes = 1 << 11;     // many windows
            t.kernel_copy = shards == 5;  // frames written from memory, and by copy_file_range
            REQUIRE_OK(build_from_stores({src->get()}, dst, create_options(schema, to, shards), {}, t, &stats,
                                         {.lanes = std::make_shared<Lanes>(3)}));
            CHECK(stats.records == records.size());
            // Frames are copied exactly when codec and dictionary agree (the same test dictionary).
            CHECK(stats.frames_copied == (from == to ? records.size() : 0));
            CHECK(stats.records_recoded == (from == to ? 0 : records.size()));
            CHECK(read_all(dst) == records);
            CHECK(digest_of(dst) == src_digest);
            auto out = Store::open(dst);
            REQUIRE_OK(out);
            CHECK((*out)->codec() == to);
            CHECK((*out)->data_shards() == shards);
          }
        }
      }
    }
  }

  TEST_CASE("a different dictionary or no frame copy re-encodes") {
    test::TempDir dir;
    const Schema schema = ragged_u2();
    const auto records = make_records(schema, 0, 40);
    build(dir / "src", create_options(schema, Codec::kZstdDict, 2), records);
    auto src = Store::open(dir / "src");
    REQUIRE_OK(src);
    std::vector<uint8_t> other(2048, 7);
    TransferStats a;
    REQUIRE_OK(
        build_from_stores({src->get()}, dir / "a", create_options(schema, Codec::kZstdDict, 2, other), {}, {}, &a));
    CHECK(a.records_recoded == 40);
    TransferStats b;
    TransferOptions no_copy;
    no_copy.frame_copy = false;
    REQUIRE_OK(build_from_stores({src->get()}, dir / "b", create_options(schema, Codec::kZstdDict, 2), {.level = 19},
                                 no_copy, &b));
    CHECK(b.records_recoded == 40);
    CHECK(read_all(dir / "a") == records);
    CHECK(read_all(dir / "b") == records);
  }

  TEST_CASE("concat of three parts equals a one-shot build") {
    test::TempDir dir;
    const Schema schema = ragged_u2();
    const auto all = make_records(schema, 0, 300);
    build(dir / "one", create_options(schema, Codec::kZstd, 4), all);
    std::vector<std::unique_ptr<Store>> parts;
    std::vector<Store*> ptrs;
    for (int p = 0; p < 3; ++p) {
      const std::vector<std::vector<uint8_t>> slice(all.begin() + p * 100, all.begin() + (p + 1) * 100);
      const std::string path = dir / ("part" + std::to_string(p));
      // Part 1 uses another codec: it is recompressed, the others are frame-copied.
      build(path, create_options(schema, p == 1 ? Codec::kRaw : Codec::kZstd, 1 + p), slice);
      parts.push_back(std::move(Store::open(path).value()));
      ptrs.push_back(parts.back().get());
    }
    TransferStats stats;
    REQUIRE_OK(build_from_stores(ptrs, dir / "all", create_options(schema, Codec::kZstd, 4), {}, {}, &stats));
    CHECK(stats.frames_copied == 200);
    CHECK(stats.records_recoded == 100);
    CHECK(stats.sources_copied == 2);
    CHECK(read_all(dir / "all") == all);
    CHECK(digest_of(dir / "all") == digest_of(dir / "one"));
  }

  TEST_CASE("its Control hears running records and logical bytes over every source, and cancels") {
    test::TempDir dir;
    const Schema schema = ragged_u2();
    const auto all = make_records(schema, 0, 200);
    uint64_t logical = 0;
    for (const auto& r : all) logical += r.size();
    std::vector<std::unique_ptr<Store>> parts;
    std::vector<Store*> ptrs;
    for (int p = 0; p < 2; ++p) {
      const std::string path = dir / ("part" + std::to_string(p));
      // Part 0 is frame-copied, part 1 (raw) re-encoded: both report.
      build(path, create_options(schema, p == 1 ? Codec::kRaw : Codec::kZstd, 2),
            {all.begin() + p * 100, all.begin() + (p + 1) * 100});
      parts.push_back(std::move(Store::open(path).value()));
      ptrs.push_back(parts.back().get());
    }
    TransferOptions o;
    o.window_bytes = 1000;
    WatchingControl whole;
    TransferStats stats;
    REQUIRE_OK(build_from_stores(ptrs, dir / "all", create_options(schema, Codec::kZstd, 2), {}, o, &stats,
                                 {.control = whole.control()}));
    CHECK(whole.last.records == 200);
    CHECK(whole.last.bytes == logical);
    CHECK(whole.last.phase == nullptr);
    CHECK(whole.reports > 2);

    WatchingControl stopped;
    TransferStats partial;
    Status s = build_from_stores(ptrs, dir / "stopped", create_options(schema, Codec::kZstd, 2), {}, o, &partial,
                                 {.control = stopped.control(64)});
    CHECK(s.code() == StatusCode::kCancelled);
    CHECK(s.message() == "interrupted");
    CHECK(!exists(dir / "stopped"));
  }

  TEST_CASE("schema mismatch, existing destination: clear errors, nothing created") {
    test::TempDir dir;
    build(dir / "a", create_options(ragged_u2(), Codec::kZstd, 2), make_records(ragged_u2(), 0, 10));
    build(dir / "b", create_options(dense_i4(), Codec::kZstd, 2), make_records(dense_i4(), 0, 10));
    auto a = Store::open(dir / "a");
    auto b = Store::open(dir / "b");
    REQUIRE_OK(a);
    REQUIRE_OK(b);
    Status s = build_from_stores({a->get(), b->get()}, dir / "c", create_options(ragged_u2(), Codec::kZstd, 2), {}, {},
                                 nullptr);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find("Ragged ndim=2 vs Dense (6, 10)") != std::string::npos);
    CHECK(!exists(dir / "c"));
    ::mkdir((dir / "d").c_str(), 0755);  // even an empty directory counts as existing
    s = build_from_stores({a->get()}, dir / "d", create_options(ragged_u2(), Codec::kZstd, 2), {}, {}, nullptr);
    CHECK(s.code() == StatusCode::kAlreadyExists);
    Schema other = ragged_u2();
    other.dtype = parse_dtype("<u4").value();
    CHECK(schema_difference(ragged_u2(), other) == "dtype '<u2' vs '<u4'");
    other = ragged_u2();
    other.ndim = 3;
    CHECK(schema_difference(ragged_u2(), other) == "ndim 2 vs 3");
    Schema wide = dense_i4();
    wide.item_shape = std::vector<uint64_t>{6, 11};
    CHECK(schema_difference(dense_i4(), wide) == "item_shape (6, 10) vs (6, 11)");
  }

  TEST_CASE("a failing fill leaves no destination and no temporary, abandoned temporaries are removed") {
    test::TempDir dir;
    const Schema schema = ragged_u2();
    Status s = build_store(dir / "x", create_options(schema, Codec::kZstd, 2), {}, [&](StoreWriter& w) {
      REQUIRE_OK(append_records(w, schema, make_records(schema, 0, 5)));
      return io_error("disk on fire");
    });
    CHECK(s.message() == "disk on fire");
    CHECK(std::distance(std::filesystem::directory_iterator(dir.path()), {}) == 0);
    // A killed build leaves ".x.zrec-tmp-XXXXXX" behind, unlocked, with its marker: the
    // next build removes it. One without the marker is not provably zrec's and stays.
    ::mkdir((dir / ".x.zrec-tmp-abc123").c_str(), 0755);
    test::write_file(dir / ".x.zrec-tmp-abc123/.zrec-temporary", {});
    test::write_file(dir / ".x.zrec-tmp-abc123/meta.zr", std::vector<uint8_t>(4096));
    ::mkdir((dir / ".x.zrec-tmp-nomark").c_str(), 0755);
    test::write_file(dir / ".x.zrec-tmp-nomark/meta.zr", std::vector<uint8_t>(4096));
    std::vector<std::string> warnings;
    CreateOptions create = create_options(schema, Codec::kZstd, 2);
    const Context ctx{.warn = [&](const std::string& w) { warnings.push_back(w); }};
    REQUIRE_OK(build_store(
        dir / "x", create, {}, [&](StoreWriter& w) { return append_records(w, schema, make_records(schema, 0, 5)); },
        ctx));
    CHECK(!exists(dir / ".x.zrec-tmp-abc123"));
    CHECK(exists(dir / ".x.zrec-tmp-nomark/meta.zr"));
    REQUIRE(warnings.size() == 1);
    CHECK(warnings[0].find("it has no .zrec-temporary marker") != std::string::npos);
    CHECK(read_all(dir / "x") == make_records(schema, 0, 5));
  }

  TEST_CASE("append_encoded checks lengths against the schema") {
    test::TempDir dir;
    REQUIRE_OK(create_store(dir / "s", create_options(dense_i4(), Codec::kRaw, 2)));
    auto w = StoreWriter::open(dir / "s");
    REQUIRE_OK(w);
    std::vector<uint8_t> bytes(240);
    std::vector<EncodedRecord> bad = {{bytes.data(), 240, 240}, {bytes.data(), 200, 240}};
    Status s = (*w)->append_encoded(bad);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message().find("stored record 1") != std::string::npos);
    std::vector<EncodedRecord> wrong_width = {{bytes.data(), 236, 236}};
    CHECK((*w)->append_encoded(wrong_width).code() == StatusCode::kInvalidArgument);
    std::vector<EncodedRecord> good = {{bytes.data(), 240, 240}};
    REQUIRE_OK((*w)->append_encoded(good));
    REQUIRE_OK((*w)->close());
    CHECK(read_all(dir / "s") == std::vector<std::vector<uint8_t>>{bytes});
  }

  TEST_CASE("read_stored finds damaged frames without decoding") {
    test::TempDir dir;
    build(dir / "s", create_options(ragged_u2(), Codec::kZstd, 1), make_records(ragged_u2(), 0, 8));
    // Break record 3's frame magic: its bytes start at its offset in data_0.zr.
    RecordLoc loc;
    {
      auto s = Store::open(dir / "s");
      REQUIRE_OK(s);
      REQUIRE_OK((*s)->read_locs(3, 1, &loc));
    }
    auto data = test::read_file(dir / "s/data_0.zr");
    data[loc.offset] ^= 0xFF;
    test::write_file(dir / "s/data_0.zr", data);
    auto s = Store::open(dir / "s");
    REQUIRE_OK(s);
    std::vector<uint64_t> ids = {0, 1, 2, 3, 4, 5, 6, 7};
    std::vector<RecordLoc> locs(8);
    REQUIRE_OK((*s)->read_locs(0, 8, locs.data()));
    std::vector<uint8_t> buffer;
    std::vector<uint64_t> offsets;
    Status st = (*s)->read_stored(ids, locs.data(), buffer, offsets);
    CHECK(st.code() == StatusCode::kMalformed);
    CHECK(st.message().find("record 3") != std::string::npos);
    CHECK(st.message().find("not a zstd frame") != std::string::npos);
    // Records that point at the same bytes overlap: malformed too.
    std::vector<uint64_t> two = {0, 1};
    std::vector<RecordLoc> same = {locs[0], locs[0]};
    same[1].logic_length = locs[0].logic_length;
    st = (*s)->read_stored(two, same.data(), buffer, offsets);
    CHECK(st.code() == StatusCode::kMalformed);
    CHECK(st.message().find("overlap") != std::string::npos);
  }

  TEST_CASE("read_stored returns each record's bytes whatever the order of IDs and offsets") {
    test::TempDir dir;
    build(dir / "s", create_options(ragged_u2(), Codec::kZstd, 3), make_records(ragged_u2(), 0, 30));
    auto s = Store::open(dir / "s");
    REQUIRE_OK(s);
    std::vector<RecordLoc> all(30);
    REQUIRE_OK((*s)->read_locs(0, 30, all.data()));
    std::vector<std::vector<uint8_t>> files;
    for (int sh = 0; sh < 3; ++sh) files.push_back(test::read_file(dir / ("s/data_" + std::to_string(sh) + ".zr")));
    // IDs out of order; then, within each shard, the locations handed to IDs reversed,
    // so offsets run against IDs (the bucket of a shard is then sorted).
    std::vector<uint64_t> ids = {29, 0, 14, 3, 7, 22, 1, 2, 18, 9, 27, 11};
    std::vector<RecordLoc> locs;
    for (uint64_t id : ids) locs.push_back(all[id]);
    for (const bool reversed : {false, true}) {
      CAPTURE(reversed);
      if (reversed) {
        for (uint32_t sh = 0; sh < 3; ++sh) {
          std::vector<size_t> at;
          for (size_t k = 0; k < ids.size(); ++k)
            if (ids[k] % 3 == sh) at.push_back(k);
          std::vector<RecordLoc> mine;
          for (size_t k : at) mine.push_back(locs[k]);
          std::sort(mine.begin(), mine.end(),
                    [](const RecordLoc& a, const RecordLoc& b) { return a.offset > b.offset; });
          for (size_t j = 0; j < at.size(); ++j) locs[at[j]] = mine[j];
        }
      }
      std::vector<uint8_t> buffer;
      std::vector<uint64_t> offsets;
      REQUIRE_OK((*s)->read_stored(ids, locs.data(), buffer, offsets));
      REQUIRE(offsets.size() == ids.size());
      for (size_t k = 0; k < ids.size(); ++k) {
        CAPTURE(ids[k]);
        const std::vector<uint8_t>& file = files[ids[k] % 3];
        const std::vector<uint8_t> want(file.begin() + static_cast<ptrdiff_t>(locs[k].offset),
                                        file.begin() + static_cast<ptrdiff_t>(locs[k].offset + locs[k].phys_length));
        const std::vector<uint8_t> got(buffer.begin() + static_cast<ptrdiff_t>(offsets[k]),
                                       buffer.begin() + static_cast<ptrdiff_t>(offsets[k] + locs[k].phys_length));
        CHECK(got == want);
      }
    }
  }
}

TEST_SUITE("digest") {
  TEST_CASE("matches the documented definition") {
    test::TempDir dir;
    const Schema schema = ragged_u2();
    const auto records = make_records(schema, 0, 20);
    build(dir / "s", create_options(schema, Codec::kZstd, 3), records);
    format::Sha256 h;
    h.update(std::string("zrec-digest-v1\ndtype=<u2\nndim=2\nragged\nlength=20\n"));
    for (const auto& r : records) {
      const auto rh = format::Sha256::hash(r.data(), r.size());
      h.update(rh.data(), rh.size());
    }
    CHECK(digest_of(dir / "s") == format::to_hex(h.finish()));
    CHECK(digest_header(dense_i4(), 7) == "zrec-digest-v1\ndtype=<i4\nndim=2\nitem_shape=6,10\nlength=7\n");
    // Per-record hashes, in ID order.
    auto store = Store::open(dir / "s");
    REQUIRE_OK(store);
    std::vector<uint64_t> seen;
    DigestOptions o;
    o.window_bytes = 100;
    o.per_record = [&](uint64_t id, const RecordHash& rh) {
      CHECK(rh == format::Sha256::hash(records[id].data(), records[id].size()));
      seen.push_back(id);
      return Status::ok();
    };
    REQUIRE_OK(digest_store(**store, o));
    CHECK(seen.size() == 20);
    CHECK(std::is_sorted(seen.begin(), seen.end()));
  }

  TEST_CASE("its Control reports records and logical bytes, and cancels") {
    test::TempDir dir;
    const Schema schema = ragged_u2();
    const auto records = make_records(schema, 0, 200);
    build(dir / "s", create_options(schema, Codec::kZstd, 3), records);
    uint64_t logical = 0;
    for (const auto& r : records) logical += r.size();
    auto store = Store::open(dir / "s");
    REQUIRE_OK(store);
    DigestOptions o;
    o.window_bytes = 1000;
    WatchingControl all;
    REQUIRE_OK(digest_store(**store, o, {.control = all.control()}));
    CHECK(all.last.records == 200);
    CHECK(all.last.total_records == 200);
    CHECK(all.last.bytes == logical);
    CHECK(all.reports > 1);

    WatchingControl stopped;
    auto cancelled = digest_store(**store, o, {.control = stopped.control(64)});
    REQUIRE(!cancelled.is_ok());
    CHECK(cancelled.status().code() == StatusCode::kCancelled);
    CHECK(cancelled.status().message() == "interrupted");
  }

  TEST_CASE("differs when a record, the dtype or the order differs") {
    test::TempDir dir;
    const Schema schema = dense_i4();
    auto records = make_records(schema, 0, 10);
    build(dir / "a", create_options(schema, Codec::kRaw, 2), records);
    std::swap(records[2], records[3]);
    build(dir / "b", create_options(schema, Codec::kRaw, 2), records);
    Schema f4 = schema;
    f4.dtype = parse_dtype("<f4").value();
    std::swap(records[2], records[3]);
    build(dir / "c", create_options(f4, Codec::kRaw, 2), records);
    CHECK(digest_of(dir / "a") != digest_of(dir / "b"));
    CHECK(digest_of(dir / "a") != digest_of(dir / "c"));
  }
}

TEST_SUITE("dict_trainer") {
  TEST_CASE("sample_indices is deterministic, distinct, and covers small populations") {
    auto a = store::sample_indices(1000000, 500, 42);
    CHECK(a == store::sample_indices(1000000, 500, 42));
    CHECK(a != store::sample_indices(1000000, 500, 43));
    auto sorted = a;
    std::sort(sorted.begin(), sorted.end());
    CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end());
    CHECK(sorted.back() < 1000000);
    auto all = store::sample_indices(50, 100, 1);
    CHECK(all.size() == 50);
    std::sort(all.begin(), all.end());
    for (uint64_t i = 0; i < 50; ++i) CHECK(all[i] == i);
    // Pinned: the sampler's output is part of "same seed, same dictionary".
    CHECK(store::sample_indices(100, 3, 0) == store::sample_indices(100, 3, 0));
  }

  TEST_CASE("same records and seed give the same dictionary, whatever the threads") {
    test::TempDir dir;
    const Schema schema = ragged_u2();
    build(dir / "s", create_options(schema, Codec::kZstd, 3), make_records(schema, 0, 2000));
    auto store = Store::open(dir / "s");
    REQUIRE_OK(store);
    auto source = store_record_source({store->get()});
    TrainOptions o = train_options(DictTier::kBalanced);
    o.dict_bytes = 8192;
    o.level = 3;
    TrainReport r1, r2;
    auto d1 = train_dictionary(*source, o, &r1, {.lanes = std::make_shared<Lanes>(1)});
    REQUIRE_OK(d1);
    auto d2 = train_dictionary(*source, o, &r2, {.lanes = std::make_shared<Lanes>(3)});
    REQUIRE_OK(d2);
    CHECK(d1.value() == d2.value());
    CHECK(d1->size() <= 8192);
    CHECK(r1.samples == 2000);
    CHECK(r1.heldout_samples == 250);
    CHECK(r1.candidates == 6);
    CHECK(r1.heldout_dict > 0);
    o.seed = 1;
    o.max_samples = 1000;
    auto d3 = train_dictionary(*source, o, nullptr);
    REQUIRE_OK(d3);
    CHECK(d3.value() != d1.value());
    // The dictionary works as a store's dictionary.
    REQUIRE_OK(create_store(dir / "d", create_options(schema, Codec::kZstdDict, 2, d1.value())));
  }

  TEST_CASE("too few records or bytes: an error with the reason") {
    test::TempDir dir;
    const Schema schema = ragged_u2();
    build(dir / "few", create_options(schema, Codec::kZstd, 1), make_records(schema, 0, 9));
    build(dir / "small", create_options(schema, Codec::kZstd, 1), make_records(schema, 0, 40));
    auto few = Store::open(dir / "few");
    auto small = Store::open(dir / "small");
    REQUIRE_OK(few);
    REQUIRE_OK(small);
    auto r = train_dictionary(*store_record_source({few->get()}), train_options(DictTier::kSmall), nullptr);
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message().find("holds 9 records") != std::string::npos);
    r = train_dictionary(*store_record_source({small->get()}), train_options(DictTier::kBalanced), nullptr);
    CHECK(r.status().code() == StatusCode::kInvalidArgument);
    CHECK(r.status().message().find("too few for a 112640-byte dictionary") != std::string::npos);
    // Two stores sample as one population.
    auto both = store_record_source({few->get(), small->get()});
    CHECK(both->count() == 49);
  }
}

TEST_SUITE("root transfer") {
  TEST_CASE("build_root: committed samples only, marker last, DST whole or absent") {
    test::TempDir dir;
    build(dir / "a", create_options(ragged_u2(), Codec::kZstd, 2), make_records(ragged_u2(), 0, 12));
    build(dir / "b", create_options(dense_i4(), Codec::kRaw, 1), make_records(dense_i4(), 0, 9));
    auto a = Store::open(dir / "a");
    auto b = Store::open(dir / "b");
    REQUIRE_OK(a);
    REQUIRE_OK(b);
    // Two roots' worth of parts: 5 + 3 samples of each stream (records past them are no samples).
    std::vector<RootStreamPlan> plans = {
        {"x", create_options(ragged_u2(), Codec::kRaw, 1), {{a->get(), 5}, {a->get(), 3}}},
        {"y", create_options(dense_i4(), Codec::kZstd, 3), {{b->get(), 5}, {b->get(), 3}}}};
    TransferStats stats;
    REQUIRE_OK(build_root(dir / "r", plans, {}, {}, &stats));
    CHECK(stats.records == 16);
    auto marker = read_root_marker(dir / "r");
    REQUIRE_OK(marker);
    REQUIRE(marker->has_value());
    CHECK(**marker == RootState{8, {"x", "y"}});
    auto x = Store::open(dir / "r/x");
    REQUIRE_OK(x);
    CHECK((*x)->length() == 8);
    CHECK((*x)->codec() == Codec::kRaw);
    // The same again: DST exists, refused, unchanged; streams of unequal lengths: nothing made.
    CHECK(build_root(dir / "r", plans, {}, {}, nullptr).code() == StatusCode::kAlreadyExists);
    plans[1].parts.pop_back();
    const Status s = build_root(dir / "s", plans, {}, {}, nullptr);
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message() == "stream 'y' would hold 5 records, and 'x' 8");
    CHECK(!exists(dir / "s"));
  }

  TEST_CASE("digest_dataset and digest_sample hash names and hashes as documented") {
    RecordHash h{};
    h[0] = 1;
    format::Sha256 sha;
    sha.update("zrec-root-digest-v1\nlength=7\nimg " + hash_to_hex(h) + "\n");
    CHECK(digest_dataset(7, {{"img", h}}) == sha.finish());
    sha.update("img " + hash_to_hex(h) + "\n");
    CHECK(digest_sample({{"img", h}}) == sha.finish());
  }
}
