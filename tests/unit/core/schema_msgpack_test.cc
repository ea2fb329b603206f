// Schema MsgPack (docs/format.md §4, §10): writer bytes equal msgpack-python's packb,
// reader accepts other valid encodings and refuses malformed ones.
#include "format/schema_msgpack.h"

#include "testutil.h"

using namespace zrec;

namespace {
Schema dense(const char* dtype, std::vector<uint64_t> shape) {
  Schema s;
  s.dtype = parse_dtype(dtype).value();
  s.ndim = static_cast<uint32_t>(shape.size());
  s.item_shape = std::move(shape);
  return s;
}
Schema ragged(const char* dtype, uint32_t ndim) {
  Schema s;
  s.dtype = parse_dtype(dtype).value();
  s.ndim = ndim;
  return s;
}
std::string bytes(const std::string& hex) {
  auto v = test::from_hex(hex);
  return std::string(v.begin(), v.end());
}
std::string decode_error(const std::string& hex) {
  auto r = format::decode_schema(bytes(hex));
  REQUIRE_FALSE(r.is_ok());
  CHECK(r.status().code() == StatusCode::kMalformed);
  return r.status().message();
}
}  // namespace

TEST_SUITE("schema_msgpack") {
  // Expected bytes: msgpack.packb(...) from python3-msgpack 1.0.3.
  TEST_CASE("writer output equals msgpack.packb byte for byte") {
    CHECK(format::encode_schema(dense("<i4", {28, 28})) ==
          bytes("83a56474797065a33c6934a46e64696d02aa6974656d5f7368617065921c1c"));
    CHECK(format::encode_schema(ragged("|u1", 1)) == bytes("82a56474797065a37c7531a46e64696d01"));
    CHECK(format::encode_schema(dense("<f4", {})) ==
          bytes("83a56474797065a33c6634a46e64696d00aa6974656d5f736861706590"));
    CHECK(format::encode_schema(dense("|u1", {3, 224, 300})) ==
          bytes("83a56474797065a37c7531a46e64696d03aa6974656d5f73686170659303cce0cd012c"));
    CHECK(format::encode_schema(dense("<U8", {70000})) ==
          bytes("83a56474797065a33c5538a46e64696d01aa6974656d5f736861706591ce00011170"));
  }

  TEST_CASE("round trips Dense, scalar Dense and Ragged") {
    for (const Schema& s : {dense("<i4", {28, 28}), dense("<f4", {}), ragged(">c16", 3), dense("<M8[ns]", {2})}) {
      auto back = format::decode_schema(format::encode_schema(s));
      REQUIRE_OK(back);
      CHECK(back.value() == s);
    }
  }

  TEST_CASE("accepts any key order and wider integer encodings") {
    // {"ndim": uint16 1, "dtype": "|u1"} with ndim as cd0001 and dtype as str8.
    auto r = format::decode_schema(bytes("82a46e64696dcd0001a56474797065d9037c7531"));
    REQUIRE_OK(r);
    CHECK(r->ndim == 1);
    CHECK_FALSE(r->is_dense());
    // ndim as a signed int8 (d0 01) is accepted since it is non-negative.
    CHECK(format::decode_schema(bytes("82a56474797065a37c7531a46e64696dd001")).is_ok());
  }

  TEST_CASE("refuses malformed schemas with the rule broken") {
    CHECK(decode_error("93010203") == "schema is not a MsgPack map");
    CHECK(decode_error("81a56474797065a37c7531") == "schema has no 'ndim'");
    CHECK(decode_error("81a46e64696d01") == "schema has no 'dtype'");
    CHECK(decode_error("83a56474797065a37c7531a46e64696d01a46e64696d01") == "schema has duplicate key 'ndim'");
    CHECK(decode_error("83a56474797065a37c7531a46e64696d01a3666f6f01") == "schema has unknown key 'foo'");
    CHECK(decode_error("82a56474797065c4037c7531a46e64696d01") == "schema 'dtype' is not a string");
    CHECK(decode_error("82a56474797065a37c7531a46e64696dff") == "schema 'ndim' is not a non-negative integer");
    CHECK(decode_error("82a56474797065a37c7531a46e64696d00") == "schema: a Ragged store needs ndim >= 1");
    CHECK(decode_error("83a56474797065a37c7531a46e64696d02aa6974656d5f73686170659101") ==
          "schema: item_shape has 1 entries but ndim is 2");
    CHECK(decode_error("83a56474797065a37c7531a46e64696d01aa6974656d5f73686170659100") ==
          "schema: item_shape entries must be >= 1");
    CHECK(decode_error("82a56474797065a37c7531a46e64696d0100").find("trailing bytes") != std::string::npos);
    CHECK(decode_error("82a56474797065a33d6934a46e64696d01").find("schema 'dtype'") == 0);  // "=i4"
    CHECK(decode_error("82a56474797065a37c4f38a46e64696d01").find("schema 'dtype'") == 0);  // "|O8"
    CHECK(decode_error("82a56474797065").find("not valid MsgPack") != std::string::npos);
  }

  TEST_CASE("refuses a Dense width of 2 GiB or more") {
    CHECK(decode_error("83a56474797065a33c6938a46e64696d01aa6974656d5f736861706591ce10000000").find("2 GiB") !=
          std::string::npos);
  }
}
