// An .npz file (NumPy's savez: a zip of .npy members, stored uncompressed), written one
// member at a time as cat reads records, for selections np.load must see as several
// arrays: a Ragged store's records differ in shape, and one .npy holds one array.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "zrec/status.h"

#include "cli/report/console.h"

namespace zrec::cli {

class NpzWriter {
 public:
  // Starts the archive on `out` (which must outlive the writer); loads libarchive.
  static Result<std::unique_ptr<NpzWriter>> open(Output& out);
  ~NpzWriter();

  // One member "<name>.npy": `header` (encode_npy_header) then `payload`.
  Status add(const std::string& name, const std::string& header, const uint8_t* payload, uint64_t payload_bytes);
  // Writes the zip's central directory.
  Status close();

 private:
  struct Impl;
  explicit NpzWriter(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace zrec::cli
