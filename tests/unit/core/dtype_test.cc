// Tests for zrec::DType, parse_dtype and parse_canonical_dtype (docs/format.md §4, §10),
// plus the small helpers that live beside them: to_string(StatusCode), the codec names,
// checked_volume.
//
// Expected canonical strings and itemsizes were produced by NumPy 1.24.2,
// `np.dtype(x).str` and `np.dtype(x).itemsize`, and pasted here.
#include "zrec/dtype.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "zrec/format.h"
#include "zrec/schema.h"
#include "zrec/status.h"

namespace zrec {
namespace {

struct Canon {
  const char* input;
  const char* str;
  uint32_t itemsize;
};

// np.dtype(input).str, np.dtype(input).itemsize
constexpr Canon kNumpyCanon[] = {
    {"|u1", "|u1", 1},
    {">u1", "|u1", 1},
    {"<u1", "|u1", 1},
    {"=u1", "|u1", 1},
    {"u1", "|u1", 1},
    {"i1", "|i1", 1},
    {">i1", "|i1", 1},
    {"|i1", "|i1", 1},
    {"b1", "|b1", 1},
    {">b1", "|b1", 1},
    {"<b1", "|b1", 1},
    {"bool", "|b1", 1},
    {"int8", "|i1", 1},
    {"int16", "<i2", 2},
    {"int32", "<i4", 4},
    {"int64", "<i8", 8},
    {"uint8", "|u1", 1},
    {"uint16", "<u2", 2},
    {"uint32", "<u4", 4},
    {"uint64", "<u8", 8},
    {"i2", "<i2", 2},
    {"i4", "<i4", 4},
    {"i8", "<i8", 8},
    {"u2", "<u2", 2},
    {"u4", "<u4", 4},
    {"u8", "<u8", 8},
    {"=i4", "<i4", 4},
    {"|i4", "<i4", 4},
    {">i4", ">i4", 4},
    {"<i8", "<i8", 8},
    {">u2", ">u2", 2},
    {"f2", "<f2", 2},
    {"f4", "<f4", 4},
    {"f8", "<f8", 8},
    {">f8", ">f8", 8},
    {"=f4", "<f4", 4},
    {"|f8", "<f8", 8},
    {"float16", "<f2", 2},
    {"float32", "<f4", 4},
    {"float64", "<f8", 8},
    {"half", "<f2", 2},
    {"single", "<f4", 4},
    {"double", "<f8", 8},
    {"c8", "<c8", 8},
    {"c16", "<c16", 16},
    {">c8", ">c8", 8},
    {"complex64", "<c8", 8},
    {"complex128", "<c16", 16},
    {"S5", "|S5", 5},
    {"<S5", "|S5", 5},
    {">S5", "|S5", 5},
    {"|S16", "|S16", 16},
    {"S1", "|S1", 1},
    {"U3", "<U3", 12},
    {">U3", ">U3", 12},
    {"|U3", "<U3", 12},
    {"<U1", "<U1", 4},
    {"V4", "|V4", 4},
    {">V4", "|V4", 4},
    {"|V1", "|V1", 1},
    {"i04", "<i4", 4},
    {"S05", "|S5", 5},
    {"M8", "<M8", 8},
    {">M8", ">M8", 8},
    {"|m8", "<m8", 8},
    {"M8[ns]", "<M8[ns]", 8},
    {">M8[ns]", ">M8[ns]", 8},
    {"|M8[ns]", "<M8[ns]", 8},
    {"datetime64", "<M8", 8},
    {"datetime64[ns]", "<M8[ns]", 8},
    {"timedelta64", "<m8", 8},
    {"timedelta64[ms]", "<m8[ms]", 8},
    {"<m8[25s]", "<m8[25s]", 8},
    {"m8[1s]", "<m8[s]", 8},
    {"m8[60s]", "<m8[60s]", 8},
    {"M8[generic]", "<M8", 8},
    {"M8[Y]", "<M8[Y]", 8},
    {"M8[M]", "<M8[M]", 8},
    {"M8[W]", "<M8[W]", 8},
    {"M8[D]", "<M8[D]", 8},
    {"M8[h]", "<M8[h]", 8},
    {"M8[m]", "<M8[m]", 8},
    {"M8[s]", "<M8[s]", 8},
    {"M8[ms]", "<M8[ms]", 8},
    {"M8[us]", "<M8[us]", 8},
    {"M8[ps]", "<M8[ps]", 8},
    {"M8[fs]", "<M8[fs]", 8},
    {"M8[as]", "<M8[as]", 8},
    {"M8[2D]", "<M8[2D]", 8},
    {"m8[025s]", "<m8[25s]", 8},
    {"M8[2147483647s]", "<M8[2147483647s]", 8},
    {"M", "<M8", 8},
    {"m8", "<m8", 8},
    {"S2147483647", "|S2147483647", 2147483647},
    {"U536870911", "<U536870911", 2147483644},
};

}  // namespace

TEST_SUITE("dtype") {
  TEST_CASE("parse_dtype canonicalizes exactly as numpy.dtype(x).str") {
    for (const Canon& c : kNumpyCanon) {
      const std::string input = c.input;
      CAPTURE(input);
      auto d = parse_dtype(c.input);
      REQUIRE_MESSAGE(d.is_ok(), d.status().message());
      CHECK(d->str() == c.str);
      CHECK(d->itemsize == c.itemsize);
    }
  }

  TEST_CASE("every canonical form is accepted by parse_canonical_dtype and maps to itself") {
    for (const Canon& c : kNumpyCanon) {
      const std::string str = c.str;
      CAPTURE(str);
      auto d = parse_canonical_dtype(c.str);
      REQUIRE_MESSAGE(d.is_ok(), d.status().message());
      CHECK(d->str() == c.str);
      CHECK(*d == parse_dtype(c.input).value());
    }
  }

  TEST_CASE("sized names bytesN, strN, unicodeN and voidN are zrec spellings of S, U, V") {
    // NumPy 1.20+ no longer accepts these, so they are pinned to zrec's own meaning.
    CHECK(parse_dtype("bytes5")->str() == "|S5");
    CHECK(parse_dtype("str3")->str() == "<U3");
    CHECK(parse_dtype("unicode3")->str() == "<U3");
    CHECK(parse_dtype("void4")->str() == "|V4");
  }

  TEST_CASE("fields are decoded from the canonical string") {
    auto d = parse_dtype(">M8[25s]");
    REQUIRE(d.is_ok());
    CHECK(d->byte_order == '>');
    CHECK(d->kind == DTypeKind::kDatetime);
    CHECK(d->itemsize == 8);
    CHECK(d->unit == "25s");
    CHECK(d->big_endian());

    auto u = parse_dtype("<U8");
    REQUIRE(u.is_ok());
    CHECK(u->kind == DTypeKind::kUnicode);
    CHECK(u->itemsize == 32);
    CHECK(u->unit.empty());
    CHECK_FALSE(u->big_endian());

    auto g = parse_dtype("<m8");
    REQUIRE(g.is_ok());
    CHECK(g->kind == DTypeKind::kTimedelta);
    CHECK(g->unit.empty());  // generic unit
  }

  TEST_CASE("a default DType is |u1") {
    CHECK(DType{}.str() == "|u1");
    CHECK(DType{} == parse_dtype("uint8").value());
  }

  TEST_CASE("swap_unit is the size of the scalar a byte swap applies to") {
    CHECK(parse_dtype("|b1")->swap_unit() == 1);
    CHECK(parse_dtype("|u1")->swap_unit() == 1);
    CHECK(parse_dtype(">i2")->swap_unit() == 2);
    CHECK(parse_dtype("<f8")->swap_unit() == 8);
    CHECK(parse_dtype("<c8")->swap_unit() == 4);
    CHECK(parse_dtype(">c16")->swap_unit() == 8);
    CHECK(parse_dtype("|S16")->swap_unit() == 1);
    CHECK(parse_dtype("|V12")->swap_unit() == 1);
    CHECK(parse_dtype(">U3")->swap_unit() == 4);
    CHECK(parse_dtype("<M8[ns]")->swap_unit() == 8);
  }

  TEST_CASE("rejections name the text and the rule") {
    struct Bad {
      const char* text;
      const char* message;
    };
    const Bad cases[] = {
        {"", "dtype is empty"},
        {"i4,f8", "dtype 'i4,f8': structured dtypes are not supported"},
        {"[('a', '<i4')]", "dtype '[('a', '<i4')]': structured dtypes are not supported"},
        {"(2,)i4", "dtype '(2,)i4': subarray dtypes are not supported"},
        {"2i4", "dtype '2i4': subarray dtypes are not supported"},
        {"(2)i4", "dtype '(2)i4': subarray dtypes are not supported"},
        {"O", "dtype 'O': object dtype is not supported"},
        {"|O", "dtype '|O': object dtype is not supported"},
        {"object", "dtype 'object': object dtype is not supported"},
        {"S0", "dtype 'S0': zero itemsize is not allowed"},
        {"<U0", "dtype '<U0': zero itemsize is not allowed"},
        {"|V0", "dtype '|V0': zero itemsize is not allowed"},
        {"S", "dtype 'S': zero itemsize is not allowed"},
        {"bytes0", "dtype 'bytes0': zero itemsize is not allowed"},
        {"f16", "dtype 'f16': platform-dependent long doubles (f12, f16, c24, c32) are not supported"},
        {"<f12", "dtype '<f12': platform-dependent long doubles (f12, f16, c24, c32) are not supported"},
        {"c24", "dtype 'c24': platform-dependent long doubles (f12, f16, c24, c32) are not supported"},
        {">c32", "dtype '>c32': platform-dependent long doubles (f12, f16, c24, c32) are not supported"},
        {"longdouble", "dtype 'longdouble': platform-dependent long doubles (f12, f16, c24, c32) are not supported"},
        {"float128", "dtype 'float128': platform-dependent long doubles (f12, f16, c24, c32) are not supported"},
        {"M8[xs]",
         "dtype 'M8[xs]': unknown datetime unit 'xs' (expected Y, M, W, D, h, m, s, ms, us, ns, ps, fs or as)"},
        {"M8[NS]",
         "dtype 'M8[NS]': unknown datetime unit 'NS' (expected Y, M, W, D, h, m, s, ms, us, ns, ps, fs or as)"},
        {"M8[]", "dtype 'M8[]': unknown datetime unit '' (expected Y, M, W, D, h, m, s, ms, us, ns, ps, fs or as)"},
        {"M8[s/2]",
         "dtype 'M8[s/2]': unknown datetime unit 's/2' (expected Y, M, W, D, h, m, s, ms, us, ns, ps, fs or as)"},
        {"M8[0s]", "dtype 'M8[0s]': datetime unit multiplier must be at least 1"},
        {"M8[2147483648s]", "dtype 'M8[2147483648s]': datetime unit multiplier is larger than 2147483647"},
        {"M8[ns]x", "dtype 'M8[ns]x': malformed datetime unit"},
        {"<M8[ns", "dtype '<M8[ns': malformed datetime unit"},
        {"M4", "dtype 'M4': datetime64/timedelta64 must be 8 bytes"},
        {"i4[ns]", "dtype 'i4[ns]': not a supported dtype"},
        {"M[ns]", "dtype 'M[ns]': not a supported dtype"},  // numpy needs M8 before a unit
        {"S2147483648", "dtype 'S2147483648': itemsize is larger than 2147483647 bytes"},
        {"U536870912", "dtype 'U536870912': itemsize is larger than 2147483647 bytes"},
        {"i3", "dtype 'i3': not a supported dtype"},
        {"f1", "dtype 'f1': not a supported dtype"},
        {"b2", "dtype 'b2': not a supported dtype"},
        {"c4", "dtype 'c4': not a supported dtype"},
        {"i", "dtype 'i': not a supported dtype"},  // numpy's char codes are not accepted
        {"x4", "dtype 'x4': not a supported dtype"},
        {" i4", "dtype ' i4': not a supported dtype"},
        {"i4 ", "dtype 'i4 ': not a supported dtype"},
        {"i+4", "dtype 'i+4': not a supported dtype"},
        {"Int32", "dtype 'Int32': not a supported dtype"},
        {"<", "dtype '<': missing type letter"},
    };
    for (const Bad& b : cases) {
      const std::string text = b.text;
      CAPTURE(text);
      auto d = parse_dtype(b.text);
      REQUIRE_FALSE(d.is_ok());
      CHECK(d.status().code() == StatusCode::kInvalidArgument);
      CHECK(d.status().message() == b.message);
    }
  }

  TEST_CASE("parse_canonical_dtype refuses non-canonical spellings as malformed") {
    const char* cases[][2] = {
        {"i4", "<i4"},         {"=i4", "<i4"},          {"|i4", "<i4"},     {">u1", "|u1"},
        {"<b1", "|b1"},        {"<S5", "|S5"},          {"float32", "<f4"}, {"M8[ns]", "<M8[ns]"},
        {"<m8[1s]", "<m8[s]"}, {"<M8[generic]", "<M8"}, {"<i04", "<i4"},    {"|S05", "|S5"},
    };
    for (auto& c : cases) {
      const std::string text = c[0];
      CAPTURE(text);
      auto d = parse_canonical_dtype(c[0]);
      REQUIRE_FALSE(d.is_ok());
      CHECK(d.status().code() == StatusCode::kMalformed);
      CHECK(d.status().message() == std::string("dtype '") + c[0] + "' is not canonical (expected '" + c[1] + "')");
    }
  }

  TEST_CASE("parse_canonical_dtype reports grammar errors as malformed with the same text") {
    auto d = parse_canonical_dtype("<f16");
    REQUIRE_FALSE(d.is_ok());
    CHECK(d.status().code() == StatusCode::kMalformed);
    CHECK(d.status().message() ==
          "dtype '<f16': platform-dependent long doubles (f12, f16, c24, c32) are not supported");
  }
}

TEST_SUITE("status") {
  TEST_CASE("to_string names every status code") {
    CHECK(std::string(to_string(StatusCode::kOk)) == "ok");
    CHECK(std::string(to_string(StatusCode::kInvalidArgument)) == "invalid argument");
    CHECK(std::string(to_string(StatusCode::kNotFound)) == "not found");
    CHECK(std::string(to_string(StatusCode::kMalformed)) == "malformed");
    CHECK(std::string(to_string(StatusCode::kIoError)) == "I/O error");
    CHECK(std::string(to_string(StatusCode::kBusy)) == "busy");
    CHECK(std::string(to_string(StatusCode::kUnsupported)) == "unsupported");
    CHECK(std::string(to_string(StatusCode::kAlreadyExists)) == "already exists");
    CHECK(std::string(to_string(StatusCode::kCancelled)) == "cancelled");
    CHECK(std::string(to_string(static_cast<StatusCode>(9))) == "unknown");  // past the last code
  }
}

TEST_SUITE("codec names") {
  TEST_CASE("to_string and parse_codec spell every codec alike, and zstdict is another name for zstd_dict") {
    for (Codec c : {Codec::kRaw, Codec::kZstd, Codec::kZstdDict}) CHECK(parse_codec(to_string(c)) == c);
    CHECK(std::string(to_string(Codec::kRaw)) == "raw");
    CHECK(std::string(to_string(Codec::kZstd)) == "zstd");
    CHECK(std::string(to_string(Codec::kZstdDict)) == "zstd_dict");
    CHECK(std::string(to_string(static_cast<Codec>(3))) == "unknown");
    CHECK(parse_codec("zstdict") == Codec::kZstdDict);
    for (const char* bad : {"", "ZSTD", "zstd ", "lz4", "unknown", "zstd_dic"}) CHECK(parse_codec(bad) == std::nullopt);
  }
}

TEST_SUITE("checked_math") {
  TEST_CASE("checked_volume multiplies dims and itemsize") {
    const std::vector<uint64_t> dims = {3, 4, 5};
    CHECK(checked_volume(dims, 4) == std::optional<uint64_t>(240));
    CHECK(checked_volume({}, 8) == std::optional<uint64_t>(8));
    const std::vector<uint64_t> zero = {3, 0, 5};
    CHECK(checked_volume(zero, 4) == std::optional<uint64_t>(0));
  }

  TEST_CASE("checked_volume returns nullopt on 64-bit overflow and not a wrapped value") {
    constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
    const std::vector<uint64_t> fits = {kMax};
    CHECK(checked_volume(fits, 1) == std::optional<uint64_t>(kMax));
    CHECK_FALSE(checked_volume(fits, 2).has_value());
    const std::vector<uint64_t> wraps = {uint64_t{1} << 32, uint64_t{1} << 32};  // 2^64 wraps to 0
    CHECK_FALSE(checked_volume(wraps, 1).has_value());
    const std::vector<uint64_t> edge = {uint64_t{1} << 31, uint64_t{1} << 32};
    CHECK(checked_volume(edge, 1) == std::optional<uint64_t>(uint64_t{1} << 63));
    CHECK_FALSE(checked_volume(edge, 2).has_value());
  }
}

}  // namespace zrec
