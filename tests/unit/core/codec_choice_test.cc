// --codec auto (include/zrec/codec_choice.h): pick_codec's rule at and around its
// thresholds, and choose_codec on windows of records: random bytes -> raw, records
// sharing phrases -> zstd_dict with the same dictionary on 1 and 3 lanes, too few
// records for a dictionary -> zstd with a note; the empty store that waits for it, and
// the records a writer holds until they make a window.
#include "zrec/codec_choice.h"

#include <random>

#include "zrec/store.h"

#include "testutil.h"

using namespace zrec;

TEST_CASE("pick_codec: the smallest codec that clearly pays") {
  CHECK(pick_codec({.records = 0}) == Codec::kZstd);
  // zstd saves 10% exactly: kept; 9%: raw.
  CHECK(pick_codec({.records = 10, .raw = 1000, .zstd = 900}) == Codec::kZstd);
  CHECK(pick_codec({.records = 10, .raw = 1000, .zstd = 910}) == Codec::kRaw);
  // Already-compressed data (JPEG: zstd ~1% smaller) and tiny records (frames larger).
  CHECK(pick_codec({.records = 10, .raw = 1000, .zstd = 990}) == Codec::kRaw);
  CHECK(pick_codec({.records = 10, .raw = 100, .zstd = 180, .dict = 150}) == Codec::kRaw);
  // A dictionary: at most 90% of zstd and of raw.
  CHECK(pick_codec({.records = 10, .raw = 1000, .zstd = 600, .dict = 540}) == Codec::kZstdDict);
  CHECK(pick_codec({.records = 10, .raw = 1000, .zstd = 600, .dict = 550}) == Codec::kZstd);
  // zstd no gain, a dictionary a large one (records alike across, not within).
  CHECK(pick_codec({.records = 10, .raw = 1000, .zstd = 980, .dict = 400}) == Codec::kZstdDict);
  CHECK(pick_codec({.records = 10, .raw = 1000, .zstd = 1100, .dict = 950}) == Codec::kRaw);
}

namespace {

struct TestWindow {
  std::vector<std::vector<uint8_t>> payloads;
  std::vector<uint64_t> dims;
  std::vector<RecordRef> refs;
  void finish() {
    dims.resize(payloads.size());
    for (size_t i = 0; i < payloads.size(); ++i) {
      dims[i] = payloads[i].size();
      refs.push_back({payloads[i].data(), payloads[i].size(), &dims[i]});
    }
  }
};

Schema bytes_schema() {
  Schema s;
  s.dtype = parse_dtype("|u1").value();
  s.ndim = 1;
  return s;
}

// n records of 1..20 phrases out of 300 shared 32-byte phrases.
TestWindow phrases(size_t n) {
  std::mt19937_64 g(7);
  std::vector<std::vector<uint8_t>> table(300, std::vector<uint8_t>(32));
  for (auto& p : table)
    for (auto& b : p) b = static_cast<uint8_t>(g());
  TestWindow w;
  for (size_t i = 0; i < n; ++i) {
    std::vector<uint8_t> r;
    for (size_t k = 0, m = 1 + g() % 20; k < m; ++k) {
      const auto& p = table[g() % 300];
      r.insert(r.end(), p.begin(), p.end());
    }
    w.payloads.push_back(std::move(r));
  }
  w.finish();
  return w;
}

}  // namespace

TEST_CASE("choose_codec: random bytes are raw") {
  std::mt19937_64 g(1);
  TestWindow w;
  for (int i = 0; i < 500; ++i) {
    std::vector<uint8_t> r(300);
    for (auto& b : r) b = static_cast<uint8_t>(g());
    w.payloads.push_back(std::move(r));
  }
  w.finish();
  auto source = window_record_source(bytes_schema(), w.refs);
  auto c = choose_codec(*source);
  REQUIRE_OK(c);
  CHECK(c->codec == Codec::kRaw);
  CHECK(c->dictionary.empty());
  CHECK(c->population == 500);
}

TEST_CASE("choose_codec: shared phrases get a dictionary, the same on any lane count") {
  TestWindow w = phrases(3000);
  auto one = window_record_source(bytes_schema(), w.refs);
  auto a = choose_codec(*one, {.lanes = std::make_shared<Lanes>(1)});
  REQUIRE_OK(a);
  CHECK(a->codec == Codec::kZstdDict);
  CHECK(a->trained);
  CHECK(a->sizes.dict < a->sizes.zstd);
  CHECK(!a->dictionary.empty());
  auto three = window_record_source(bytes_schema(), w.refs);
  auto b = choose_codec(*three, {.lanes = std::make_shared<Lanes>(3)});
  REQUIRE_OK(b);
  CHECK(b->dictionary == a->dictionary);
  CHECK(describe_choice(*a).find("records sampled, ") != std::string::npos);
  CHECK(a->sampled > a->sizes.records);
}

TEST_CASE("choose_codec: too few records for a dictionary") {
  TestWindow w = phrases(12);
  auto source = window_record_source(bytes_schema(), w.refs);
  auto c = choose_codec(*source);
  REQUIRE_OK(c);
  CHECK(!c->trained);
  CHECK(c->codec != Codec::kZstdDict);
  CHECK(!c->note.empty());
}

TEST_CASE("an auto store: empty zstd store plus the pending file, chosen by the first window") {
  test::TempDir dir;
  const std::string path = dir / "s";
  CreateOptions o;
  o.schema = bytes_schema();
  o.codec_auto = true;
  REQUIRE_OK(create_store(path, o));
  {
    auto store = Store::open(path);
    REQUIRE_OK(store);
    CHECK(store.value()->codec() == Codec::kZstd);
    CHECK(store.value()->codec_pending());
  }
  TestWindow w = phrases(3000);
  {
    auto writer = StoreWriter::open(path);
    REQUIRE_OK(writer);
    // 3000 records of ~1 MiB: fewer than a window, so they are held until publication.
    REQUIRE_OK(writer.value()->append(std::span(w.refs).first(1000)));
    REQUIRE_OK(writer.value()->append(std::span(w.refs).subspan(1000)));
    CHECK(writer.value()->codec_choice() == nullptr);
    CHECK(writer.value()->length() == 3000);
    CHECK(writer.value()->published_length() == 0);
    REQUIRE_OK(writer.value()->publish());
    REQUIRE(writer.value()->codec_choice() != nullptr);
    CHECK(writer.value()->codec_choice()->population == 3000);
    CHECK(writer.value()->codec() == Codec::kZstdDict);
    REQUIRE_OK(writer.value()->close());
  }
  auto store = Store::open(path);
  REQUIRE_OK(store);
  CHECK(store.value()->codec() == Codec::kZstdDict);
  CHECK(!store.value()->codec_pending());
  CHECK(store.value()->length() == 3000);
  // A pending store takes neither another codec nor checksums.
  o.codec = Codec::kRaw;
  CHECK(create_store(dir / "t", o).code() == StatusCode::kInvalidArgument);
}
