// libFuzzer target: the schema MsgPack decoder, the static page decoder and the dtype
// parsers. A schema that decodes must encode (as msgpack-python would) and decode
// back to itself; a page that decodes must encode back to a page that decodes equal.
#include <cstring>
#include <string>

#include "zrec/dtype.h"

#include "format/schema_msgpack.h"
#include "format/static_page.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zrec;
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (auto schema = format::decode_schema(bytes); schema.is_ok()) {
    const std::string encoded = format::encode_schema(schema.value());
    auto back = format::decode_schema(encoded);
    if (!back.is_ok() || !(back.value() == schema.value())) __builtin_trap();
  }
  format::PageBytes page{};
  std::memcpy(page.data(), data, std::min(size, page.size()));
  if (auto p = format::decode_static_page(page); p.is_ok()) {
    auto again = format::decode_static_page(format::encode_static_page(p.value()));
    if (!again.is_ok() || !(again.value() == p.value())) __builtin_trap();
  }
  if (auto d = parse_dtype(bytes); d.is_ok()) {
    auto canon = parse_canonical_dtype(d.value().str());
    if (!canon.is_ok() || !(canon.value() == d.value())) __builtin_trap();
  }
  (void)parse_canonical_dtype(bytes);
  return 0;
}
