// src/format/endian.h compiles on its own (this file includes it first and is built
// without the tests' precompiled header, CMakeLists.txt) and round-trips every width.
#include "format/endian.h"

#include <array>

#include <doctest/doctest.h>

using zrec::format::load_le;
using zrec::format::store_le;

TEST_SUITE("endian") {
  TEST_CASE("store_le writes the least significant byte first - load_le reads it back") {
    std::array<uint8_t, 8> b{};
    store_le<uint64_t>(b.data(), 0x0102030405060708ull);
    CHECK(b == std::array<uint8_t, 8>{8, 7, 6, 5, 4, 3, 2, 1});
    CHECK(load_le<uint64_t>(b.data()) == 0x0102030405060708ull);
    CHECK(load_le<uint32_t>(b.data()) == 0x05060708u);
    CHECK(load_le<uint16_t>(b.data() + 6) == 0x0102u);
    CHECK(load_le<uint8_t>(b.data() + 7) == 1);

    store_le<uint32_t>(b.data() + 1, 0xEC30A437u);  // unaligned, as in a packed page
    CHECK(b == std::array<uint8_t, 8>{8, 0x37, 0xA4, 0x30, 0xEC, 3, 2, 1});
    CHECK(load_le<uint32_t>(b.data() + 1) == 0xEC30A437u);

    store_le<uint16_t>(b.data(), 0xFFFF);
    CHECK(load_le<uint16_t>(b.data()) == 0xFFFF);
    store_le<uint64_t>(b.data(), ~uint64_t{0});
    CHECK(load_le<uint64_t>(b.data()) == ~uint64_t{0});
    store_le<uint64_t>(b.data(), 0);
    CHECK(load_le<uint64_t>(b.data()) == 0);
  }
}
