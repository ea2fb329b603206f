// RecordLoc byte layout (docs/format.md §3): offset u64 at 0, phys_length u32 at 8, logic_length u32 at 12.
#include "format/record_loc.h"

#include "testutil.h"

using namespace zrec;

TEST_SUITE("record_loc") {
  TEST_CASE("encodes offset, phys_length, logic_length little-endian in that order") {
    uint8_t b[16];
    format::encode_record_loc({0x1122334455667788ull, 0xA0B0C0D0u, 0x01020304u}, b);
    const auto want = test::from_hex("8877665544332211d0c0b0a004030201");
    CHECK(std::equal(want.begin(), want.end(), b));
    CHECK(format::decode_record_loc(b) == RecordLoc{0x1122334455667788ull, 0xA0B0C0D0u, 0x01020304u});
  }

  TEST_CASE("RecordLoc[i] is at 4096 + 16*i") {
    CHECK(format::record_loc_offset(0) == 4096);
    CHECK(format::record_loc_offset(3) == 4096 + 48);
  }
}
