// Writing a benchmark corpus as .npy files for the peer benchmark.
#include "cli/report/bench_export.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include "cli/formats/npy.h"
#include "zrec_support/file.h"

namespace zrec::cli {

namespace {

Status write_npy(const std::string& path, const DType& dtype, const std::vector<uint64_t>& shape, const void* data,
                 uint64_t bytes) {
  ZREC_ASSIGN_OR_RETURN(io::File f, io::File::open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644));
  const std::string header = encode_npy_header(dtype, shape);
  ZREC_RETURN_IF_ERROR(f.pwrite_all(header.data(), header.size(), 0));
  return f.pwrite_all(data, bytes, header.size());
}

Status make_dir(const std::string& path) {
  if (io::retry_eintr([&] { return ::mkdir(path.c_str(), 0755); }) != 0 && errno != EEXIST)
    return io::errno_status(errno, "cannot create", path);
  return Status::ok();
}

}  // namespace

Status export_corpus(const bench::Corpus& c, const std::string& dir) {
  ZREC_RETURN_IF_ERROR(make_dir(dir));
  const std::string out = dir + "/" + bench::to_string(c.workload);
  ZREC_RETURN_IF_ERROR(make_dir(out));
  const uint64_t n = c.records();
  if (c.schema.is_dense()) {
    std::vector<uint64_t> shape = {n};
    shape.insert(shape.end(), c.schema.item_shape->begin(), c.schema.item_shape->end());
    return write_npy(out + "/records.npy", c.schema.dtype, shape, c.payload.data(), c.payload.size());
  }
  const DType u8{'<', DTypeKind::kUInt, 8, ""};
  const uint64_t itemsize = c.schema.dtype.itemsize;
  ZREC_RETURN_IF_ERROR(write_npy(out + "/payload.npy", c.schema.dtype, {c.payload.size() / itemsize}, c.payload.data(),
                                 c.payload.size()));
  std::vector<uint64_t> elements(n + 1);
  for (uint64_t k = 0; k <= n; ++k) elements[k] = c.offsets[k] / itemsize;
  ZREC_RETURN_IF_ERROR(write_npy(out + "/offsets.npy", u8, {n + 1}, elements.data(), elements.size() * 8));
  return write_npy(out + "/shapes.npy", u8, {n, c.schema.ndim}, c.dims.data(), c.dims.size() * 8);
}

}  // namespace zrec::cli
