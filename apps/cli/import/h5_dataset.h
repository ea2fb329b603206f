// One HDF5 dataset opened for reading rows along its first axis (append-h5), through
// libhdf5. Rows are read with the dataset's own datatype, so the bytes arrive as the
// file holds them (h5_types.h maps that type to a dtype); HDF5's automatic error
// printing is turned off and its innermost error becomes the message instead.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <hdf5.h>

#include "zrec/schema.h"
#include "zrec/status.h"

#include "cli/import/h5_bounded_filters.h"
#include "cli/import/h5_types.h"

namespace zrec::cli {

// Rows of a variable-length dataset as HDF5 returns them: one {len, p} per row, the
// values in HDF5's memory, released when the block is destroyed.
class H5VlenRows {
 public:
  H5VlenRows() = default;
  ~H5VlenRows();
  H5VlenRows(const H5VlenRows&) = delete;
  H5VlenRows& operator=(const H5VlenRows&) = delete;

  size_t size() const { return rows_.size(); }
  uint64_t length(size_t i) const { return rows_[i].len; }
  const uint8_t* data(size_t i) const { return static_cast<const uint8_t*>(rows_[i].p); }

 private:
  friend class H5Dataset;
  void release();
  std::vector<hvl_t> rows_;
  hid_t mem_type_ = -1, mem_space_ = -1;
};

class H5Dataset {
 public:
  // Opens dataset `name` ("images", "/train/x") of the HDF5 file `file`, read-only, and
  // maps its type. Errors, one line each, naming the file and the dataset: the file
  // is missing or no HDF5 file (kNotFound / kInvalidArgument), it has no such dataset
  // or the name is a group, the type is refused (h5_types.h), the dataset is a scalar
  // (no first axis), a row has a dimension of 0, a variable-length dataset is not 1-D,
  // or it needs a filter this libhdf5 lacks (lzf, blosc, ... without their plugins).
  // Unless `allow_external`, a dataset whose values come from outside `file` is refused
  // before anything is read: a path through an external (or user-defined) link, raw
  // data in external files, or a virtual dataset; such a file can make zrec read any
  // file the user can (an external file named /etc/hostname is read as rows).
  static Result<std::unique_ptr<H5Dataset>> open(const std::string& file, const std::string& name,
                                                 bool allow_external = false);
  ~H5Dataset();
  H5Dataset(const H5Dataset&) = delete;
  H5Dataset& operator=(const H5Dataset&) = delete;

  // "dataset 'NAME' of 'FILE'", for messages.
  const std::string& where() const { return where_; }
  const H5Element& element() const { return element_; }
  // Rows along the first axis.
  uint64_t rows() const { return rows_; }
  // Rows per chunk along the first axis; 0 for a contiguous or compact dataset.
  uint64_t chunk_rows() const { return chunk_rows_; }
  // Bytes of the chunks that hold one chunk_rows() band of rows (all other axes).
  uint64_t band_bytes() const { return band_bytes_; }
  // The records' schema: Dense with the dataset's other axes (and an array type's
  // dims) as item shape, or Ragged ndim 1 for variable-length sequences.
  const Schema& schema() const { return schema_; }
  // Dense: bytes of one row.
  uint64_t row_bytes() const { return row_bytes_; }

  // Gives the dataset a chunk cache of `bytes` (reopening it), so a window of fewer
  // rows than a chunk does not decompress the chunks of its band again for every window.
  Status use_chunk_cache(uint64_t bytes);

  // Dense: rows [first, first + count) into `out` (count * row_bytes() bytes). A chunk
  // compressed with gzip or bzip2 decodes to at most the bytes its chunk shape declares
  // (h5_bounded_filters.h); one that holds more fails, naming the chunk.
  Status read_dense(uint64_t first, uint64_t count, uint8_t* out);
  // Variable-length: rows [first, first + count) into `out` (its earlier rows released).
  Status read_vlen(uint64_t first, uint64_t count, H5VlenRows& out);

 private:
  H5Dataset() = default;
  // The steps of open(), in order. `refused`: an external link was met (through a soft
  // link) and not followed.
  Status check_path(bool& refused);
  Status open_dataset(bool& refused);
  Status read_shape();
  Status check_storage(hid_t dcpl) const;
  Status read_layout(hid_t dcpl);
  Status select_rows(uint64_t first, uint64_t count, hid_t& file_space, hid_t& mem_space) const;
  void bound_decoding(hid_t dcpl);
  // The error of a failed read of rows [first, first + count): the chunk a bounded filter
  // refused, when `scope` says one did, else HDF5's innermost error.
  Status read_error(uint64_t first, uint64_t count, const H5DecodeScope& scope) const;
  // The chunk among rows [first, first + count) stored as `input` (before its checksum),
  // as "chunk [0, 64] (402 bytes stored)", or "a chunk of rows A..B" when none is found.
  std::string chunk_named(uint64_t first, uint64_t count, const std::string& input) const;

  std::string file_, name_, where_;
  bool allow_external_ = false;
  hid_t file_id_ = -1, dataset_ = -1, type_ = -1;
  int rank_ = 0;
  std::vector<hsize_t> dims_, chunk_dims_;  // chunk_dims_: empty unless chunked
  H5Element element_;
  Schema schema_;
  uint64_t rows_ = 0, chunk_rows_ = 0, band_bytes_ = 0, row_bytes_ = 0;
  // What a chunk may decode to (h5_bounded_filters.h): the bytes its shape declares, or
  // more where another filter decodes after gzip or bzip2 (then not exactly).
  uint64_t decode_limit_ = 0;
  bool decode_exact_ = false;
};

}  // namespace zrec::cli
