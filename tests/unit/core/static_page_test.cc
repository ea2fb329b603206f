// Byte layout of the static page (docs/format.md §2), pinned against hand-computed bytes.
#include "format/static_page.h"

#include <algorithm>

#include "testutil.h"

using namespace zrec;
using namespace zrec::format;

TEST_SUITE("static_page") {
  StaticPage sample() {
    StaticPage p;
    p.length = 0x0102030405060708ull;
    p.data_shards = 3;
    p.codec = Codec::kZstdDict;
    p.tails[0] = 0x1122;
    p.tails[2] = 0xAABBCCDDEEull;
    p.schema = std::string(
        "\x82\xa5"
        "dtype\xa3|u1\xa4ndim\x01",
        17);
    return p;
  }

  TEST_CASE("fields sit at offsets 0, 8, 10, 11, 12, 16 and 2056, little-endian") {
    const PageBytes b = encode_static_page(sample());
    CHECK(b.size() == 4096);
    const uint8_t length[] = {0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01};
    CHECK(std::equal(length, length + 8, b.begin()));
    CHECK(b[8] == 17);  // schema_length u16 LE
    CHECK(b[9] == 0);
    CHECK(b[10] == 3);  // data_shards
    CHECK(b[11] == 2);  // codec zstd_dict
    CHECK((b[12] | b[13] | b[14] | b[15]) == 0);
    CHECK(b[16] == 0x22);  // tails[0]
    CHECK(b[17] == 0x11);
    CHECK(b[16 + 8] == 0);      // tails[1]
    CHECK(b[16 + 16] == 0xEE);  // tails[2]
    CHECK(b[16 + 16 + 4] == 0xAA);
    CHECK(b[2056] == 0x82);
    CHECK(b[2056 + 16] == 0x01);
    CHECK(std::all_of(b.begin() + 2056 + 17, b.end(), [](uint8_t x) { return x == 0; }));
  }

  TEST_CASE("decode inverts encode") {
    const PageBytes b = encode_static_page(sample());
    auto page = decode_static_page(b);
    REQUIRE_OK(page);
    CHECK(page.value() == sample());
  }

  TEST_CASE("rejects nonzero reserved bytes") {
    for (int i = 12; i < 16; ++i) {
      PageBytes b = encode_static_page(sample());
      b[i] = 1;
      auto page = decode_static_page(b);
      REQUIRE_FALSE(page.is_ok());
      CHECK(page.status().code() == StatusCode::kMalformed);
      CHECK(page.status().message() == "reserved byte " + std::to_string(i) + " is not zero");
    }
  }

  TEST_CASE("rejects a tail slot at or past data_shards that is not zero") {
    PageBytes b = encode_static_page(sample());
    b[16 + 8 * 3] = 5;
    auto page = decode_static_page(b);
    REQUIRE_FALSE(page.is_ok());
    CHECK(page.status().message() == "tail slot 3 is 5 but the store has only 3 shards");
    PageBytes last = encode_static_page(sample());
    last[16 + 8 * 254 + 7] = 1;
    CHECK_FALSE(decode_static_page(last).is_ok());
  }

  TEST_CASE("rejects schema_length outside 1..2040") {
    for (uint16_t bad : {uint16_t{0}, uint16_t{2041}, uint16_t{0xFFFF}}) {
      PageBytes b = encode_static_page(sample());
      b[8] = static_cast<uint8_t>(bad);
      b[9] = static_cast<uint8_t>(bad >> 8);
      auto page = decode_static_page(b);
      REQUIRE_FALSE(page.is_ok());
      CHECK(page.status().message() == "schema_length " + std::to_string(bad) + " is outside 1..2040");
    }
    PageBytes b = encode_static_page(sample());
    b[8] = 2040 & 0xFF;
    b[9] = 2040 >> 8;
    CHECK(decode_static_page(b).is_ok());
  }

  TEST_CASE("rejects data_shards 0 and codec ids above 2") {
    PageBytes b = encode_static_page(sample());
    b[10] = 0;
    CHECK(decode_static_page(b).status().message() == "data_shards is 0 (must be 1..255)");
    PageBytes c = encode_static_page(sample());
    c[11] = 3;
    CHECK(decode_static_page(c).status().message() == "codec id 3 is not 0 (raw), 1 (zstd) or 2 (zstd_dict)");
  }

  TEST_CASE("rejects a length whose record table size overflows 64 bits") {
    StaticPage p = sample();
    p.length = (UINT64_MAX - 4096) / 16 + 1;
    auto page = decode_static_page(encode_static_page(p));
    REQUIRE_FALSE(page.is_ok());
    CHECK(page.status().message().find("overflows") != std::string::npos);
  }
}
