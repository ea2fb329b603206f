// libFuzzer target: open, scan, render and verify a store made of arbitrary bytes.
//
// Input layout (so that seeds can be real stores): segments of a u32 LE length and
// that many bytes (a length past the end takes what is left). Segment 0 is meta.zr,
// segment 1 dict.zr (absent when empty), segments 2.. are data_0.zr, data_1.zr, ...
// fuzz/make_seeds.py packs stores that zrec wrote into this layout.
#include <sys/stat.h>

#include <cstdio>
#include <numeric>
#include <string>
#include <vector>

#include "zrec/store.h"
#include "zrec/verify.h"

#include "cli/formats/record_format.h"
#include "format/endian.h"
#include "fuzz_util.h"

namespace {

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace zrec;
  const std::string dir = fuzz::scratch_dir() + "/s";
  static bool made = [&] { return mkdir(dir.c_str(), 0755) == 0; }();
  (void)made;
  // Each input replaces the previous one's files.
  static int written_data_files = 0;
  std::remove((dir + "/meta.zr").c_str());
  std::remove((dir + "/dict.zr").c_str());
  for (int s = 0; s < written_data_files; ++s) std::remove((dir + "/data_" + std::to_string(s) + ".zr").c_str());
  written_data_files = 0;

  size_t pos = 0;
  for (int segment = 0; pos < size && segment < 2 + 255; ++segment) {
    uint32_t len = 0;
    if (size - pos >= 4) {
      len = format::load_le<uint32_t>(data + pos);
      pos += 4;
    } else {
      pos = size;
    }
    const size_t n = std::min<size_t>(len, size - pos);
    const std::string name = segment == 0   ? "meta.zr"
                             : segment == 1 ? "dict.zr"
                                            : "data_" + std::to_string(segment - 2) + ".zr";
    if (segment != 1 || n > 0) write_file(dir + "/" + name, data + pos, n);
    if (segment >= 2) written_data_files = segment - 1;
    pos += n;
  }

  if (auto store = Store::open(dir, {}, {.lanes = std::make_shared<Lanes>(1)}); store.is_ok()) {
    Store& s = *store.value();
    std::vector<uint64_t> ids(s.length());
    std::iota(ids.begin(), ids.end(), uint64_t{0});
    std::string text;
    (void)s.scan(ids, 1 << 16, [&](const Window& w) {
      for (size_t k = 0; k < w.ids.size(); ++k) {
        const uint8_t* record = w.data + w.offsets[k];
        const Schema& schema = s.schema();
        const std::vector<uint64_t> dims = schema.is_dense() ? *schema.item_shape : ragged_dims(schema, record);
        const uint8_t* payload = record + (schema.is_dense() ? 0 : schema.shape_prefix_bytes());
        text.clear();
        // Rendering holds every element in memory as text: skip records too large to matter.
        if (w.offsets[k + 1] - w.offsets[k] <= 4096) {
          cli::append_json_record(text, schema.dtype, dims, payload);
          cli::append_text_record(text, schema.dtype, dims, payload);
        }
      }
      return Status::ok();
    });
  }
  (void)verify_store(dir, {.quick = true}, {.lanes = std::make_shared<Lanes>(1)});
  (void)verify_store(dir, {}, {.lanes = std::make_shared<Lanes>(2)});
  return 0;
}
