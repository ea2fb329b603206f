// Tests for the .npy header reader and writer (apps/cli/formats/npy.h).
//
// Every expected byte string below was written by NumPy 1.24.2 (np.save, or
// numpy.lib.format.write_array / _write_array_header for versions and shapes np.save
// cannot make on its own) and pasted here as: the magic/version/length prefix, the dict
// text, the number of spaces that follow it (growth room plus alignment), then '\n'.
#include "cli/formats/npy.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "zrec/dtype.h"
#include "zrec/format.h"

#include "zrec_support/input_stream.h"

namespace zrec::cli {
namespace {

std::string npy_bytes(const std::string& prefix, const std::string& dict, size_t spaces, const std::string& data = "") {
  return prefix + dict + std::string(spaces, ' ') + "\n" + data;
}

// The bytes as a readable stream, backed by an anonymous in-memory file (a pipe would
// block on headers larger than its 64 KiB capacity).
class ByteSource {
 public:
  explicit ByteSource(const std::string& bytes, const std::string& name = "-") {
    fd_ = ::memfd_create("npy_test", 0);
    REQUIRE(fd_ >= 0);
    REQUIRE(::write(fd_, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size()));
    REQUIRE(::lseek(fd_, 0, SEEK_SET) == 0);
    stream_.emplace(fd_, name, Control{}, 4096);
  }
  ~ByteSource() { ::close(fd_); }
  io::InputStream& stream() { return *stream_; }

 private:
  int fd_ = -1;
  std::optional<io::InputStream> stream_;
};

DType dt(const char* s) { return parse_dtype(s).value(); }

// Reads one header from `bytes` and returns its error message ("" when it parsed).
std::string read_error(const std::string& bytes) {
  ByteSource src(bytes);
  auto h = read_npy_header(src.stream());
  return h.is_ok() ? "" : h.status().message();
}

std::string dict_error(const std::string& dict) {
  auto h = parse_npy_header_dict(dict, "w");
  return h.is_ok() ? "" : h.status().message();
}

const std::string kV1 = std::string("\x93NUMPY\x01\x00v\x00", 10);

struct Pinned {
  const char* descr;
  std::vector<uint64_t> shape;
  std::string prefix;
  const char* dict;
  size_t spaces;
};

}  // namespace

TEST_SUITE("npy") {
  TEST_CASE("encode_npy_header writes exactly the bytes numpy.save writes") {
    const Pinned cases[] = {
        {"<i4", {3, 4}, kV1, "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }", 58},
        {"|u1", {2, 3, 5, 7}, kV1, "{'descr': '|u1', 'fortran_order': False, 'shape': (2, 3, 5, 7), }", 52},
        {"<U8", {5}, kV1, "{'descr': '<U8', 'fortran_order': False, 'shape': (5,), }", 60},
        {"<f8", {}, kV1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 62},
        {">f4", {2}, kV1, "{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 60},
        {"|b1", {0}, kV1, "{'descr': '|b1', 'fortran_order': False, 'shape': (0,), }", 60},
        {"<M8[ns]", {4}, kV1, "{'descr': '<M8[ns]', 'fortran_order': False, 'shape': (4,), }", 56},
        {"<c16", {1, 2, 3}, kV1, "{'descr': '<c16', 'fortran_order': False, 'shape': (1, 2, 3), }", 54},
        {"|S16", {10}, kV1, "{'descr': '|S16', 'fortran_order': False, 'shape': (10,), }", 58},
        {"<m8[25s]", {1}, kV1, "{'descr': '<m8[25s]', 'fortran_order': False, 'shape': (1,), }", 55},
        {"<i8",
         {18446744073709551615ull},
         kV1,
         "{'descr': '<i8', 'fortran_order': False, 'shape': (18446744073709551615,), }",
         41},
        {"<i2",
         {123456789012ull, 7},
         kV1,
         "{'descr': '<i2', 'fortran_order': False, 'shape': (123456789012, 7), }",
         47},
        // 192 bytes: the dict outgrows the first 128.
        {"<f2", std::vector<uint64_t>(20, 1), std::string("\x93NUMPY\x01\x00\xb6\x00", 10),
         "{'descr': '<f2', 'fortran_order': False, 'shape': (1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, "
         "1, 1, 1, 1, 1, 1), }",
         68},
        // The dict, growth room and '\n' end exactly on a 64-byte boundary, and numpy
        // still pads a full 64 spaces (18 growth + 64).
        {"<i4", std::vector<uint64_t>(22, 100), std::string("\x93NUMPY\x01\x00\xf6\x00", 10),
         "{'descr': '<i4', 'fortran_order': False, 'shape': (100, 100, 100, 100, 100, 100, 100, 100, "
         "100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100), }",
         82},
    };
    for (const Pinned& c : cases) {
      const std::string descr = c.descr;
      CAPTURE(descr);
      CAPTURE(c.shape.size());
      const std::string expected = npy_bytes(c.prefix, c.dict, c.spaces);
      const std::string got = encode_npy_header(dt(c.descr), c.shape);
      CHECK(got == expected);
      CHECK(got.size() % 64 == 0);
    }
  }

  TEST_CASE("encode_npy_header switches to version 2.0 only past the u16 length field") {
    // 21817 dims of 1: the last shape numpy still writes as 1.0 (65536 bytes in all).
    std::string v1 = encode_npy_header(dt("|u1"), std::vector<uint64_t>(21817, 1));
    CHECK(v1.size() == 65536);
    CHECK(v1.substr(0, 10) == std::string("\x93NUMPY\x01\x00\xf6\xff", 10));
    // 21818 dims: numpy switches to 2.0 (65600 bytes, u32 length 65588).
    std::string v2 = encode_npy_header(dt("|u1"), std::vector<uint64_t>(21818, 1));
    CHECK(v2.size() == 65600);
    CHECK(v2.substr(0, 12) == std::string("\x93NUMPY\x02\x00\x34\x00\x01\x00", 12));
    // 22000 dims, checked against numpy to the byte: 66053 dict bytes, 46 spaces, '\n'.
    std::string big = encode_npy_header(dt("|u1"), std::vector<uint64_t>(22000, 1));
    std::string dict = "{'descr': '|u1', 'fortran_order': False, 'shape': (";
    for (int i = 0; i < 22000; ++i) dict += i ? ", 1" : "1";
    dict += "), }";
    CHECK(dict.size() == 66053);
    CHECK(big == npy_bytes(std::string("\x93NUMPY\x02\x00\x34\x02\x01\x00", 12), dict, 46));

    for (const std::string* s : {&v1, &v2, &big}) {
      ByteSource src(*s);
      auto h = read_npy_header(src.stream());
      REQUIRE_MESSAGE(h.is_ok(), h.status().message());
      REQUIRE(h->has_value());
      CHECK((*h)->element_count == 1);
      CHECK(src.stream().position() == s->size());
    }
  }

  TEST_CASE("reads arrays numpy wrote as versions 1.0, 2.0 and 3.0") {
    const std::string dict = "{'descr': '<i2', 'fortran_order': False, 'shape': (2, 3), }";
    const std::string data("\x00\x00\x01\x00\x02\x00\x03\x00\x04\x00\x05\x00", 12);
    const std::string files[] = {
        npy_bytes(kV1, dict, 58, data),
        npy_bytes(std::string("\x93NUMPY\x02\x00t\x00\x00\x00", 12), dict, 56, data),
        npy_bytes(std::string("\x93NUMPY\x03\x00t\x00\x00\x00", 12), dict, 56, data),
    };
    for (const std::string& file : files) {
      CHECK(file.size() == 140);
      ByteSource src(file);
      auto h = read_npy_header(src.stream());
      REQUIRE_MESSAGE(h.is_ok(), h.status().message());
      REQUIRE(h->has_value());
      const NpyHeader& hdr = **h;
      CHECK(hdr.dtype.str() == "<i2");
      CHECK_FALSE(hdr.fortran_order);
      CHECK(hdr.shape == std::vector<uint64_t>{2, 3});
      CHECK(hdr.element_count == 6);
      CHECK(hdr.data_bytes == 12);
      CHECK(src.stream().position() == 128);  // the data follows at once
      std::string payload(12, '\0');
      CHECK(src.stream().read_full(payload.data(), 12).value() == 12);
      CHECK(payload == data);
    }
  }

  TEST_CASE("reads a Fortran-order array, a 0-d array and a unicode array from numpy") {
    {
      ByteSource src(npy_bytes(kV1, "{'descr': '>u2', 'fortran_order': True, 'shape': (2, 2), }", 59,
                               std::string("\x00\x01\x00\x03\x00\x02\x00\x04", 8)));
      auto h = read_npy_header(src.stream());
      REQUIRE(h.is_ok());
      CHECK((*h)->fortran_order);
      CHECK((*h)->dtype.str() == ">u2");
      CHECK((*h)->data_bytes == 8);
    }
    {
      ByteSource src(npy_bytes(kV1, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }", 62,
                               std::string("\x00\x00\x00\x00\x00\x00\x1e@", 8)));
      auto h = read_npy_header(src.stream());
      REQUIRE(h.is_ok());
      CHECK((*h)->shape.empty());
      CHECK((*h)->element_count == 1);
      CHECK((*h)->data_bytes == 8);
    }
    {
      ByteSource src(npy_bytes(kV1, "{'descr': '<U2', 'fortran_order': False, 'shape': (2,), }", 60));
      auto h = read_npy_header(src.stream());
      REQUIRE(h.is_ok());
      CHECK((*h)->dtype.str() == "<U2");
      CHECK((*h)->data_bytes == 16);
    }
  }

  TEST_CASE("zero-element arrays parse, callers decide whether to accept them") {
    auto h = parse_npy_header_dict("{'descr': '|b1', 'fortran_order': False, 'shape': (0,), }", "w");
    REQUIRE(h.is_ok());
    CHECK(h->element_count == 0);
    CHECK(h->data_bytes == 0);
  }

  TEST_CASE("a stream of concatenated arrays ends cleanly with nullopt") {
    const std::string a = encode_npy_header(dt("<i4"), std::vector<uint64_t>{2}) + std::string(8, 'a');
    const std::string b = encode_npy_header(dt("|u1"), std::vector<uint64_t>{3}) + "bbb";
    ByteSource src(a + b);
    io::InputStream& in = src.stream();

    auto h1 = read_npy_header(in);
    REQUIRE(h1.is_ok());
    REQUIRE(h1->has_value());
    std::string skip((*h1)->data_bytes, '\0');
    REQUIRE(in.read_full(skip.data(), skip.size()).value() == 8);

    auto h2 = read_npy_header(in);
    REQUIRE(h2.is_ok());
    REQUIRE(h2->has_value());
    CHECK((*h2)->dtype.str() == "|u1");
    skip.resize((*h2)->data_bytes);
    REQUIRE(in.read_full(skip.data(), skip.size()).value() == 3);

    auto end = read_npy_header(in);
    REQUIRE(end.is_ok());
    CHECK_FALSE(end->has_value());
  }

  TEST_CASE("an empty stream has no array") {
    ByteSource src("");
    auto h = read_npy_header(src.stream());
    REQUIRE(h.is_ok());
    CHECK_FALSE(h->has_value());
  }

  TEST_CASE("errors name the stream and the byte offset of the array") {
    const std::string good = encode_npy_header(dt("|u1"), std::vector<uint64_t>{4}) + "abcd";
    ByteSource src(good + "garbage!!!", "x.npy");
    io::InputStream& in = src.stream();
    auto h = read_npy_header(in);
    REQUIRE(h.is_ok());
    char buf[4];
    REQUIRE(in.read_full(buf, 4).value() == 4);
    auto bad = read_npy_header(in);
    REQUIRE_FALSE(bad.is_ok());
    CHECK(bad.status().code() == StatusCode::kInvalidArgument);
    CHECK(bad.status().message() == "'x.npy': array at byte 132: not a .npy array (bad magic bytes)");
  }

  TEST_CASE("framing errors: magic, version, truncation, header length cap") {
    const std::string good = encode_npy_header(dt("<i4"), std::vector<uint64_t>{3, 4});
    CHECK(read_error("PK\x03\x04 not npy") == "'-': array at byte 0: not a .npy array (bad magic bytes)");
    CHECK(read_error("\x93NUMPX\x01\x00") == "'-': array at byte 0: not a .npy array (bad magic bytes)");
    // Every cut through the prefix or the dict is a truncated header.
    for (size_t cut : {1, 5, 6, 7, 8, 9, 10, 50, 127}) {
      CAPTURE(cut);
      CHECK(read_error(good.substr(0, cut)) == "'-': array at byte 0: truncated .npy header");
    }
    CHECK(read_error(std::string("\x93NUMPY\x04\x00", 8) + "xx") ==
          "'-': array at byte 0: unsupported .npy format version 4.0 (expected 1.0, 2.0 or 3.0)");
    CHECK(read_error(std::string("\x93NUMPY\x01\x01", 8) + "xx") ==
          "'-': array at byte 0: unsupported .npy format version 1.1 (expected 1.0, 2.0 or 3.0)");
    CHECK(read_error(std::string("\x93NUMPY\x00\x00", 8) + "xx") ==
          "'-': array at byte 0: unsupported .npy format version 0.0 (expected 1.0, 2.0 or 3.0)");
    // 1 MiB + 1 in a 2.0 length field is refused before anything is allocated or read.
    CHECK(read_error(std::string("\x93NUMPY\x02\x00\x01\x00\x10\x00", 12)) ==
          "'-': array at byte 0: .npy header is too long (1048577 bytes; the limit is 1048576)");
    CHECK(read_error(std::string("\x93NUMPY\x03\x00\xff\xff\xff\xff", 12)) ==
          "'-': array at byte 0: .npy header is too long (4294967295 bytes; the limit is 1048576)");
  }

  TEST_CASE("structured, subarray and object descrs are refused with their own message") {
    // As np.save writes them (np.zeros(2, dtype='i4,f8') and an object array).
    CHECK(read_error(npy_bytes(kV1,
                               "{'descr': [('f0', '<i4'), ('f1', '<f8')], 'fortran_order': False, "
                               "'shape': (2,), }",
                               35)) == "'-': array at byte 0: structured dtypes are not supported");
    CHECK(read_error(npy_bytes(kV1, "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }", 61)) ==
          "'-': array at byte 0: dtype '|O': object dtype is not supported");
    CHECK(dict_error("{'descr': ('<i4', (2,)), 'fortran_order': False, 'shape': (2,), }") ==
          "w: subarray dtypes are not supported");
    CHECK(dict_error("{'descr': {'names': ['a']}, 'fortran_order': False, 'shape': (2,), }") ==
          "w: structured dtypes are not supported");
    CHECK(dict_error("{'descr': '<f16', 'fortran_order': False, 'shape': (2,), }") ==
          "w: dtype '<f16': platform-dependent long doubles (f12, f16, c24, c32) are not supported");
    CHECK(dict_error("{'descr': '<i4,<f8', 'fortran_order': False, 'shape': (2,), }") ==
          "w: dtype '<i4,<f8': structured dtypes are not supported");
  }

  TEST_CASE("the dict parser is tolerant of key order, quotes, whitespace and Python 2 longs") {
    const char* ok[] = {
        "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4)}",
        "{'shape': (3, 4), 'fortran_order': False, 'descr': '<i4'}",
        "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (3, 4)}",
        "{'descr':'<i4','fortran_order':False,'shape':(3,4,)}",
        "  {\n 'descr' : '<i4' ,\n\t'fortran_order' : False ,\n 'shape' : ( 3 , 4 ) ,\n }  \n",
        "{'descr': '<i4', 'fortran_order': False, 'shape': (3L, 4L), }",
        "{u'descr': u'<i4', u'fortran_order': False, u'shape': (3, 4), }",
        // numpy < 1.23 wrote no growth room and padded to 16 bytes; whitespace all the same.
        "{'descr': '<i4', 'fortran_order': False, 'shape': (3, 4), }       \n",
    };
    for (const char* c : ok) {
      const std::string text = c;
      CAPTURE(text);
      auto h = parse_npy_header_dict(text, "w");
      REQUIRE_MESSAGE(h.is_ok(), h.status().message());
      CHECK(h->dtype.str() == "<i4");
      CHECK(h->shape == std::vector<uint64_t>{3, 4});
      CHECK(h->element_count == 12);
      CHECK(h->data_bytes == 48);
    }
  }

  TEST_CASE("a non-canonical descr is read as numpy.dtype(descr) would read it") {
    auto h = parse_npy_header_dict("{'descr': '<u1', 'fortran_order': False, 'shape': (3,), }", "w");
    REQUIRE(h.is_ok());
    CHECK(h->dtype.str() == "|u1");
    h = parse_npy_header_dict("{'descr': 'f8', 'fortran_order': True, 'shape': (3,), }", "w");
    REQUIRE(h.is_ok());
    CHECK(h->dtype.str() == "<f8");
    CHECK(h->fortran_order);
  }

  TEST_CASE("the dict parser is strict about everything else") {
    struct Bad {
      const char* dict;
      const char* message;
    };
    const Bad cases[] = {
        {"", "w: malformed .npy header: expected '{' at column 1"},
        {"[]", "w: malformed .npy header: expected '{' at column 1"},
        {"{}", "w: .npy header has no 'descr' key"},
        {"{'descr': '<i4', 'shape': (3,)}", "w: .npy header has no 'fortran_order' key"},
        {"{'descr': '<i4', 'fortran_order': False}", "w: .npy header has no 'shape' key"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), 'extra': 1}",
         "w: unexpected key 'extra' in .npy header"},
        {"{'descr': '<i4', 'descr': '<i4', 'fortran_order': False, 'shape': (3,)}",
         "w: duplicate key 'descr' in .npy header"},
        {"{'Descr': '<i4', 'fortran_order': False, 'shape': (3,)}", "w: unexpected key 'Descr' in .npy header"},
        {"{descr: '<i4'}", "w: malformed .npy header: expected a quoted string at column 2"},
        {"{'descr' '<i4'}", "w: malformed .npy header: expected ':' at column 10"},
        {"{'descr': '<i4' 'fortran_order': False}", "w: malformed .npy header: expected ',' or '}' at column 17"},
        {"{'descr': '<i4", "w: malformed .npy header: unterminated string at column 15"},
        {"{'descr': '<\\x69', 'fortran_order': False}",
         "w: malformed .npy header: unsupported character in string at column 13"},
        {"{'descr': <i4, 'fortran_order': False}", "w: malformed .npy header: expected a quoted string at column 11"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), } x",
         "w: malformed .npy header: unexpected text after the dict at column 59"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,), ",
         "w: malformed .npy header: expected a quoted string at column 57"},
        {"{'descr': '<i4', 'fortran_order': false, 'shape': (3,)}", "w: 'fortran_order' is not True or False"},
        {"{'descr': '<i4', 'fortran_order': 0, 'shape': (3,)}", "w: 'fortran_order' is not True or False"},
        {"{'descr': '<i4', 'fortran_order': Falsey, 'shape': (3,)}", "w: 'fortran_order' is not True or False"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3)}", "w: 'shape' is not a tuple"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': [3]}", "w: 'shape' is not a tuple"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': 3}", "w: 'shape' is not a tuple"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': ((3,),)}", "w: 'shape' entries must be integers"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3.0,)}", "w: 'shape' entries must be integers"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (0x3,)}", "w: 'shape' entries must be integers"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (03,)}", "w: 'shape' entries must be integers"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (1_000,)}", "w: 'shape' entries must be integers"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3LL,)}", "w: 'shape' entries must be integers"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3l,)}", "w: 'shape' entries must be integers"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (,)}", "w: 'shape' entries must be integers"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3,,)}", "w: 'shape' entries must be integers"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (3 4)}",
         "w: malformed .npy header: expected ',' or ')' in 'shape' at column 54"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (-3,)}", "w: negative dimension -3 in 'shape'"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (18446744073709551616,)}",
         "w: dimension 18446744073709551616 in 'shape' does not fit in 64 bits"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (4294967296, 4294967296)}",
         "w: element count of shape (4294967296, 4294967296) overflows 64 bits"},
        {"{'descr': '<i4', 'fortran_order': False, 'shape': (4611686018427387904,)}",
         "w: byte size of shape (4611686018427387904,) with dtype <i4 overflows 64 bits"},
    };
    for (const Bad& b : cases) {
      const std::string dict = b.dict;
      CAPTURE(dict);
      auto h = parse_npy_header_dict(b.dict, "w");
      REQUIRE_FALSE(h.is_ok());
      CHECK(h.status().code() == StatusCode::kInvalidArgument);
      CHECK(h.status().message() == b.message);
    }
  }

  TEST_CASE("limits that still parse: 2^64-1 elements of one byte, -0") {
    auto h = parse_npy_header_dict("{'descr': '|u1', 'fortran_order': False, 'shape': (18446744073709551615,), }", "");
    REQUIRE(h.is_ok());
    CHECK(h->element_count == 18446744073709551615ull);
    CHECK(h->data_bytes == 18446744073709551615ull);
    h = parse_npy_header_dict("{'descr': '|u1', 'fortran_order': False, 'shape': (-0,), }", "");
    REQUIRE(h.is_ok());
    CHECK(h->shape == std::vector<uint64_t>{0});
  }

  TEST_CASE("an empty `where` leaves the bare rule") {
    CHECK(parse_npy_header_dict("{}", "").status().message() == ".npy header has no 'descr' key");
  }

  TEST_CASE("encode then read returns the same dtype and shape") {
    const std::vector<std::pair<const char*, std::vector<uint64_t>>> cases = {
        {"|u1", {28, 28}},
        {"<f4", {}},
        {">c8", {1}},
        {"<M8[25s]", {7, 1, 2}},
        {"|V3", {5}},
        {"<U1", {2, 3, 4, 5, 6}},
        {"|S1", {18446744073709551615ull}},
    };
    for (const auto& [descr, shape] : cases) {
      const std::string name = descr;
      CAPTURE(name);
      const std::string bytes = encode_npy_header(dt(descr), shape);
      ByteSource src(bytes);
      auto h = read_npy_header(src.stream());
      REQUIRE_MESSAGE(h.is_ok(), h.status().message());
      REQUIRE(h->has_value());
      CHECK((*h)->dtype == dt(descr));
      CHECK((*h)->shape == shape);
      CHECK_FALSE((*h)->fortran_order);
      CHECK(src.stream().position() == bytes.size());
    }
  }
}

TEST_SUITE("npy records") {
  // The one rule append-npy and train-dict share (cli/formats/npy.h).
  NpyHeader header(const std::string& shape, bool fortran = false) {
    return parse_npy_header_dict(std::string("{'descr': '|u1', 'fortran_order': ") + (fortran ? "True" : "False") +
                                     ", 'shape': " + shape + ", }",
                                 "w")
        .value();
  }

  TEST_CASE("an array holds records unless it is Fortran-order or empty") {
    CHECK(check_npy_array(header("(2, 3)"), "'a.npy'").is_ok());
    CHECK(check_npy_array(header("(3,)", true), "'a.npy'").is_ok());  // one axis: the same bytes
    CHECK(check_npy_array(header("(2, 3)", true), "'a.npy'").message() ==
          "'a.npy': Fortran-order arrays are not supported; save np.ascontiguousarray(a) instead");
    CHECK(check_npy_array(header("(0, 3)"), "'a.npy'").message() ==
          "'a.npy': array of shape (0, 3) has no elements (records must be nonempty)");
  }

  TEST_CASE("axis 0 indexes records for Dense stores and split Ragged ones") {
    auto dense = npy_records(header("(4, 2, 3)"), false, false, "w").value();
    CHECK(dense.records == 4);
    CHECK(dense.record_bytes == 6);
    CHECK(dense.item == std::vector<uint64_t>{2, 3});
    auto whole = npy_records(header("(4, 2)"), true, false, "w").value();
    CHECK(whole.records == 1);
    CHECK(whole.record_bytes == 8);
    CHECK(whole.item == std::vector<uint64_t>{4, 2});
    auto split = npy_records(header("(4, 2)"), true, true, "w").value();
    CHECK(split.records == 4);
    CHECK(split.item == std::vector<uint64_t>{2});
    CHECK(npy_records(header("()"), false, false, "w").status().message() == "w: a 0-d array has no axis 0 to split");
  }

  TEST_CASE("a record holds at most kMaxRecordBytes, a Ragged record's dims included") {
    const uint64_t max = kMaxRecordBytes;
    CHECK(npy_records(header("(1, " + std::to_string(max) + ")"), false, false, "w").is_ok());
    CHECK(npy_records(header("(1, " + std::to_string(max - 8) + ")"), true, true, "w").is_ok());
    CHECK(npy_records(header("(1, " + std::to_string(max - 7) + ")"), true, true, "w").status().message() ==
          "w: a record of shape (" + std::to_string(max - 7) + ",) is 2 GiB or larger (the format's limit)");
  }
}

}  // namespace zrec::cli
