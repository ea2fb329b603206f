// libFuzzer target: cat's text and JSON renderings of arbitrary record bytes, in a dtype
// chosen by the first input byte and a shape by the next two.
#include <string>
#include <vector>

#include "cli/formats/record_format.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zrec;
  static const char* kDtypes[] = {
      "|b1",     "|i1",     "<i2",     ">i4",      "<i8",    "|u1",    ">u2",     "<u4",     "<u8",     "<f2",
      ">f2",     "<f4",     ">f8",     "<c8",      ">c16",   "|S5",    "<U3",     ">U2",     "|V4",     "<M8",
      "<M8[Y]",  "<M8[M]",  "<M8[W]",  "<M8[D]",   "<M8[h]", "<M8[m]", "<M8[s]",  "<M8[ms]", "<M8[us]", "<M8[ns]",
      "<M8[ps]", "<M8[fs]", "<M8[as]", ">M8[25s]", "<m8",    "<m8[Y]", "<m8[as]", ">m8[7D]", "<M8[3M]", "<m8[10W]"};
  if (size < 3) return 0;
  auto dtype = parse_dtype(kDtypes[data[0] % (sizeof kDtypes / sizeof kDtypes[0])]);
  if (!dtype.is_ok()) __builtin_trap();
  const std::vector<uint64_t> shape = {1u + data[1] % 4, 1u + data[2] % 4};
  const size_t need = shape[0] * shape[1] * dtype.value().itemsize;
  if (size - 3 < need) return 0;
  std::string out;
  cli::append_json_record(out, dtype.value(), shape, data + 3);
  cli::append_text_record(out, dtype.value(), shape, data + 3);
  return 0;
}
