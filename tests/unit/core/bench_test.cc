// The benchmark's generators and measurement loop, and the reader paths the benchmark
// drove into the executor: Store::read_locs(ids) and the RecordLoc cache behind gather.
#include <zstd.h>

#include <atomic>
#include <filesystem>
#include <numeric>

#include "zrec/store.h"
#include "zrec/store_writer.h"

#include "bench_internal.h"
#include "format/record_loc.h"
#include "testutil.h"
#include "zrec_bench.h"

using namespace zrec;

namespace {

// The corpus generated on `lanes` lanes of its own.
bench::Corpus generate(bench::Workload w, uint64_t records, uint64_t seed, size_t lanes) {
  Lanes executor(lanes);
  return bench::generate(w, records, seed, executor);
}

std::vector<uint8_t> record_of(const bench::Corpus& c, uint64_t k) {
  std::vector<uint8_t> out(c.logic_length(k));
  c.logical_record(k, out.data());
  return out;
}

// A raw or zstd store of the first n records of a corpus.
void build(const std::string& path, const bench::Corpus& c, Codec codec, uint32_t shards = 3) {
  CreateOptions o;
  o.schema = c.schema;
  o.codec = codec;
  o.data_shards = shards;
  REQUIRE_OK(create_store(path, o));
  auto w = StoreWriter::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
  REQUIRE_OK(w);
  REQUIRE_OK((*w)->append(c.refs(0, c.records())));
  REQUIRE_OK((*w)->close());
}

// bench_store options that measure a small store briefly.
bench::StoreBenchOptions brief_store_bench() {
  bench::StoreBenchOptions o;
  o.batch = 4;
  o.seconds = 0.02;
  o.rounds = 1;
  return o;
}

// ... run on two lanes.
Context two_lanes() { return {.lanes = std::make_shared<Lanes>(2)}; }

}  // namespace

TEST_SUITE("bench") {
  TEST_CASE("workload names round trip and defaults follow loaderx's sizes") {
    for (bench::Workload w : bench::kAllWorkloads) CHECK(bench::parse_workload(bench::to_string(w)) == w);
    CHECK_FALSE(bench::parse_workload("images").has_value());
    CHECK(bench::defaults(bench::Workload::kVision).records == 2500);
    CHECK(bench::defaults(bench::Workload::kVision).batch == 256);
    CHECK(bench::defaults(bench::Workload::kTokens).record_bytes == 2048);
  }

  TEST_CASE("generation is deterministic and independent of lanes and corpus size") {
    for (bench::Workload w : bench::kAllWorkloads) {
      CAPTURE(bench::to_string(w));
      const auto a = generate(w, 12, 7, 1);
      const auto b = generate(w, 20, 7, 3);
      const auto other = generate(w, 12, 8, 1);
      for (uint64_t k = 0; k < 12; ++k) CHECK(record_of(a, k) == record_of(b, k));
      CHECK(a.payload != other.payload);
    }
  }

  TEST_CASE("records have the shapes their schemas promise") {
    const auto vision = generate(bench::Workload::kVision, 3, 1, 2);
    CHECK(vision.schema.is_dense());
    CHECK(vision.logic_length(0) == 3 * 224 * 224);
    const auto var = generate(bench::Workload::kVisionVar, 50, 1, 2);
    for (uint64_t k = 0; k < var.records(); ++k) {
      const uint64_t* d = &var.dims[k * 3];
      CHECK(d[0] == 3);
      CHECK((d[1] >= 176 && d[1] <= 304 && d[2] >= 176 && d[2] <= 304));
      CHECK(var.offsets[k + 1] - var.offsets[k] == d[0] * d[1] * d[2]);
    }
    const auto tokens = generate(bench::Workload::kTokens, 20, 1, 2);
    const auto* ids = reinterpret_cast<const int32_t*>(tokens.payload.data());
    uint64_t low = 0;
    for (size_t i = 0; i < tokens.payload.size() / 4; ++i) {
      CHECK((ids[i] >= 0 && ids[i] < 32000));
      low += ids[i] < 100;
    }
    CHECK(low * 3 > tokens.payload.size() / 4);  // Zipf: the 100 commonest ids are over a third
    const auto seqs = generate(bench::Workload::kTokensVar, 2000, 1, 2);
    uint64_t total = 0, longest = 0;
    for (uint64_t k = 0; k < seqs.records(); ++k) {
      CHECK((seqs.dims[k] >= 1 && seqs.dims[k] <= 8192));
      total += seqs.dims[k];
      longest = std::max(longest, seqs.dims[k]);
    }
    CHECK((total / 2000 > 100 && total / 2000 < 170));  // mean about 135
    CHECK(longest > 800);                               // a long tail
  }

  TEST_CASE("vision records compress with zstd -3 in loaderx's regime (10-20x)") {
    const auto c = generate(bench::Workload::kVision, 20, 1, 2);
    std::vector<uint8_t> out(ZSTD_compressBound(c.logic_length(0)));
    uint64_t stored = 0;
    for (uint64_t k = 0; k < c.records(); ++k)
      stored += ZSTD_compress(out.data(), out.size(), c.payload.data() + c.offsets[k], c.logic_length(k), 3);
    const double ratio = double(c.logical_bytes()) / double(stored);
    CAPTURE(ratio);
    CHECK((ratio > 10 && ratio < 20));
  }

  TEST_CASE("percentiles are nearest-rank") {
    std::vector<double> t;
    for (int i = 100; i >= 1; --i) t.push_back(i / 1000.0);
    bench::Throughput x;
    bench::fill_percentiles(t, x);
    CHECK(x.p50_ms == doctest::Approx(50));
    CHECK(x.p95_ms == doctest::Approx(95));
    CHECK(x.p99_ms == doctest::Approx(99));
  }

  TEST_CASE("Store::read_locs(ids) matches the table, across cache pieces, repeats included") {
    test::TempDir dir;
    // 700 records: three 256-entry pieces of the RecordLoc cache.
    const auto c = generate(bench::Workload::kTokensVar, 700, 3, 2);
    for (Codec codec : {Codec::kRaw, Codec::kZstd}) {
      CAPTURE(to_string(codec));
      const std::string path = dir / to_string(codec);
      build(path, c, codec);
      auto store = Store::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
      REQUIRE_OK(store);
      std::vector<RecordLoc> table(700);
      REQUIRE_OK((*store)->read_locs(0, 700, table.data()));
      std::vector<uint64_t> ids = {699, 0, 255, 256, 511, 512, 3, 3, 699, 400};
      std::vector<RecordLoc> got(ids.size());
      REQUIRE_OK((*store)->read_locs(ids, got.data()));
      for (size_t k = 0; k < ids.size(); ++k) CHECK(got[k] == table[ids[k]]);
      // ...and a Ragged gather from those locations returns the records.
      std::vector<uint64_t> offsets(ids.size() + 1, 0);
      for (size_t k = 0; k < ids.size(); ++k) offsets[k + 1] = offsets[k] + got[k].logic_length;
      std::vector<uint8_t> dest(offsets.back());
      REQUIRE_OK((*store)->gather(ids, got.data(), dest.data(), offsets));
      for (size_t k = 0; k < ids.size(); ++k)
        CHECK(std::vector<uint8_t>(dest.begin() + offsets[k], dest.begin() + offsets[k + 1]) == record_of(c, ids[k]));
      std::vector<uint64_t> bad = {1, 700};
      CHECK((*store)->read_locs(bad, got.data()).code() == StatusCode::kInvalidArgument);
    }
  }

  TEST_CASE("gathers agree with and without mapped records, every codec") {
    test::TempDir dir;
    const auto c = generate(bench::Workload::kTokensVar, 400, 5, 2);
    std::vector<uint64_t> ids = {7, 399, 0, 7, 123, 256, 300};
    for (Codec codec : {Codec::kRaw, Codec::kZstd}) {
      CAPTURE(to_string(codec));
      const std::string path = dir / to_string(codec);
      build(path, c, codec);
      for (bool mapped : {true, false}) {
        CAPTURE(mapped);
        auto store = Store::open(path, {.map_records = mapped}, {.lanes = std::make_shared<Lanes>(2)});
        REQUIRE_OK(store);
        std::vector<RecordLoc> locs(ids.size());
        REQUIRE_OK((*store)->read_locs(ids, locs.data()));
        std::vector<uint64_t> offsets(ids.size() + 1, 0);
        for (size_t k = 0; k < ids.size(); ++k) offsets[k + 1] = offsets[k] + locs[k].logic_length;
        std::vector<uint8_t> dest(offsets.back());
        REQUIRE_OK((*store)->gather(ids, locs.data(), dest.data(), offsets));
        for (size_t k = 0; k < ids.size(); ++k)
          CHECK(std::vector<uint8_t>(dest.begin() + offsets[k], dest.begin() + offsets[k + 1]) == record_of(c, ids[k]));
      }
    }
  }

  TEST_CASE("large records read from the mapping when cached and with pread when evicted") {
    test::TempDir dir;
    const auto c = generate(bench::Workload::kVision, 6, 5, 2);  // 147 KiB: over the 64 KiB bound
    const std::string path = dir / "raw";
    build(path, c, Codec::kRaw, 2);
    auto store = Store::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
    REQUIRE_OK(store);
    std::vector<uint64_t> ids = {5, 0, 3, 3};
    for (bool evict : {false, true, false}) {
      CAPTURE(evict);
      if (evict) REQUIRE_OK(bench::evict_directory(path, true));
      std::vector<uint8_t> dest(ids.size() * c.logic_length(0));
      REQUIRE_OK((*store)->gather(ids, nullptr, dest.data()));
      for (size_t k = 0; k < ids.size(); ++k)
        CHECK(std::vector<uint8_t>(dest.begin() + k * c.logic_length(0), dest.begin() + (k + 1) * c.logic_length(0)) ==
              record_of(c, ids[k]));
    }
  }

  TEST_CASE("a damaged RecordLoc is reported on every gather, cached or not") {
    test::TempDir dir;
    const auto c = generate(bench::Workload::kTokens, 600, 3, 2);
    const std::string path = dir / "s";
    build(path, c, Codec::kRaw);
    // RecordLoc[300].phys_length = 0 (docs/format.md §8: phys_length >= 1).
    auto meta = test::read_file(path + "/meta.zr");
    format::store_le<uint32_t>(&meta[format::record_loc_offset(300) + 8], 0);
    test::write_file(path + "/meta.zr", meta);
    auto store = Store::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
    REQUIRE_OK(store);
    std::vector<uint8_t> dest(2 * 2048);
    std::vector<uint64_t> good = {299, 301};
    REQUIRE_OK((*store)->gather(good, nullptr, dest.data()));  // loads the piece holding 300
    CHECK(std::vector<uint8_t>(dest.begin(), dest.begin() + 2048) == record_of(c, 299));
    std::vector<uint64_t> damaged = {300};
    for (int attempt = 0; attempt < 2; ++attempt) {
      Status s = (*store)->gather(damaged, nullptr, dest.data());
      CHECK(s.code() == StatusCode::kMalformed);
      CHECK(s.message().find("record 300") != std::string::npos);
    }
  }

  TEST_CASE("run_workload measures every codec and the baselines, then removes its stores") {
    test::TempDir dir;
    const auto c = generate(bench::Workload::kTokensVar, 600, 1, 2);
    bench::RunOptions o;
    o.dir = dir.path();
    o.read_lanes = o.write_lanes = std::make_shared<Lanes>(2);
    o.seconds = 0.02;
    o.rounds = 2;
    o.batch = 32;
    auto r = bench::run_workload(o, c);
    REQUIRE_OK(r);
    CHECK(r->records == 600);
    CHECK(r->pread_limit.measured);
    CHECK(r->pread_limit.batches >= 2);
    REQUIRE(r->codecs.size() == 3);
    for (const auto& cr : r->codecs) {
      CAPTURE(to_string(cr.codec));
      CHECK(cr.write.bytes == c.logical_bytes());
      CHECK(cr.gather.records == 32 * cr.gather.batches);
      CHECK(cr.mem_decode.measured);
      CHECK(cr.mem_encode.records > 0);
      CHECK(cr.disk_bytes > 0);
      CHECK(cr.gather.p50_ms <= cr.gather.p99_ms);
    }
    CHECK(r->codecs[2].dict_bytes > 0);
    CHECK(std::filesystem::is_empty(dir.path()));
  }

  TEST_CASE("bench_store measures an existing store beside its baselines") {
    test::TempDir dir;
    const auto c = generate(bench::Workload::kVision, 10, 1, 2);
    build(dir / "s", c, Codec::kZstd);
    bench::StoreBenchOptions o = brief_store_bench();
    auto r = bench::bench_store(dir / "s", o, two_lanes());
    REQUIRE_OK(r);
    CHECK(r->records == 10);
    CHECK(r->logical_bytes == c.logical_bytes());
    CHECK(r->gather.measured);
    CHECK(r->pread_limit.measured);
    CHECK(r->mem_decode.measured);
    CHECK(r->payload_bytes < r->logical_bytes);
  }

  TEST_CASE("the benchmark's Control hears each phase and stops at the first batch") {
    test::TempDir dir;
    const auto c = generate(bench::Workload::kVision, 10, 1, 2);
    build(dir / "s", c, Codec::kZstd);
    bench::StoreBenchOptions o = brief_store_bench();
    std::vector<std::string> phases;
    std::atomic<int> stop{2};
    Context ctx = two_lanes();
    ctx.control = {.cancel = {&stop, -1}, .progress = [&](const Progress& p) {
                     CHECK(p.records == 0);
                     phases.emplace_back(p.phase);
                   }};
    auto r = bench::bench_store(dir / "s", o, ctx);
    CHECK(r.status().code() == StatusCode::kCancelled);
    CHECK(r.status().message() == "interrupted");
    CHECK(phases ==
          std::vector<std::string>{"reading the record table", "loading the stored frames into memory", "gathering"});
  }
}
