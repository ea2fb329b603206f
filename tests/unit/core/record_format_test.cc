// Tests for apps/cli/formats/record_format: JSON and text rendering of every dtype kind.
// Input bytes are numpy's a.tobytes(); expected JSON for ints, f8, bool and U is
// json.dumps(a.tolist(), separators=(',', ':')) as generated with numpy 1.24.
#include "cli/formats/record_format.h"

#include <string>
#include <string_view>
#include <vector>

#include <doctest/doctest.h>

namespace zrec::cli {
namespace {

DType make_dtype(char byte_order, DTypeKind kind, uint32_t itemsize, std::string unit = "") {
  DType d;
  d.byte_order = byte_order;
  d.kind = kind;
  d.itemsize = itemsize;
  d.unit = std::move(unit);
  return d;
}

std::vector<uint8_t> from_hex(std::string_view hex) {
  std::vector<uint8_t> bytes;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    bytes.push_back(uint8_t(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return bytes;
}

std::string json(const DType& dtype, std::vector<uint64_t> shape, std::string_view hex) {
  const std::vector<uint8_t> data = from_hex(hex);
  std::string out;
  append_json_record(out, dtype, shape, data.data());
  return out;
}

std::string text(const DType& dtype, std::vector<uint64_t> shape, std::string_view hex) {
  const std::vector<uint8_t> data = from_hex(hex);
  std::string out;
  append_text_record(out, dtype, shape, data.data());
  return out;
}

}  // namespace

TEST_SUITE("record_format") {
  TEST_CASE("int32 matrix renders as nested arrays") {
    const DType i4 = make_dtype('<', DTypeKind::kInt, 4);
    const char* hex = "01000000feffffff030000000400000005000000faffffff";
    CHECK(json(i4, {2, 3}, hex) == "[[1,-2,3],[4,5,-6]]");
    CHECK(text(i4, {2, 3}, hex) == "[[1 -2 3]\n [4 5 -6]]");
  }

  TEST_CASE("three axes separate blocks with a blank line as numpy does") {
    const DType u1 = make_dtype('|', DTypeKind::kUInt, 1);
    CHECK(text(u1, {2, 2, 2}, "0001020304050607") == "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
    CHECK(json(u1, {2, 2, 2}, "0001020304050607") == "[[[0,1],[2,3]],[[4,5],[6,7]]]");
  }

  TEST_CASE("a 0-d record is a bare value") {
    const DType i2 = make_dtype('>', DTypeKind::kInt, 2);
    CHECK(json(i2, {}, "fffe") == "-2");
    CHECK(text(i2, {}, "fffe") == "-2");
  }

  TEST_CASE("integer extremes of every width and byte order") {
    CHECK(json(make_dtype('|', DTypeKind::kUInt, 1), {2}, "ff00") == "[255,0]");
    CHECK(json(make_dtype('|', DTypeKind::kInt, 1), {2}, "807f") == "[-128,127]");
    CHECK(json(make_dtype('>', DTypeKind::kUInt, 2), {2, 2}, "0001000200030004") == "[[1,2],[3,4]]");
    CHECK(json(make_dtype('<', DTypeKind::kInt, 8), {2}, "ffffffffffffff7f0000000000000080") ==
          "[9223372036854775807,-9223372036854775808]");
    CHECK(json(make_dtype('>', DTypeKind::kUInt, 8), {1}, "ffffffffffffffff") == "[18446744073709551615]");
  }

  TEST_CASE("bool renders as JSON literals and Python names") {
    const DType b1 = make_dtype('|', DTypeKind::kBool, 1);
    CHECK(json(b1, {1, 2}, "0100") == "[[true,false]]");
    CHECK(text(b1, {1, 2}, "0100") == "[[True False]]");
  }

  TEST_CASE("big-endian float32 uses its own shortest digits") {
    const DType f4 = make_dtype('>', DTypeKind::kFloat, 4);
    const char* hex = "3fc00000be80000060ad78ec40400000";  // [1.5, -0.25, 1e20, 3.0]
    CHECK(json(f4, {4}, hex) == "[1.5,-0.25,1e+20,3.0]");
    CHECK(text(f4, {4}, hex) == "[1.5 -0.25 1e+20 3.0]");
    CHECK(json(f4, {}, "3dcccccd") == "0.1");  // float32(0.1), not 0.10000000149011612
  }

  TEST_CASE("float64 matches Python's repr and json") {
    const DType f8 = make_dtype('<', DTypeKind::kFloat, 8);
    const char* hex = "9a9999999999b93f000000000000004059f3f8c21f6ea581c976be9f0c24fe40";
    CHECK(json(f8, {4}, hex) == "[0.1,2.0,-1e-300,123456.789]");
    CHECK(text(f8, {4}, hex) == "[0.1 2.0 -1e-300 123456.789]");
  }

  TEST_CASE("float16 decodes by hand and prints numpy's shortest digits") {
    const DType f2 = make_dtype('<', DTypeKind::kFloat, 2);
    CHECK(json(f2, {}, "003c") == "1.0");  // 0x3C00
    CHECK(text(f2, {}, "003c") == "1.0");
    // 1.0, 65504, 0.1, smallest subnormal, 2 * that, -2.5, 0.3333, 1000.5
    const char* hex = "003cff7b662e0100020000c15535d163";
    CHECK(text(f2, {8}, hex) == "[1.0 65500.0 0.1 6e-08 1e-07 -2.5 0.3333 1000.5]");
    CHECK(text(make_dtype('>', DTypeKind::kFloat, 2), {2}, "6c00bc00") == "[4096.0 -1.0]");
    // 2^-6: the interval below a power of two is half as wide, so the nearest 4-digit
    // decimal (0.01562) misses it and numpy rounds up instead.
    CHECK(text(f2, {}, "0024") == "0.01563");
  }

  TEST_CASE("non-finite floats follow numpy in text and Python's json module in JSON") {
    const DType f2 = make_dtype('<', DTypeKind::kFloat, 2);
    CHECK(json(f2, {3}, "007c00fc007e") == "[Infinity,-Infinity,NaN]");
    CHECK(text(f2, {3}, "007c00fc007e") == "[inf -inf nan]");
    const DType f8 = make_dtype('<', DTypeKind::kFloat, 8);
    CHECK(json(f8, {}, "000000000000f8ff") == "NaN");  // negative quiet NaN
    CHECK(text(f8, {}, "000000000000f8ff") == "nan");
    CHECK(text(f8, {}, "0000000000000080") == "-0.0");
  }

  TEST_CASE("complex values are [re, im] in JSON and 1+2j in text") {
    const DType c16 = make_dtype('<', DTypeKind::kComplex, 16);
    const char* hex16 = "000000000000f03f0000000000000040000000000000e0bf000000000000f0bf";
    CHECK(json(c16, {2}, hex16) == "[[1.0,2.0],[-0.5,-1.0]]");
    CHECK(text(c16, {2}, hex16) == "[1+2j -0.5-1j]");
    const DType c8 = make_dtype('>', DTypeKind::kComplex, 8);
    CHECK(text(c8, {2}, "3f80000040000000bf000000bf800000") == "[1+2j -0.5-1j]");
    CHECK(text(c8, {}, "000000007fc00000") == "0+nanj");
  }

  TEST_CASE("bytes strip trailing NULs and escape like Python") {
    const DType s3 = make_dtype('|', DTypeKind::kBytes, 3);
    const char* hex = "616200610000782779";  // [b'ab', b'a\0\0', b"x'y"]
    CHECK(text(s3, {3}, hex) == "[b'ab' b'a' b\"x'y\"]");
    CHECK(json(s3, {3}, hex) == "[\"ab\",\"a\",\"x'y\"]");
    CHECK(text(s3, {}, "00410a") == "b'\\x00A\\n'");  // only trailing NULs go
    CHECK(json(s3, {}, "e9225c") == "\"\\u00e9\\\"\\\\\"");
    CHECK(text(s3, {}, "e9225c") == "b'\\xe9\"\\\\'");
  }

  TEST_CASE("unicode decodes UTF-32 in either byte order to UTF-8") {
    const DType u2 = make_dtype('<', DTypeKind::kUnicode, 8);
    const char* hex = "68000000e9000000ac20000000f601006100000000000000";  // hé, €😀, a
    CHECK(text(u2, {3}, hex) == "['h\xc3\xa9' '\xe2\x82\xac\xf0\x9f\x98\x80' 'a']");
    CHECK(json(u2, {3}, hex) == "[\"h\xc3\xa9\",\"\xe2\x82\xac\xf0\x9f\x98\x80\",\"a\"]");
    CHECK(text(make_dtype('>', DTypeKind::kUnicode, 8), {}, "00000068000000e9") == "'h\xc3\xa9'");
    // A surrogate and a value past U+10FFFF are shown as U+FFFD; a control char is escaped.
    CHECK(json(u2, {}, "00d8000000001100") == "\"\xef\xbf\xbd\xef\xbf\xbd\"");
    CHECK(json(make_dtype('<', DTypeKind::kUnicode, 4), {}, "01000000") == "\"\\u0001\"");
    CHECK(text(make_dtype('<', DTypeKind::kUnicode, 4), {}, "01000000") == "'\\x01'");
  }

  TEST_CASE("void is hex") {
    const DType v2 = make_dtype('|', DTypeKind::kVoid, 2);
    CHECK(json(v2, {2}, "0102ab00") == "[\"0102\",\"ab00\"]");
    CHECK(text(v2, {2}, "0102ab00") == "[0x0102 0xab00]");
  }

  TEST_CASE("datetime64 days render as ISO dates and NaT") {
    const DType days = make_dtype('<', DTypeKind::kDatetime, 8, "D");
    const char* hex = "384a000000000000ffffffffffffffff0000000000000080";  // 19000, -1, NaT
    CHECK(text(days, {3}, hex) == "[2022-01-08 1969-12-31 NaT]");
    CHECK(json(days, {3}, hex) == "[19000,-1,null]");
  }

  TEST_CASE("datetime64 clock units render to their resolution") {
    const DType s = make_dtype('<', DTypeKind::kDatetime, 8, "s");
    CHECK(text(s, {2}, "257d9365000000000000000000000000") == "[2024-01-02T03:04:05 1970-01-01T00:00:00]");
    CHECK(json(s, {2}, "257d9365000000000000000000000000") == "[1704164645,0]");
    const DType ms = make_dtype('<', DTypeKind::kDatetime, 8, "ms");
    CHECK(text(ms, {2}, "ffffffffffffffffdc05000000000000") == "[1969-12-31T23:59:59.999 1970-01-01T00:00:01.500]");
    // 1 hour, 1 minute, 1 attosecond, 1 picosecond; 10 of [25s] is 250 s (as numpy shows it).
    CHECK(text(make_dtype('<', DTypeKind::kDatetime, 8, "h"), {}, "0100000000000000") == "1970-01-01T01");
    CHECK(text(make_dtype('<', DTypeKind::kDatetime, 8, "m"), {}, "0100000000000000") == "1970-01-01T00:01");
    CHECK(text(make_dtype('<', DTypeKind::kDatetime, 8, "as"), {}, "0100000000000000") ==
          "1970-01-01T00:00:00.000000000000000001");
    CHECK(text(make_dtype('>', DTypeKind::kDatetime, 8, "ps"), {}, "0000000000000001") ==
          "1970-01-01T00:00:00.000000000001");
    CHECK(text(make_dtype('<', DTypeKind::kDatetime, 8, "25s"), {}, "0a00000000000000") == "1970-01-01T00:04:10");
    // numpy would overflow multiplying by 7; the true date is shown.
    CHECK(text(make_dtype('<', DTypeKind::kDatetime, 8, "7D"), {}, "ffffffffffffff7f") == "176769144494367851-12-25");
  }

  TEST_CASE("datetime64 calendar units and years outside 0..9999 match numpy") {
    // numpy: M8[Y] 1, M8[M] -9, M8[W] 1, M8[D] -719529, -800000, 3650000
    CHECK(text(make_dtype('<', DTypeKind::kDatetime, 8, "Y"), {}, "0100000000000000") == "1971");
    CHECK(text(make_dtype('<', DTypeKind::kDatetime, 8, "M"), {}, "f7ffffffffffffff") == "1969-04");
    CHECK(text(make_dtype('<', DTypeKind::kDatetime, 8, "W"), {}, "0100000000000000") == "1970-01-08");
    const DType days = make_dtype('<', DTypeKind::kDatetime, 8, "D");
    CHECK(text(days, {}, "5705f5ffffffffff") == "-001-12-31");
    CHECK(text(days, {}, "00cbf3ffffffffff") == "-221-09-04");
    CHECK(text(days, {}, "d0b1370000000000") == "11963-05-13");
  }

  TEST_CASE("timedelta64 is a count and unit, generic datetime a bare count") {
    const DType m8 = make_dtype('<', DTypeKind::kTimedelta, 8, "25s");
    CHECK(text(m8, {2}, "03000000000000000000000000000080") == "[3 25s NaT]");
    CHECK(json(m8, {2}, "03000000000000000000000000000080") == "[3,null]");
    CHECK(text(make_dtype('<', DTypeKind::kDatetime, 8, ""), {}, "0500000000000000") == "5");
  }
}

}  // namespace zrec::cli

namespace zrec::cli {
namespace {

// Summaries (cat on a terminal): numpy's print with threshold 1000, edgeitems 3.
TEST_CASE("records of more than 1000 values are summarised as numpy prints them") {
  const DType u1 = make_dtype('|', DTypeKind::kUInt, 1);
  std::vector<uint8_t> data(1001);
  for (size_t i = 0; i < data.size(); ++i) data[i] = uint8_t(i % 256);
  std::string out;
  append_text_record(out, u1, std::vector<uint64_t>{1001}, data.data(), true);
  CHECK(out == "[0 1 2 ... 230 231 232]");
  out.clear();
  append_json_record(out, u1, std::vector<uint64_t>{1001}, data.data(), true);
  CHECK(out == "[0,1,2,\"...\",230,231,232]");
  // 1000 values are printed whole; so is any record without `summarise`.
  out.clear();
  append_text_record(out, u1, std::vector<uint64_t>{1000}, data.data(), true);
  CHECK(out.find("...") == std::string::npos);
  out.clear();
  append_text_record(out, u1, std::vector<uint64_t>{1001}, data.data(), false);
  CHECK(out.find("...") == std::string::npos);
  // Axes of 6 or fewer keep every entry; longer ones elide their middle rows.
  out.clear();
  append_text_record(out, u1, std::vector<uint64_t>{7, 143}, data.data(), true);
  CHECK(out.substr(0, 25) == "[[0 1 2 ... 140 141 142]\n");
  CHECK(out.find("\n ...\n [") != std::string::npos);
  CHECK(out.ends_with("\n [90 91 92 ... 230 231 232]]"));  // row 6 starts at 858 = 90 mod 256
}

}  // namespace
}  // namespace zrec::cli
