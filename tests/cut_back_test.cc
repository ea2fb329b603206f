// cut_back_store: the writer-side recovery of named streams left at unequal lengths
// (append-tar). A cut store reads back exactly its first records, its files end at the
// new tails, a later append continues at the cut, and bad lengths are refused.
#include "zrec/cut_back.h"

#include <numeric>

#include "zrec/store.h"
#include "zrec/store_writer.h"

#include "testutil.h"

using namespace zrec;

namespace {

CreateOptions bytes_store(Codec codec = Codec::kZstd, uint32_t shards = 4, bool checksum = false) {
  CreateOptions o;
  o.schema.dtype = parse_dtype("|u1").value();
  o.schema.ndim = 1;
  o.codec = codec;
  o.data_shards = shards;
  o.checksum = checksum;
  return o;
}

// Record i: i % 97 + 1 bytes of record_bytes(i, ...), so sizes differ per record.
std::vector<uint8_t> payload(uint64_t i) { return test::record_bytes(i, i % 97 + 1); }

void append_range(const std::string& path, uint64_t first, uint64_t count, size_t threads) {
  auto w = StoreWriter::open(path, {.lanes = std::make_shared<Lanes>(threads), .chunk_bytes = 256});
  REQUIRE_OK(w);
  std::vector<std::vector<uint8_t>> data;
  std::vector<uint64_t> dims(count);
  for (uint64_t k = 0; k < count; ++k) data.push_back(payload(first + k));
  std::vector<RecordRef> refs;
  for (uint64_t k = 0; k < count; ++k) {
    dims[k] = data[k].size();
    refs.push_back({data[k].data(), data[k].size(), &dims[k]});
  }
  REQUIRE_OK(w.value()->append(refs));
  REQUIRE_OK(w.value()->close());
}

void require_first_records(const std::string& path, uint64_t n) {
  auto store = Store::open(path);
  REQUIRE_OK(store);
  REQUIRE(store.value()->length() == n);
  std::vector<uint64_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  uint64_t seen = 0;
  REQUIRE_OK(store.value()->scan(ids, 1 << 16, [&](const Window& w) {
    for (size_t k = 0; k < w.ids.size(); ++k) {
      const auto want = payload(w.ids[k]);
      REQUIRE(w.offsets[k + 1] - w.offsets[k] == want.size() + 8);
      REQUIRE(std::equal(want.begin(), want.end(), w.data + w.offsets[k] + 8));
      ++seen;
    }
    return Status::ok();
  }));
  REQUIRE(seen == n);
}

}  // namespace

TEST_SUITE("cut_back") {
  TEST_CASE("cutting back keeps exactly the first records, with tails at their ends, and appends continue there") {
    for (Codec codec : {Codec::kRaw, Codec::kZstd}) {
      for (uint32_t shards : {1u, 3u}) {
        test::TempDir dir;
        const std::string path = dir / "s";
        REQUIRE_OK(create_store(path, bytes_store(codec, shards)));
        append_range(path, 0, 200, 4);  // several lanes: shard order differs from ID order
        append_range(path, 200, 100, 1);
        REQUIRE_OK(cut_back_store(path, 137));
        require_first_records(path, 137);
        {
          auto store = Store::open(path);
          REQUIRE_OK(store);
          std::vector<RecordLoc> locs(137);
          REQUIRE_OK(store.value()->read_locs(0, 137, locs.data()));
          for (uint32_t s = 0; s < shards; ++s) {
            uint64_t end = 0;
            for (uint64_t id = s; id < 137; id += shards) end = std::max(end, locs[id].offset + locs[id].phys_length);
            CHECK(store.value()->tail(s) == end);
          }
          for (const auto& [name, size] : store.value()->file_sizes()) {
            if (name == "meta.zr") CHECK(size == 4096 + 16 * 137);
            else CHECK(size == store.value()->tail(static_cast<uint32_t>(name[5] - '0')));
          }
        }
        append_range(path, 137, 50, 2);  // the next writer appends at the cut
        require_first_records(path, 187);
        REQUIRE_OK(cut_back_store(path, 187));  // equal: nothing changes
        require_first_records(path, 187);
        REQUIRE_OK(cut_back_store(path, 0));
        require_first_records(path, 0);
      }
    }
  }

  TEST_CASE("a longer length is refused, and a held store is busy") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, bytes_store()));
    append_range(path, 0, 10, 1);
    Status s = cut_back_store(path, 11);
    CHECK(s.message() == "cannot cut '" + path + "' back to 11 records: it holds 10");
    auto w = StoreWriter::open(path);
    REQUIRE_OK(w);
    CHECK(cut_back_store(path, 5).code() == StatusCode::kBusy);
    w.value()->abort();
    REQUIRE_OK(cut_back_store(path, 5));
    require_first_records(path, 5);
  }

  TEST_CASE("cutting a checksummed zstd store to zero keeps its checksum setting") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, bytes_store(Codec::kZstd, 4, true)));
    append_range(path, 0, 10, 1);
    REQUIRE_OK(cut_back_store(path, 0));
    auto w = StoreWriter::open(path);
    REQUIRE_OK(w);
    CHECK(w.value()->checksum());
    w.value()->abort();
  }
}
