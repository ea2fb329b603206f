// Workload names, defaults and corpus generation (records generated in parallel; each
// record depends only on its workload, seed and index).
#include <cstring>
#include <iterator>

#include "bench_internal.h"

namespace zrec::bench {

namespace {

constexpr uint32_t kVisionSide = 224;
constexpr uint64_t kTokensPerRecord = 512;

Schema schema_of(Workload w) {
  Schema s;
  switch (w) {
    case Workload::kVision:
      s.dtype = DType{'|', DTypeKind::kUInt, 1, ""};
      s.ndim = 3;
      s.item_shape = std::vector<uint64_t>{3, kVisionSide, kVisionSide};
      break;
    case Workload::kVisionVar:
      s.dtype = DType{'|', DTypeKind::kUInt, 1, ""};
      s.ndim = 3;
      break;
    case Workload::kTokens:
      s.dtype = DType{'<', DTypeKind::kInt, 4, ""};
      s.ndim = 1;
      s.item_shape = std::vector<uint64_t>{kTokensPerRecord};
      break;
    case Workload::kTokensVar:
      s.dtype = DType{'<', DTypeKind::kInt, 4, ""};
      s.ndim = 1;
      break;
  }
  return s;
}

// One row per Workload, in the enum's order: its name, what its records are, and its defaults.
struct WorkloadFacts {
  const char* name;
  const char* description;
  WorkloadDefaults defaults;
};
constexpr WorkloadFacts kWorkloadFacts[] = {
    {"vision",
     "fixed-resolution vision: Dense |u1 (3, 224, 224), 147 KiB image-like records",
     {2500, 256, 3 * kVisionSide* kVisionSide}},
    {"vision-var",
     "variable-resolution vision: Ragged |u1 ndim 3, (3, H, W), H and W in 176..304",
     {2500, 256, 24 + 3 * 240 * 240}},
    {"tokens", "small token records: Dense <i4 (512,), Zipf-distributed ids", {200000, 256, 4 * kTokensPerRecord}},
    {"tokens-var", "variable token sequences: Ragged <i4 ndim 1, log-normal lengths", {200000, 256, 8 + 4 * 135}},
};
static_assert(std::size(kWorkloadFacts) == std::size(kAllWorkloads));

const WorkloadFacts& facts(Workload w) {
  // Past the table only through a cast from an out-of-range integer.
  static constexpr WorkloadFacts kUnknown = {"?", "?", {1, 1, 1}};
  const auto i = static_cast<size_t>(w);
  return i < std::size(kWorkloadFacts) ? kWorkloadFacts[i] : kUnknown;
}

}  // namespace

const char* to_string(Workload w) { return facts(w).name; }

std::optional<Workload> parse_workload(std::string_view name) {
  for (Workload w : kAllWorkloads)
    if (name == to_string(w)) return w;
  return std::nullopt;
}

const char* describe(Workload w) { return facts(w).description; }

WorkloadDefaults defaults(Workload w) { return facts(w).defaults; }

uint64_t Corpus::logical_bytes() const {
  const uint64_t prefix = schema.is_dense() ? 0 : schema.shape_prefix_bytes();
  return payload.size() + prefix * records();
}

uint64_t Corpus::logic_length(uint64_t k) const {
  return offsets[k + 1] - offsets[k] + (schema.is_dense() ? 0 : schema.shape_prefix_bytes());
}

std::vector<RecordRef> Corpus::refs(uint64_t first, uint64_t count) const {
  std::vector<RecordRef> out(count);
  for (uint64_t j = 0; j < count; ++j) {
    const uint64_t k = first + j;
    out[j].data = payload.data() + offsets[k];
    out[j].size = offsets[k + 1] - offsets[k];
    if (!schema.is_dense()) out[j].dims = &dims[k * schema.ndim];
  }
  return out;
}

void Corpus::logical_record(uint64_t k, uint8_t* out) const {
  uint64_t prefix = 0;
  if (!schema.is_dense()) {
    prefix = schema.shape_prefix_bytes();
    std::memcpy(out, &dims[k * schema.ndim], prefix);  // little-endian host (store_writer.cc asserts it)
  }
  std::memcpy(out + prefix, payload.data() + offsets[k], offsets[k + 1] - offsets[k]);
}

Corpus generate(Workload w, uint64_t records, uint64_t seed, Lanes& lanes) {
  Corpus c;
  c.workload = w;
  c.seed = seed;
  c.schema = schema_of(w);
  const uint32_t ndim = c.schema.ndim;
  // Shapes first (cheap, serial), then payloads in parallel.
  c.offsets.resize(records + 1);
  if (!c.schema.is_dense()) c.dims.resize(records * ndim);
  uint64_t total = 0;
  for (uint64_t k = 0; k < records; ++k) {
    c.offsets[k] = total;
    switch (w) {
      case Workload::kVision:
        total += 3 * kVisionSide * kVisionSide;
        break;
      case Workload::kTokens:
        total += 4 * kTokensPerRecord;
        break;
      case Workload::kVisionVar: {
        uint32_t h, wd;
        image_size(seed, k, &h, &wd);
        c.dims[k * 3] = 3, c.dims[k * 3 + 1] = h, c.dims[k * 3 + 2] = wd;
        total += 3ull * h * wd;
        break;
      }
      case Workload::kTokensVar: {
        const uint64_t n = token_count(seed, k);
        c.dims[k] = n;
        total += 4 * n;
        break;
      }
    }
  }
  c.offsets[records] = total;
  c.payload.resize(total);
  Lanes& pool = lanes;
  constexpr uint64_t kBlock = 64;
  (void)pool.run((records + kBlock - 1) / kBlock, [&](size_t, size_t b) {
    for (uint64_t k = b * kBlock; k < std::min(records, (b + 1) * kBlock); ++k) {
      uint8_t* out = c.payload.data() + c.offsets[k];
      const uint64_t bytes = c.offsets[k + 1] - c.offsets[k];
      switch (w) {
        case Workload::kVision:
          generate_image(seed, k, kVisionSide, kVisionSide, out);
          break;
        case Workload::kVisionVar:
          generate_image(seed, k, static_cast<uint32_t>(c.dims[k * 3 + 1]), static_cast<uint32_t>(c.dims[k * 3 + 2]),
                         out);
          break;
        case Workload::kTokens:
        case Workload::kTokensVar: {
          // Through a local buffer: payload offsets are not 4-byte aligned in general.
          int32_t tokens[512];
          for (uint64_t done = 0; done < bytes / 4;) {
            const uint64_t n = std::min<uint64_t>(512, bytes / 4 - done);
            generate_tokens(seed ^ (done << 20), k, n, tokens);
            std::memcpy(out + 4 * done, tokens, 4 * n);
            done += n;
          }
          break;
        }
      }
    }
    return Status::ok();
  });
  return c;
}

}  // namespace zrec::bench
