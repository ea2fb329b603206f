// Thousands of random single mutations of a good store's files (byte flips in meta.zr
// and the data files, truncations, extensions), each followed by every read path:
// Store::open, a full scan, a random gather, and verify_store. Under ASan/UBSan this
// is the proof that no damaged store makes zrec crash, hang or read out of bounds.
// It also checks that verify agrees with the readers: a store verify calls valid
// reads completely, and every store a reader refuses (kMalformed) is one verify
// reports problems in.
#include <numeric>
#include <random>

#include "zrec/store.h"
#include "zrec/store_writer.h"
#include "zrec/verify.h"

#include "cli/formats/record_format.h"
#include "testutil.h"

using namespace zrec;

namespace {

struct StoreFilesBytes {
  std::vector<std::string> names;
  std::vector<std::vector<uint8_t>> bytes;
};

StoreFilesBytes snapshot(const std::string& dir, Codec codec, uint32_t shards) {
  StoreFilesBytes s;
  s.names.push_back("meta.zr");
  for (uint32_t i = 0; i < shards; ++i) s.names.push_back("data_" + std::to_string(i) + ".zr");
  if (codec == Codec::kZstdDict) s.names.push_back("dict.zr");
  for (const auto& n : s.names) s.bytes.push_back(test::read_file(dir + "/" + n));
  return s;
}

void restore(const std::string& dir, const StoreFilesBytes& s) {
  for (size_t i = 0; i < s.names.size(); ++i) test::write_file(dir + "/" + s.names[i], s.bytes[i]);
}

// Reads everything a reader can: open, scan all, gather a few IDs. Returns the first error.
Status read_everything(const std::string& path, std::mt19937_64& rng) {
  auto store = Store::open(path, {}, {.lanes = std::make_shared<Lanes>(2)});
  if (!store.is_ok()) return store.status();
  Store& s = *store.value();
  std::vector<uint64_t> ids(s.length());
  std::iota(ids.begin(), ids.end(), uint64_t{0});
  uint64_t seen = 0;
  ZREC_RETURN_IF_ERROR(s.scan(ids, 4096, [&](const Window& w) {
    seen += w.ids.size();
    return Status::ok();
  }));
  if (seen != s.length()) return io_error("scan returned too few records");
  if (s.length() > 0 && s.schema().is_dense()) {
    std::vector<uint64_t> pick = {rng() % s.length(), rng() % s.length(), 0};
    std::vector<uint8_t> dest(pick.size() * s.schema().dense_width());
    ZREC_RETURN_IF_ERROR(s.gather(pick, nullptr, dest.data()));
  }
  return Status::ok();
}

}  // namespace

TEST_SUITE("mutation") {
  TEST_CASE("random flips, truncations and extensions never crash a reader, and verify agrees with them") {
    const int kPerStore = 400;  // x 6 stores = 2400 mutated stores
    std::mt19937_64 rng(20261129);
    int refused_by_reader = 0, found_by_verify = 0, valid = 0, total = 0;
    for (Codec codec : {Codec::kRaw, Codec::kZstd, Codec::kZstdDict}) {
      for (bool dense : {true, false}) {
        const std::string codec_name = to_string(codec);
        CAPTURE(codec_name);
        CAPTURE(dense);
        test::TempDir dir;
        const std::string path = dir / "s";
        const uint32_t shards = 3;
        CreateOptions o;
        o.schema.dtype = parse_dtype(dense ? "<i4" : "|u1").value();
        o.schema.ndim = dense ? 2 : 1;
        if (dense) o.schema.item_shape = std::vector<uint64_t>{2, 3};
        o.codec = codec;
        o.data_shards = shards;
        if (codec == Codec::kZstdDict)
          for (int i = 0; i < 512; ++i) o.dictionary.push_back(static_cast<uint8_t>(i * 7));
        REQUIRE_OK(create_store(path, o));
        {
          std::vector<std::vector<uint8_t>> payloads;
          std::vector<uint64_t> dims;
          for (size_t i = 0; i < 40; ++i) payloads.push_back(test::record_bytes(i, dense ? 24 : 1 + i * 3));
          for (size_t i = 0; i < 40; ++i) dims.push_back(payloads[i].size());
          std::vector<RecordRef> refs;
          for (size_t i = 0; i < 40; ++i)
            refs.push_back({payloads[i].data(), payloads[i].size(), dense ? nullptr : &dims[i]});
          auto w = StoreWriter::open(path, {.sync = false}, {.lanes = std::make_shared<Lanes>(2)});
          REQUIRE_OK(w);
          REQUIRE_OK(w.value()->append(refs));
          REQUIRE_OK(w.value()->close());
        }
        const StoreFilesBytes good = snapshot(path, codec, shards);
        for (int iter = 0; iter < kPerStore; ++iter) {
          CAPTURE(iter);
          StoreFilesBytes bad = good;
          const size_t f = rng() % 3 == 0 ? 1 + rng() % (bad.names.size() - 1) : 0;  // meta.zr 2/3 of the time
          auto& b = bad.bytes[f];
          const int kind = static_cast<int>(rng() % 10);
          if (kind < 7 && !b.empty()) {
            // 1..4 flipped bytes; in meta.zr, mostly the page header and the table.
            const int n = 1 + static_cast<int>(rng() % 4);
            for (int k = 0; k < n; ++k) {
              size_t pos = rng() % b.size();
              if (f == 0 && rng() % 2 == 0) {
                static const size_t kHot[] = {0, 8, 10, 11, 12, 16, 24, 32, 2056, 2060};
                pos = rng() % 3 == 0 ? kHot[rng() % 10] + rng() % 8 : 4096 + rng() % (b.size() - 4096 + 1);
                pos = std::min(pos, b.size() - 1);
              }
              b[pos] ^= static_cast<uint8_t>(1u << (rng() % 8));
              if (rng() % 4 == 0) b[pos] = static_cast<uint8_t>(rng());
            }
          } else if (kind < 9) {
            b.resize(b.empty() ? 0 : rng() % b.size());  // truncate
          } else {
            for (int k = 0; k < 1 + static_cast<int>(rng() % 64); ++k) b.push_back(static_cast<uint8_t>(rng()));
          }
          restore(path, bad);
          ++total;
          const Status read = read_everything(path, rng);
          auto report = verify_store(path, {}, {.lanes = std::make_shared<Lanes>(2)});
          REQUIRE(report.is_ok());  // no I/O error: every problem is the store's
          if (report->valid()) {
            ++valid;
            INFO(read.message());
            CHECK(read.is_ok());  // what verify calls valid, every reader reads
          } else {
            ++found_by_verify;
          }
          if (!read.is_ok()) {
            ++refused_by_reader;
            INFO(read.message());
            CHECK(read.code() == StatusCode::kMalformed);
            CHECK_FALSE(report->valid());
          }
          auto quick = verify_store(path, {.quick = true});
          REQUIRE(quick.is_ok());
          if (!quick->valid()) CHECK_FALSE(report->valid());
        }
        restore(path, good);
      }
    }
    MESSAGE("mutated stores: " << total << ", refused by the reader: " << refused_by_reader
                               << ", problems found by verify: " << found_by_verify << ", still valid: " << valid);
    CHECK(total == 6 * kPerStore);
  }
}

TEST_SUITE("mutation") {
  TEST_CASE("text and JSON renderings of arbitrary bytes in every dtype are defined behaviour") {
    // cat renders whatever bytes a store holds: a raw store with flipped payload bytes
    // passes every check, so the renderers must take any bit pattern (NaT, extreme
    // datetimes, NaN payloads, invalid code points, bool bytes other than 0/1).
    const char* dtypes[] = {"|b1",     "|i1",      "<i2",    ">i4",     "<i8",     "|u1",     ">u2",     "<u4",
                            "<u8",     "<f2",      ">f2",    "<f4",     ">f8",     "<c8",     ">c16",    "|S5",
                            "<U3",     ">U2",      "|V4",    "<M8",     "<M8[Y]",  "<M8[M]",  "<M8[W]",  "<M8[D]",
                            "<M8[h]",  "<M8[m]",   "<M8[s]", "<M8[ms]", "<M8[us]", "<M8[ns]", "<M8[ps]", "<M8[fs]",
                            "<M8[as]", ">M8[25s]", "<m8",    "<m8[Y]",  "<m8[as]", ">m8[7D]"};
    std::mt19937_64 rng(7);
    size_t rendered = 0;
    for (const char* text : dtypes) {
      CAPTURE(text);
      const DType dtype = parse_dtype(text).value();
      for (int iter = 0; iter < 300; ++iter) {
        const std::vector<uint64_t> shape = {1 + rng() % 3, 1 + rng() % 3};
        std::vector<uint8_t> data(shape[0] * shape[1] * dtype.itemsize);
        const int pattern = static_cast<int>(rng() % 5);
        for (size_t i = 0; i < data.size(); ++i) {
          const size_t in_item = i % dtype.itemsize;
          switch (pattern) {
            case 0:
              data[i] = static_cast<uint8_t>(rng());
              break;
            case 1:
              data[i] = 0xFF;
              break;
            case 2:
              data[i] = in_item == dtype.itemsize - 1 ? 0x80 : 0x00;
              break;  // most negative (LE)
            case 3:
              data[i] = in_item == 0 ? 0x80 : 0x00;
              break;  // most negative (BE)
            default:
              data[i] = in_item == dtype.itemsize - 1 ? 0x7F : 0xFF;
              break;  // most positive (LE)
          }
        }
        std::string out;
        cli::append_json_record(out, dtype, shape, data.data());
        cli::append_text_record(out, dtype, shape, data.data());
        CHECK(!out.empty());
        ++rendered;
      }
    }
    MESSAGE("records rendered: " << rendered);
  }
}
