// verify_store() through the core API: valid stores of every codec and shard count,
// problems with their record/shard/offset, overlap passes under a small memory budget,
// progress, cancellation, digests, and the checksum setting writers keep.
#include "zrec/verify.h"

#include <cstring>
#include <numeric>

#include "zrec/store.h"
#include "zrec/store_writer.h"

#include "format/layout.h"
#include "format/record_loc.h"
#include "format/sha256.h"
#include "testutil.h"

using namespace zrec;

namespace {

Schema ragged_schema() {
  Schema s;
  s.dtype = parse_dtype("|u1").value();
  s.ndim = 2;
  return s;
}

std::vector<uint8_t> dictionary() {
  std::vector<uint8_t> d;
  for (int i = 0; i < 4096; ++i) d.push_back(static_cast<uint8_t>(i / 16));
  return d;
}

// Builds a store of n records (Dense (4, 2) <i4, or Ragged |u1 ndim 2) and returns the
// logical records.
std::vector<std::vector<uint8_t>> build(const std::string& path, Codec codec, uint32_t shards, bool dense, size_t n,
                                        bool checksum = false, size_t lanes = 2) {
  CreateOptions o;
  o.schema = dense ? test::dense_schema({4, 2}) : ragged_schema();
  o.codec = codec;
  o.data_shards = shards;
  o.checksum = checksum;
  if (codec == Codec::kZstdDict) o.dictionary = dictionary();
  REQUIRE_OK(create_store(path, o));
  std::vector<std::vector<uint8_t>> payloads, logical;
  std::vector<std::vector<uint64_t>> dims;
  for (size_t i = 0; i < n; ++i) {
    if (dense) {
      payloads.push_back(test::record_bytes(i, 32));
      logical.push_back(payloads.back());
    } else {
      dims.push_back({1 + i % 3, 1 + (i * 7) % 50});
      payloads.push_back(test::record_bytes(i, dims.back()[0] * dims.back()[1]));
      std::vector<uint8_t> l(16);
      std::memcpy(l.data(), dims.back().data(), 16);
      l.insert(l.end(), payloads.back().begin(), payloads.back().end());
      logical.push_back(l);
    }
  }
  std::vector<RecordRef> refs;
  for (size_t i = 0; i < n; ++i)
    refs.push_back({payloads[i].data(), payloads[i].size(), dense ? nullptr : dims[i].data()});
  auto w = StoreWriter::open(path, {.chunk_bytes = 512, .sync = false}, {.lanes = std::make_shared<Lanes>(lanes)});
  REQUIRE_OK(w);
  REQUIRE_OK(w.value()->append(refs));
  REQUIRE_OK(w.value()->close());
  return logical;
}

RecordLoc get_loc(const std::string& path, uint64_t id) {
  auto meta = test::read_file(path + "/meta.zr");
  return format::decode_record_loc(&meta[format::record_loc_offset(id)]);
}

void set_loc(const std::string& path, uint64_t id, const RecordLoc& loc) {
  auto meta = test::read_file(path + "/meta.zr");
  format::encode_record_loc(loc, &meta[format::record_loc_offset(id)]);
  test::write_file(path + "/meta.zr", meta);
}

}  // namespace

TEST_SUITE("verify") {
  TEST_CASE("valid stores of every codec, shard count and geometry verify clean") {
    for (Codec codec : {Codec::kRaw, Codec::kZstd, Codec::kZstdDict}) {
      for (uint32_t shards : {1u, 3u, 255u}) {
        for (bool dense : {true, false}) {
          CAPTURE(to_string(codec));
          CAPTURE(shards);
          CAPTURE(dense);
          test::TempDir dir;
          const std::string path = dir / "s";
          build(path, codec, shards, dense, 300);
          for (bool quick : {false, true}) {
            auto r = verify_store(path, {.quick = quick}, {.lanes = std::make_shared<Lanes>(3)});
            REQUIRE_OK(r);
            INFO((r->problems.empty() ? std::string() : r->problems[0].message));
            CHECK(r->valid());
            CHECK(r->records_checked == 300);
            CHECK(r->records_decoded == (quick ? 0 : 300));
            CHECK(r->overlap_checked);
          }
        }
      }
    }
  }

  TEST_CASE("problems carry the record, its shard and offset, and verify keeps going") {
    test::TempDir dir;
    const std::string path = dir / "s";
    build(path, Codec::kZstd, 3, true, 30);
    RecordLoc l4 = get_loc(path, 4), l8 = get_loc(path, 8), l20 = get_loc(path, 20);
    set_loc(path, 4, {l4.offset, 0, l4.logic_length});                           // phys_length 0
    set_loc(path, 8, {l8.offset, l8.phys_length, l8.logic_length + 1});          // Dense width
    set_loc(path, 20, {l20.offset + 1, l20.phys_length - 1, l20.logic_length});  // not a frame
    auto r = verify_store(path);
    REQUIRE_OK(r);
    REQUIRE(r->problem_count == 3);
    CHECK(r->problems[0].rule == "phys_length");
    CHECK(*r->problems[0].id == 4);
    CHECK(*r->problems[0].shard == 1);
    CHECK(*r->problems[0].offset == l4.offset);
    CHECK(r->problems[1].rule == "dense_width");
    CHECK(*r->problems[1].id == 8);
    CHECK(r->problems[2].rule == "decode");
    CHECK(*r->problems[2].id == 20);
    CHECK(*r->problems[2].shard == 2);
    CHECK(*r->problems[2].offset == l20.offset + 1);
    CHECK(r->records_decoded == 27);  // 30, less two bad RecordLocs and the frame that fails
    // max_errors stops early and says so.
    auto two = verify_store(path, {.max_errors = 2});
    REQUIRE_OK(two);
    CHECK(two->problem_count == 2);
    CHECK(two->stopped_early);
    CHECK(two->records_decoded == 0);  // both found by the table pass: the payload pass never ran
  }

  TEST_CASE("overlaps are found across passes of a small overlap budget") {
    test::TempDir dir;
    const std::string path = dir / "s";
    build(path, Codec::kRaw, 5, true, 500);
    // Records 7 and 12 (shard 2) share bytes; 13 (shard 3) straddles 8's end.
    set_loc(path, 12, get_loc(path, 7));
    RecordLoc l13 = get_loc(path, 13), l8 = get_loc(path, 8);
    set_loc(path, 13, {l8.offset + 8, l13.phys_length, l13.logic_length});
    auto ref = verify_store(path, {.quick = true});
    REQUIRE_OK(ref);
    REQUIRE(ref->problem_count >= 2);
    CHECK(ref->problems[0].rule == "overlap");
    CHECK(*ref->problems[0].shard == 2);
    CHECK((*ref->problems[0].id == 12 || *ref->problems[0].id == 7));
    bool found13 = false;
    for (const auto& p : ref->problems)
      found13 = found13 || (*p.id == 13 && *p.shard == 3 && p.message.find("overlap record 8") != std::string::npos);
    CHECK(found13);
    // The rules' pass checks shards 0, 1 and 4 (their records in ID order); shards 2
    // and 3, out of order, are sorted in one more.
    CHECK(ref->overlap_passes == 2);
    // The same problems, in the same order, whatever the number of passes: groups of
    // shards (150 entries), and data files larger than the budget (7 entries, 1 entry)
    // swept in several passes, the entries never taking more than the budget.
    for (uint64_t budget : {uint64_t{16} * 150, uint64_t{16} * 7, uint64_t{1}}) {
      CAPTURE(budget);
      auto r = verify_store(path, {.quick = true, .overlap_memory = budget});
      REQUIRE_OK(r);
      CHECK(r->overlap_passes > 1);
      CHECK(r->overlap_peak_bytes <= std::max<uint64_t>(budget, 16));
      if (budget < 16 * 100) CHECK(r->overlap_passes >= 2 * 100 * 16 / std::max<uint64_t>(budget, 16));
      REQUIRE(r->problem_count == ref->problem_count);
      for (size_t i = 0; i < r->problems.size(); ++i) {
        CHECK(r->problems[i].message == ref->problems[i].message);
        CHECK(r->problems[i].id == ref->problems[i].id);
      }
    }
  }

  TEST_CASE("progress is monotone and ends at the total, cancellation stops the run") {
    test::TempDir dir;
    const std::string path = dir / "s";
    build(path, Codec::kZstd, 3, false, 2000);
    uint64_t last = 0, total = 0;
    bool monotone = true;
    Context o;
    o.control.progress = [&](const Progress& p) {
      if (std::string(p.phase) != "records") return;
      monotone = monotone && p.records >= last && p.records <= p.total_records;
      last = p.records;
      total = p.total_records;
    };
    auto r = verify_store(path, {}, o);
    REQUIRE_OK(r);
    CHECK(monotone);
    CHECK(last == 2000);
    CHECK(total == 2000);
    Context c;
    std::atomic<int> stop{15};
    c.control.cancel = {&stop, -1};
    auto stopped = verify_store(path, {}, c);
    CHECK(stopped.status().code() == StatusCode::kCancelled);
    CHECK(stopped.status().message() == "interrupted");
  }

  TEST_CASE("per-record digests catch changed bytes in a raw store") {
    test::TempDir dir;
    const std::string path = dir / "s";
    const auto logical = build(path, Codec::kRaw, 3, false, 40);
    std::vector<std::array<uint8_t, 32>> sums;
    for (const auto& l : logical) sums.push_back(format::Sha256::hash(l.data(), l.size()));
    RecordDigestList list(sums);
    auto ok = verify_store(path, {.against = &list});
    REQUIRE_OK(ok);
    CHECK(ok->valid());
    CHECK(ok->digests_compared == 40);
    CHECK(ok->blind_spot() == VerifyBlindSpot::kNone);
    // Flip the last payload byte of record 10: the store is still well-formed.
    const RecordLoc l = get_loc(path, 10);
    auto data = test::read_file(path + "/data_1.zr");
    data[l.offset + l.phys_length - 1] ^= 0x40;
    test::write_file(path + "/data_1.zr", data);
    auto plain = verify_store(path);
    REQUIRE_OK(plain);
    CHECK(plain->valid());
    CHECK(plain->blind_spot() == VerifyBlindSpot::kRawPayloads);
    RecordDigestList again(sums);  // a list is read once
    auto r = verify_store(path, {.against = &again});
    REQUIRE_OK(r);
    REQUIRE(r->problem_count == 1);
    CHECK(r->problems[0].rule == "digest");
    CHECK(*r->problems[0].id == 10);
    CHECK(*r->problems[0].offset == l.offset);
  }

  TEST_CASE("per-record digests are read in order, a table chunk at a time, and to their end") {
    // A list that counts what verify asks of it, and fails past `fail_at` digests.
    struct Counting final : RecordDigests {
      std::vector<Hash> hashes;
      uint64_t at = 0, most_asked = 0, calls = 0, fail_at = UINT64_MAX;
      bool counted = false;
      Status next(uint64_t count, std::vector<Hash>& out) override {
        ++calls;
        most_asked = std::max(most_asked, count);
        if (at + count > fail_at) return invalid_argument("sums line " + std::to_string(fail_at + 1) + ": bad");
        const uint64_t take = std::min<uint64_t>(count, hashes.size() - at);
        out.assign(hashes.begin() + static_cast<ptrdiff_t>(at), hashes.begin() + static_cast<ptrdiff_t>(at + take));
        at += take;
        return Status::ok();
      }
      Result<uint64_t> count_all() override {
        counted = true;
        at = hashes.size();
        return hashes.size();
      }
    };
    test::TempDir dir;
    const std::string path = dir / "s";
    const size_t n = 70000;  // two table chunks of 65,536
    const auto logical = build(path, Codec::kRaw, 2, true, n);
    Counting sums;
    for (const auto& l : logical) sums.hashes.push_back(format::Sha256::hash(l.data(), l.size()));
    sums.hashes[66000][0] ^= 1;                 // record 66000 "changed"
    sums.hashes.push_back(sums.hashes.back());  // and one digest more than records
    auto r = verify_store(path, {.against = &sums});
    REQUIRE_OK(r);
    CHECK(sums.calls == 2);
    CHECK(sums.most_asked == 65536);
    CHECK(sums.counted);
    CHECK(r->digests_compared == n);
    REQUIRE(r->problem_count == 2);
    CHECK(r->problems[0].rule == "digest");
    CHECK(*r->problems[0].id == 66000);
    CHECK(r->problems[1].rule == "digest_count");  // known at the end of the list
    CHECK(r->problems[1].message.find("list 70001 records but the store holds 70000") != std::string::npos);

    // A list's error (a malformed line) stops the run and is its error.
    Counting failing;
    failing.hashes = sums.hashes;
    failing.fail_at = 65536 + 10;
    auto bad = verify_store(path, {.against = &failing});
    CHECK(bad.status().code() == StatusCode::kInvalidArgument);
    CHECK(bad.status().message() == "sums line 65547: bad");

    // Stopped early by max_errors, the list is still read to its end (its errors found).
    Counting stopped;
    stopped.hashes = sums.hashes;
    for (size_t i = 0; i < 10; ++i) stopped.hashes[i][0] ^= 1;
    auto early = verify_store(path, {.max_errors = 3, .against = &stopped});
    REQUIRE_OK(early);
    CHECK(early->stopped_early);
    CHECK(early->problem_count == 3);
    CHECK(stopped.counted);
  }

  TEST_CASE("store-level problems are one problem, missing paths and locks are errors") {
    test::TempDir dir;
    const std::string path = dir / "s";
    build(path, Codec::kZstd, 2, true, 5);
    auto meta = test::read_file(path + "/meta.zr");
    meta[12] = 1;  // a reserved byte
    test::write_file(path + "/meta.zr", meta);
    auto r = verify_store(path);
    REQUIRE_OK(r);
    CHECK_FALSE(r->opened);
    REQUIRE(r->problem_count == 1);
    CHECK(r->problems[0].rule == "store");
    CHECK_FALSE(r->problems[0].id.has_value());
    CHECK(verify_store(dir / "nothing").status().code() == StatusCode::kNotFound);
    CHECK(verify_store(path + "/meta.zr").status().code() == StatusCode::kInvalidArgument);
    const std::string other = dir / "t";
    build(other, Codec::kZstd, 2, true, 5);
    auto w = StoreWriter::open(other);
    REQUIRE_OK(w);
    CHECK(verify_store(other).status().code() == StatusCode::kBusy);
  }
}

TEST_SUITE("checksum") {
  TEST_CASE("create --checksum persists through an empty store, a reopen and an abort") {
    test::TempDir dir;
    const std::string path = dir / "s";
    CreateOptions o;
    o.schema = test::dense_schema({4, 2});
    o.checksum = true;
    REQUIRE_OK(create_store(path, o));
    CHECK(test::read_file(path + "/meta.zr").size() == format::kPageSize + format::kRecordLocSize);
    const auto rec = test::record_bytes(1, 32);
    std::vector<RecordRef> refs(10, RecordRef{rec.data(), rec.size(), nullptr});
    {
      auto w = StoreWriter::open(path);
      REQUIRE_OK(w);
      CHECK(w.value()->checksum());
      REQUIRE_OK(w.value()->append(refs));
      w.value()->abort();  // the marker comes back
    }
    {
      auto w = StoreWriter::open(path);
      REQUIRE_OK(w);
      CHECK(w.value()->checksum());
      REQUIRE_OK(w.value()->append(refs));
      REQUIRE_OK(w.value()->close());
    }
    {
      auto w = StoreWriter::open(path);  // from record 0's frame now
      REQUIRE_OK(w);
      CHECK(w.value()->checksum());
      REQUIRE_OK(w.value()->append(refs));
      REQUIRE_OK(w.value()->close());
    }
    {
      auto w = StoreWriter::open(path, {.checksum = false});  // an explicit choice wins
      REQUIRE_OK(w);
      CHECK_FALSE(w.value()->checksum());
      REQUIRE_OK(w.value()->append(refs));
      REQUIRE_OK(w.value()->close());
    }
    auto r = verify_store(path);
    REQUIRE_OK(r);
    CHECK(r->valid());
    CHECK(r->records_with_checksum == 20);
    CHECK(r->length == 30);
  }

  TEST_CASE("stores without the setting get no checksum, raw stores refuse it") {
    test::TempDir dir;
    CreateOptions o;
    o.schema = test::dense_schema({2});
    REQUIRE_OK(create_store(dir / "z", o));
    CHECK(test::read_file(dir / "z/meta.zr").size() == format::kPageSize);
    auto w = StoreWriter::open(dir / "z");
    REQUIRE_OK(w);
    CHECK_FALSE(w.value()->checksum());
    o.codec = Codec::kRaw;
    o.checksum = true;
    CHECK(create_store(dir / "r", o).code() == StatusCode::kInvalidArgument);
  }
}
