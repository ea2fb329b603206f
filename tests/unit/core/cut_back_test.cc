// cut_back_store: the writer-side recovery of named streams left at unequal lengths
// (append-tar). A cut store reads back exactly its first records, its files end at the
// new tails, a later append continues at the cut, and bad lengths are refused.
#include "store/cut_back.h"

#include <unistd.h>

#include <numeric>

#include "zrec/dataset.h"
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
  auto w = StoreWriter::open(path, {.chunk_bytes = 256}, {.lanes = std::make_shared<Lanes>(threads)});
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

  TEST_CASE("a writer cuts back under its own lock and appends after the cut, in one session") {
    for (Codec codec : {Codec::kRaw, Codec::kZstd}) {
      test::TempDir dir;
      const std::string path = dir / "s";
      REQUIRE_OK(create_store(path, bytes_store(codec, 3)));
      append_range(path, 0, 120, 3);
      auto w = StoreWriter::open(path, {.chunk_bytes = 256}, {.lanes = std::make_shared<Lanes>(2)});
      REQUIRE_OK(w);
      StoreWriter& writer = *w.value();
      // Held for the whole cut: nothing else can open the store meanwhile.
      CHECK(Store::open(path).status().code() == StatusCode::kBusy);
      REQUIRE_OK(writer.cut_back(77));
      CHECK(writer.length() == 77);
      CHECK(writer.published_length() == 77);
      std::vector<std::vector<uint8_t>> data;
      std::vector<uint64_t> dims(30);
      std::vector<RecordRef> refs;
      for (uint64_t k = 0; k < 30; ++k) data.push_back(payload(77 + k));
      for (uint64_t k = 0; k < 30; ++k) {
        dims[k] = data[k].size();
        refs.push_back({data[k].data(), data[k].size(), &dims[k]});
      }
      REQUIRE_OK(writer.append(refs));
      REQUIRE_OK(writer.close());
      require_first_records(path, 107);
    }
  }

  TEST_CASE("cut_back refuses a longer length and unpublished records - an abort after a cut keeps the cut") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, bytes_store(Codec::kZstd, 2, true)));
    append_range(path, 0, 20, 1);
    auto w = StoreWriter::open(path);
    REQUIRE_OK(w);
    CHECK(w.value()->cut_back(21).message() == "cannot cut '" + path + "' back to 21 records: it holds 20");
    // (A failed cut leaves the writer able only to abort.)
    w.value()->abort();
    w = StoreWriter::open(path);
    REQUIRE_OK(w);
    const auto one = payload(99);
    const uint64_t dim = one.size();
    const RecordRef ref{one.data(), one.size(), &dim};
    REQUIRE_OK(w.value()->append({&ref, 1}));
    CHECK(w.value()->cut_back(5).message() == "cannot cut back a store with unpublished records");
    w.value()->abort();
    w = StoreWriter::open(path);
    REQUIRE_OK(w);
    REQUIRE_OK(w.value()->cut_back(0));
    CHECK(w.value()->checksum());
    w.value()->abort();
    require_first_records(path, 0);
    auto again = StoreWriter::open(path);
    REQUIRE_OK(again);
    CHECK(again.value()->checksum());  // the empty store kept its checksum setting
    again.value()->abort();
  }

  TEST_CASE("remove_empty_store takes back an empty store, and keeps one with records or other files") {
    test::TempDir dir;
    const std::string path = dir / "s";
    REQUIRE_OK(create_store(path, bytes_store(Codec::kZstd, 3)));
    REQUIRE_OK(remove_empty_store(path));
    CHECK(!is_store_dir(path));
    CHECK(::access(path.c_str(), F_OK) != 0);
    REQUIRE_OK(create_store(path, bytes_store()));
    append_range(path, 0, 3, 1);
    CHECK(remove_empty_store(path).message() == "'" + path + "' holds 3 records; it is kept");
    require_first_records(path, 3);
    const std::string other = dir / "o";
    REQUIRE_OK(create_store(other, bytes_store()));
    test::write_file(other + "/notes.txt", {'x'});
    CHECK(remove_empty_store(other).message() ==
          "'" + other + "' holds 'notes.txt', which is not a store file; it is kept");
    CHECK(is_store_dir(other));
    auto w = StoreWriter::open(other);
    REQUIRE_OK(w);
    CHECK(remove_empty_store(other).code() == StatusCode::kBusy);
    w.value()->abort();
  }
}
