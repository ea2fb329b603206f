// Schema <-> MsgPack. msgpack-cxx parses (with tight limits, since a schema is at most
// 2040 bytes) and packs; its exceptions stop here and become kMalformed.
#include "format/schema_msgpack.h"

#include <limits>
#include <set>

#include <msgpack.hpp>

#include "format/layout.h"

namespace zrec::format {

std::string encode_schema(const Schema& schema) {
  msgpack::sbuffer buffer;
  msgpack::packer<msgpack::sbuffer> pk(&buffer);
  pk.pack_map(schema.is_dense() ? 3 : 2);
  pk.pack(std::string("dtype"));
  pk.pack(schema.dtype.str());
  pk.pack(std::string("ndim"));
  pk.pack(static_cast<uint64_t>(schema.ndim));
  if (schema.is_dense()) {
    pk.pack(std::string("item_shape"));
    pk.pack_array(static_cast<uint32_t>(schema.item_shape->size()));
    for (uint64_t d : *schema.item_shape) pk.pack(d);
  }
  return std::string(buffer.data(), buffer.size());
}

namespace {

Result<uint64_t> as_unsigned(const msgpack::object& o, const char* what) {
  // msgpack-cxx reports non-negative values of signed formats as POSITIVE_INTEGER.
  if (o.type != msgpack::type::POSITIVE_INTEGER)
    return malformed(std::string("schema '") + what + "' is not a non-negative integer");
  return o.via.u64;
}

Result<Schema> decode_object(const msgpack::object& root) {
  if (root.type != msgpack::type::MAP) return malformed("schema is not a MsgPack map");
  Schema schema;
  std::set<std::string> seen;
  bool has_dtype = false, has_ndim = false;
  uint64_t ndim = 0;
  for (uint32_t i = 0; i < root.via.map.size; ++i) {
    const msgpack::object& k = root.via.map.ptr[i].key;
    const msgpack::object& v = root.via.map.ptr[i].val;
    if (k.type != msgpack::type::STR) return malformed("schema has a key that is not a string");
    std::string key(k.via.str.ptr, k.via.str.size);
    if (!seen.insert(key).second) return malformed("schema has duplicate key '" + key + "'");
    if (key == "dtype") {
      if (v.type != msgpack::type::STR) return malformed("schema 'dtype' is not a string");
      auto dtype = parse_canonical_dtype(std::string_view(v.via.str.ptr, v.via.str.size));
      if (!dtype.is_ok()) return dtype.status().with_context("schema 'dtype'");
      schema.dtype = dtype.value();
      has_dtype = true;
    } else if (key == "ndim") {
      ZREC_ASSIGN_OR_RETURN(ndim, as_unsigned(v, "ndim"));
      has_ndim = true;
    } else if (key == "item_shape") {
      if (v.type != msgpack::type::ARRAY) return malformed("schema 'item_shape' is not an array");
      std::vector<uint64_t> shape;
      for (uint32_t j = 0; j < v.via.array.size; ++j) {
        ZREC_ASSIGN_OR_RETURN(uint64_t d, as_unsigned(v.via.array.ptr[j], "item_shape"));
        shape.push_back(d);
      }
      schema.item_shape = std::move(shape);
    } else {
      return malformed("schema has unknown key '" + key + "'");
    }
  }
  if (!has_dtype) return malformed("schema has no 'dtype'");
  if (!has_ndim) return malformed("schema has no 'ndim'");
  if (ndim > std::numeric_limits<uint32_t>::max())
    return malformed("schema 'ndim' " + std::to_string(ndim) + " is too large");
  schema.ndim = static_cast<uint32_t>(ndim);
  Status valid = schema.validate();
  if (!valid.is_ok()) return Status(StatusCode::kMalformed, "schema: " + valid.message());
  return schema;
}

}  // namespace

Result<Schema> decode_schema(std::string_view bytes) {
  // Performance/safety note: limits keep a hostile header from making msgpack-cxx
  // allocate for billions of declared elements; 2040 bytes can't hold more anyway.
  const msgpack::unpack_limit limit(/*array=*/kMaxSchemaLength, /*map=*/kMaxSchemaLength,
                                    /*str=*/kMaxSchemaLength, /*bin=*/kMaxSchemaLength,
                                    /*ext=*/kMaxSchemaLength, /*depth=*/8);
  try {
    std::size_t off = 0;
    msgpack::object_handle oh = msgpack::unpack(bytes.data(), bytes.size(), off, nullptr, nullptr, limit);
    if (off != bytes.size())
      return malformed("schema has " + std::to_string(bytes.size() - off) + " trailing bytes after the MsgPack map");
    return decode_object(oh.get());
  } catch (const std::exception& e) {
    return malformed(std::string("schema is not valid MsgPack (") + e.what() + ")");
  }
}

}  // namespace zrec::format
