// Tests for the --parse number syntax (apps/cli/text_numbers): tokens, integer ranges
// per dtype, byte order, float conversion to f2/f4/f8 and the error messages.
#include "cli/formats/text_numbers.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>

namespace zrec::cli {
namespace {

std::vector<uint8_t> parse(const std::string& text, NumberSyntax syntax, const std::string& dtype,
                           Status* error = nullptr) {
  const DType d = parse_dtype(dtype).value();
  REQUIRE(check_number_dtype(syntax, d).is_ok());
  std::vector<uint8_t> out(count_number_tokens(text) * d.itemsize);
  Status s = parse_numbers(text, syntax, d, out.data());
  if (error != nullptr) *error = s;
  else REQUIRE_MESSAGE(s.is_ok(), s.message());
  return out;
}

std::string error_of(const std::string& text, NumberSyntax syntax, const std::string& dtype) {
  Status s;
  parse(text, syntax, dtype, &s);
  REQUIRE_FALSE(s.is_ok());
  CHECK(s.code() == StatusCode::kInvalidArgument);
  return s.message();
}

template <typename T>
std::vector<T> values(const std::vector<uint8_t>& bytes) {
  std::vector<T> v(bytes.size() / sizeof(T));
  std::memcpy(v.data(), bytes.data(), bytes.size());
  return v;
}

}  // namespace

TEST_SUITE("text_numbers") {
  TEST_CASE("tokens are separated by any run of white space") {
    CHECK(count_number_tokens("") == 0);
    CHECK(count_number_tokens("   \t\r") == 0);
    CHECK(count_number_tokens("1") == 1);
    CHECK(count_number_tokens(" 1  22\t333\r") == 3);
    CHECK(count_number_tokens("1\v2\f3\n4") == 4);
  }

  TEST_CASE("integers fill the dtype's range exactly, in either byte order") {
    CHECK(values<int32_t>(parse("0 -1 2147483647 -2147483648 +5", NumberSyntax::kInts, "<i4")) ==
          std::vector<int32_t>{0, -1, 2147483647, -2147483647 - 1, 5});
    CHECK(values<uint8_t>(parse("0 255", NumberSyntax::kInts, "|u1")) == std::vector<uint8_t>{0, 255});
    CHECK(values<int8_t>(parse("-128 127", NumberSyntax::kInts, "|i1")) == std::vector<int8_t>{-128, 127});
    CHECK(values<uint64_t>(parse("18446744073709551615", NumberSyntax::kInts, "<u8")) ==
          std::vector<uint64_t>{UINT64_MAX});
    CHECK(values<int64_t>(parse("-9223372036854775808", NumberSyntax::kInts, "<i8")) ==
          std::vector<int64_t>{INT64_MIN});
    CHECK(parse("258", NumberSyntax::kInts, ">u2") == std::vector<uint8_t>{0x01, 0x02});
    CHECK(parse("-2", NumberSyntax::kInts, ">i4") == std::vector<uint8_t>{0xff, 0xff, 0xff, 0xfe});
    CHECK(values<uint16_t>(parse("-0", NumberSyntax::kInts, "<u2")) == std::vector<uint16_t>{0});
  }

  TEST_CASE("integers out of range or not integers are refused, quoting the token") {
    CHECK(error_of("1 2147483648", NumberSyntax::kInts, "<i4") ==
          "'2147483648' is out of range for <i4 (-2147483648..2147483647)");
    CHECK(error_of("-129", NumberSyntax::kInts, "|i1") == "'-129' is out of range for |i1 (-128..127)");
    CHECK(error_of("256", NumberSyntax::kInts, "|u1") == "'256' is out of range for |u1 (0..255)");
    CHECK(error_of("-1", NumberSyntax::kInts, "<u4") == "'-1' is out of range for <u4 (0..4294967295)");
    CHECK(error_of("99999999999999999999", NumberSyntax::kInts, "<i8").find("out of range") != std::string::npos);
    CHECK(error_of("99999999999999999999", NumberSyntax::kInts, "<u8").find("out of range") != std::string::npos);
    CHECK(error_of("12x", NumberSyntax::kInts, "<i4") == "'12x' is not an integer");
    CHECK(error_of("1.0", NumberSyntax::kInts, "<i4") == "'1.0' is not an integer");
    CHECK(error_of("0x10", NumberSyntax::kInts, "<i4") == "'0x10' is not an integer");
    CHECK(error_of("+", NumberSyntax::kInts, "<i4") == "'+' is not an integer");
    CHECK(error_of("-", NumberSyntax::kInts, "<u4") == "'-' is not an integer");
    CHECK(error_of("+-1", NumberSyntax::kInts, "<i4") == "'+-1' is not an integer");
    const std::string longtok(100, '7');
    CHECK(error_of(longtok + "z", NumberSyntax::kInts, "<i4").size() < 80);
  }

  TEST_CASE("floats convert as NumPy does, overflow is refused") {
    const auto f8 = values<double>(parse("1 -2.5 1e-3 +4 inf -inf", NumberSyntax::kFloats, "<f8"));
    CHECK(f8 == std::vector<double>{1, -2.5, 1e-3, 4, INFINITY, -INFINITY});
    const auto f4 = values<float>(parse("0.1 3.4028235e38 1e-50", NumberSyntax::kFloats, "<f4"));
    CHECK(f4 == std::vector<float>{0.1f, 3.4028235e38f, 0.0f});
    CHECK(std::isnan(values<double>(parse("nan", NumberSyntax::kFloats, "<f8"))[0]));
    CHECK(parse("1", NumberSyntax::kFloats, ">f4") == std::vector<uint8_t>{0x3f, 0x80, 0, 0});
    CHECK(error_of("1e39", NumberSyntax::kFloats, "<f4") == "'1e39' overflows <f4");
    CHECK(error_of("1e400", NumberSyntax::kFloats, "<f8") == "'1e400' overflows <f8");
    CHECK(values<double>(parse("1e-400", NumberSyntax::kFloats, "<f8"))[0] == 0.0);
    CHECK(error_of("65520", NumberSyntax::kFloats, "<f2") == "'65520' overflows <f2");
    CHECK(error_of("1,5", NumberSyntax::kFloats, "<f4") == "'1,5' is not a number");
    CHECK(error_of("0x1p3", NumberSyntax::kFloats, "<f4") == "'0x1p3' is not a number");
  }

  TEST_CASE("double_to_half rounds to nearest even, with subnormals and infinities") {
    CHECK(double_to_half(0.0) == 0x0000);
    CHECK(double_to_half(-0.0) == 0x8000);
    CHECK(double_to_half(1.0) == 0x3c00);
    CHECK(double_to_half(-2.0) == 0xc000);
    CHECK(double_to_half(65504.0) == 0x7bff);
    CHECK(double_to_half(65519.99) == 0x7bff);
    CHECK(double_to_half(65520.0) == 0x7c00);  // halfway to 2^16 rounds up, to infinity
    CHECK(double_to_half(INFINITY) == 0x7c00);
    CHECK(double_to_half(-INFINITY) == 0xfc00);
    CHECK((double_to_half(NAN) & 0x7c00) == 0x7c00);
    CHECK((double_to_half(NAN) & 0x03ff) != 0);
    CHECK(double_to_half(std::ldexp(1.0, -14)) == 0x0400);                  // smallest normal
    CHECK(double_to_half(std::ldexp(1.0, -24)) == 0x0001);                  // smallest subnormal
    CHECK(double_to_half(std::ldexp(1.0, -25)) == 0x0000);                  // half of it: ties to even (0)
    CHECK(double_to_half(std::ldexp(1.5, -24)) == 0x0002);                  // 1.5 units: ties to even (2)
    CHECK(double_to_half(std::ldexp(1023.5, -24)) == 0x0400);               // rounds up into the normals
    CHECK(double_to_half(1.0 + std::ldexp(1.0, -11)) == 0x3c00);            // tie: even mantissa stays
    CHECK(double_to_half(1.0 + 3 * std::ldexp(1.0, -11)) == 0x3c02);        // tie: odd rounds up
    CHECK(double_to_half(2047.0 / 1024 + std::ldexp(1.0, -11)) == 0x4000);  // carries into the exponent
    CHECK(double_to_half(0.1) == 0x2e66);
  }

  TEST_CASE("dtypes that do not fit the syntax are refused with the dtypes that do") {
    CHECK(check_number_dtype(NumberSyntax::kInts, parse_dtype("<f4").value()).message().find("integer dtype") !=
          std::string::npos);
    CHECK(check_number_dtype(NumberSyntax::kFloats, parse_dtype("<i4").value()).message().find("float dtype") !=
          std::string::npos);
    CHECK_FALSE(check_number_dtype(NumberSyntax::kInts, parse_dtype("|b1").value()).is_ok());
    CHECK_FALSE(check_number_dtype(NumberSyntax::kInts, parse_dtype("<M8[ns]").value()).is_ok());
    CHECK_FALSE(check_number_dtype(NumberSyntax::kFloats, parse_dtype("<c8").value()).is_ok());
    CHECK(check_number_dtype(NumberSyntax::kFloats, parse_dtype(">f2").value()).is_ok());
  }

  TEST_CASE("a parsed record's size is checked against a record's limit, not the text's") {
    const DType i8 = parse_dtype("<i8").value(), u1 = parse_dtype("|u1").value();
    CHECK(parsed_record_bytes(3, i8).value() == 24);
    // The most a Ragged 1-D record holds: 2^31 - 9 bytes.
    CHECK(parsed_record_bytes((uint64_t{1} << 31) - 9, u1).value() == (uint64_t{1} << 31) - 9);
    CHECK_FALSE(parsed_record_bytes((uint64_t{1} << 31) - 8, u1).is_ok());
    // 2^28 tokens of "1 " are 512 MiB of text and 2 GiB of <i8: one byte too many.
    const Status s = parsed_record_bytes(uint64_t{1} << 28, i8).status();
    CHECK(s.code() == StatusCode::kInvalidArgument);
    CHECK(s.message() == "268435456 numbers of <i8 are 2147483648 bytes; a record holds at most 2147483639");
    // No overflow, however many numbers are claimed.
    CHECK(parsed_record_bytes(UINT64_MAX, i8).status().message() ==
          "18446744073709551615 numbers of <i8 are more than 2^64 bytes; a record holds at most 2147483639");
  }
}

}  // namespace zrec::cli
