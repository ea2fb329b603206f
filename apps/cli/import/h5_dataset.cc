// Reading rows of an HDF5 dataset (see h5_dataset.h).
#include "cli/import/h5_dataset.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>

#include "zrec/format.h"

#include "cli/formats/npy.h"
#include "cli/import/h5_bounded_filters.h"
#include "cli/options/option_values.h"

namespace zrec::cli {

namespace {

// The innermost entry of HDF5's error stack (where the failure began, e.g. "required
// filter 'lzf' is not registered"), then the stack cleared.
std::string h5_error() {
  std::string message;
  H5Ewalk2(
      H5E_DEFAULT, H5E_WALK_UPWARD,
      [](unsigned, const H5E_error2_t* e, void* data) -> herr_t {
        auto* m = static_cast<std::string*>(data);
        if (m->empty() && e->desc != nullptr && e->desc[0] != '\0') *m = e->desc;
        return 0;
      },
      &message);
  H5Eclear2(H5E_DEFAULT);
  return message.empty() ? "unknown HDF5 error" : message;
}

// HDF5 prints its whole error stack to stderr by default; zrec prints one line instead.
// Its gzip and bzip2 filters are replaced by bounded ones before any dataset is opened.
void prepare_hdf5() {
  static const bool done = [] {
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
    install_bounded_h5_filters();
    return true;
  }();
  (void)done;
}

// How many chunks chunk_named() compares with the failed one, at most.
constexpr uint64_t kMaxChunksSearched = 1 << 20;

// "[0, 64]": a chunk's offset, in elements along each axis, as HDF5 names chunks.
std::string offset_text(const std::vector<hsize_t>& at) {
  std::string s = "[";
  for (size_t i = 0; i < at.size(); ++i) s += (i > 0 ? ", " : "") + std::to_string(at[i]);
  return s + "]";
}

// An external link's traversal, refused (H5Pset_elink_cb): without --allow-external a
// dataset's path must not lead into another file. Notes the refusal in *refused.
herr_t refuse_external_link(const char*, const char*, const char*, const char*, unsigned*, hid_t, void* refused) {
  *static_cast<bool*>(refused) = true;
  return -1;
}

// A link, group or dataset access list that refuses external links (setting *refused)
// unless `allow_external`.
hid_t access_list(hid_t cls, bool allow_external, bool* refused) {
  const hid_t list = H5Pcreate(cls);
  if (list >= 0 && !allow_external) H5Pset_elink_cb(list, refuse_external_link, refused);
  return list;
}

constexpr const char* kAllowExternal =
    "; --allow-external reads it (only for files you trust: it reads whatever file the HDF5 file names)";

// The name of a filter for messages: the one recorded in the file, or its ID.
std::string filter_name(H5Z_filter_t id, const char* recorded) {
  std::string name = recorded[0] != '\0' ? std::string(recorded) + " " : "";
  return name + "(filter " + std::to_string(id) + ")";
}

// The filters published HDF5 files commonly use that libhdf5 decodes through a plugin,
// with the Debian package that provides it (libhdf5 looks for plugins in its default
// directory and in HDF5_PLUGIN_PATH).
const char* plugin_package(H5Z_filter_t id) {
  switch (id) {
    case 32000:
      return "hdf5-plugin-lzf (h5py's lzf)";
    case 32001:
      return "hdf5-filter-plugin-blosc-serial";
    case 32004:  // lz4
    case 32008:
      return "hdf5-filter-plugin";  // bitshuffle
    case 32013:
      return "hdf5-filter-plugin-zfp-serial";
    default:
      return nullptr;
  }
}

// Debian's lzf plugin is not linked to liblzf: it calls lzf_decompress of the process
// that loads it, as h5py provides it. Loaded with RTLD_GLOBAL before libhdf5 looks for
// the plugin, liblzf provides it here (Debian liblzf1); without it the plugin does not load.
void provide_plugin_dependencies(H5Z_filter_t id) {
  if (id == 32000) (void)::dlopen("liblzf.so.1", RTLD_NOW | RTLD_GLOBAL);
}

}  // namespace

H5VlenRows::~H5VlenRows() { release(); }

void H5VlenRows::release() {
  if (!rows_.empty() && mem_type_ >= 0 && mem_space_ >= 0) {
#if H5_VERSION_GE(1, 12, 0)
    H5Treclaim(mem_type_, mem_space_, H5P_DEFAULT, rows_.data());
#else
    H5Dvlen_reclaim(mem_type_, mem_space_, H5P_DEFAULT, rows_.data());
#endif
  }
  rows_.clear();
  if (mem_space_ >= 0) H5Sclose(mem_space_);
  if (mem_type_ >= 0) H5Tclose(mem_type_);
  mem_space_ = mem_type_ = -1;
}

H5Dataset::~H5Dataset() {
  if (type_ >= 0) H5Tclose(type_);
  if (dataset_ >= 0) H5Dclose(dataset_);
  if (file_id_ >= 0) H5Fclose(file_id_);
}

namespace {

// The file exists, is a regular file and holds HDF5, before libhdf5 opens it.
Status probe_h5_file(const std::string& file) {
  struct stat st;
  if (::stat(file.c_str(), &st) != 0) return not_found("HDF5 file '" + file + "' does not exist");
  if (!S_ISREG(st.st_mode)) return invalid_argument("'" + file + "' is not a file");
  if (H5Fis_hdf5(file.c_str()) <= 0) {
    H5Eclear2(H5E_DEFAULT);
    return invalid_argument("'" + file + "' is not an HDF5 file");
  }
  return Status::ok();
}

// Every filter of the dataset's pipeline (`dcpl`) is one this libhdf5 can decode (after
// loading what a plugin needs); else how to get its plugin.
Status check_filters(hid_t dcpl, const std::string& where) {
  const int filters = H5Pget_nfilters(dcpl);
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0, config = 0;
    size_t nvalues = 0;
    char recorded[64] = {};
    const H5Z_filter_t id = H5Pget_filter2(dcpl, i, &flags, &nvalues, nullptr, sizeof recorded, recorded, &config);
    if (id < 0) return io_error("cannot read the filters of " + where + ": " + h5_error());
    provide_plugin_dependencies(id);
    if (H5Zfilter_avail(id) <= 0) {
      H5Eclear2(H5E_DEFAULT);
      const char* package = plugin_package(id);
      return unsupported(where + " is compressed with " + filter_name(id, recorded) +
                         ", which this libhdf5 cannot decode: install its HDF5 plugin" +
                         (package != nullptr
                              ? std::string(" (Debian: ") + package + (id == 32000 ? " and liblzf1" : "") + ")"
                              : std::string()) +
                         ", or set HDF5_PLUGIN_PATH to the directory that holds it");
    }
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<H5Dataset>> H5Dataset::open(const std::string& file, const std::string& name,
                                                   bool allow_external) {
  prepare_hdf5();
  std::unique_ptr<H5Dataset> d(new H5Dataset());
  d->file_ = file;
  d->name_ = name;
  d->allow_external_ = allow_external;
  d->where_ = "dataset '" + name + "' of '" + file + "'";
  ZREC_RETURN_IF_ERROR(probe_h5_file(file));
  H5PropertyList fapl(H5Pcreate(H5P_FILE_ACCESS));
#if H5_VERSION_GE(1, 10, 7)
  // Keep HDF5's file lock, but read files on filesystems without flock (Lustre, NFS
  // mounts without locking) instead of failing.
  H5Pset_file_locking(fapl.id, true, true);
#endif
  d->file_id_ = H5Fopen(file.c_str(), H5F_ACC_RDONLY, fapl.id);
  if (d->file_id_ < 0) return io_error("cannot open HDF5 file '" + file + "': " + h5_error());
  bool refused = false;  // an external link was met (through a soft link) and not followed
  ZREC_RETURN_IF_ERROR(d->check_path(refused));
  ZREC_RETURN_IF_ERROR(d->open_dataset(refused));
  ZREC_RETURN_IF_ERROR(d->read_shape());
  H5PropertyList dcpl(H5Dget_create_plist(d->dataset_));
  if (dcpl.id < 0) return io_error("cannot read the storage of " + d->where_ + ": " + h5_error());
  ZREC_RETURN_IF_ERROR(d->check_storage(dcpl.id));
  ZREC_RETURN_IF_ERROR(check_filters(dcpl.id, d->where_));
  ZREC_RETURN_IF_ERROR(d->read_layout(dcpl.id));
  return d;
}

// Each component of the path must exist (H5Lexists fails on a missing intermediate),
// and be a link inside this file unless allow_external: each is checked before the
// next one is looked up through it.
Status H5Dataset::check_path(bool& refused) {
  H5PropertyList lapl(access_list(H5P_LINK_ACCESS, allow_external_, &refused));
  std::string path = name_.starts_with("/") ? "/" : "";
  bool any = false;
  for (size_t at = 0; at <= name_.size();) {
    size_t slash = name_.find('/', at);
    if (slash == std::string::npos) slash = name_.size();
    if (slash > at) {
      path += (path.empty() || path.back() == '/' ? "" : "/") + name_.substr(at, slash - at);
      any = true;
      if (H5Lexists(file_id_, path.c_str(), lapl.id) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        return not_found("'" + file_ + "' has no dataset '" + name_ + "'" +
                         (path.size() < name_.size() && path != name_ ? " (no '" + path + "')" : ""));
      }
#if H5_VERSION_GE(1, 12, 0)
      H5L_info2_t link{};
      const herr_t got = H5Lget_info2(file_id_, path.c_str(), &link, lapl.id);
#else
      H5L_info_t link{};
      const herr_t got = H5Lget_info(file_id_, path.c_str(), &link, lapl.id);
#endif
      if (got < 0) return io_error("cannot read the link '" + path + "' of '" + file_ + "': " + h5_error());
      if (link.type != H5L_TYPE_HARD && link.type != H5L_TYPE_SOFT && !allow_external_)
        return invalid_argument(
            "'" + path + "' in '" + file_ + "' is " +
            (link.type == H5L_TYPE_EXTERNAL ? "an external link (into another file)" : "a user-defined link") +
            kAllowExternal);
    }
    at = slash + 1;
  }
  if (!any)
    return invalid_argument("'" + name_ + "' names no dataset of '" + file_ + "' (give e.g. 'images' or '/train/x')");
  return Status::ok();
}

// The dataset itself; when it does not open, why: an external link refused on the way
// (`refused`), a group of that name, or HDF5's own error.
Status H5Dataset::open_dataset(bool& refused) {
  H5PropertyList dapl(access_list(H5P_DATASET_ACCESS, allow_external_, &refused));
  dataset_ = H5Dopen2(file_id_, name_.c_str(), dapl.id);
  if (dataset_ >= 0) return Status::ok();
  const std::string error = h5_error();
  if (refused)
    return invalid_argument("'" + name_ + "' in '" + file_ + "' leads through an external link (into another file)" +
                            kAllowExternal);
  H5PropertyList gapl(access_list(H5P_GROUP_ACCESS, allow_external_, &refused));
  const hid_t group = H5Gopen2(file_id_, name_.c_str(), gapl.id);
  if (group >= 0) {
    H5Gclose(group);
    return invalid_argument("'" + name_ + "' in '" + file_ + "' is a group, not a dataset");
  }
  H5Eclear2(H5E_DEFAULT);
  return invalid_argument("cannot open " + where_ + ": " + error);
}

// The datatype and the dimensions, and the schema of the records they make.
Status H5Dataset::read_shape() {
  type_ = H5Dget_type(dataset_);
  if (type_ < 0) return io_error("cannot read the datatype of " + where_ + ": " + h5_error());
  ZREC_ASSIGN_OR_RETURN(element_, map_h5_type(type_, where_));

  H5Space space;
  space.id = H5Dget_space(dataset_);
  if (space.id < 0) return io_error("cannot read the shape of " + where_ + ": " + h5_error());
  rank_ = H5Sget_simple_extent_ndims(space.id);
  if (rank_ < 1)
    return invalid_argument(where_ +
                            " is a scalar (or empty) dataset; append-h5 appends the rows along the "
                            "first axis of a dataset of rank 1 or more");
  dims_.resize(rank_);
  H5Sget_simple_extent_dims(space.id, dims_.data(), nullptr);
  rows_ = dims_[0];

  std::vector<uint64_t> shape(dims_.begin() + 1, dims_.end());
  shape.insert(shape.end(), element_.array_dims.begin(), element_.array_dims.end());
  if (element_.vlen) {
    if (rank_ != 1)
      return invalid_argument(where_ + " holds variable-length sequences in " + std::to_string(rank_) + " dimensions " +
                              shape_to_string(std::vector<uint64_t>(dims_.begin(), dims_.end())) +
                              "; append-h5 takes them from a 1-D dataset (one Ragged record per row)");
    schema_.dtype = element_.dtype;
    schema_.ndim = 1;
  } else {
    if (std::count(shape.begin(), shape.end(), uint64_t{0}) > 0)
      return invalid_argument(where_ + " has rows of shape " + shape_to_string(shape) +
                              ", with no values (records are nonempty)");
    schema_.dtype = element_.dtype;
    schema_.ndim = static_cast<uint32_t>(shape.size());
    schema_.item_shape = shape;
  }
  const Status valid = schema_.validate();
  if (!valid.is_ok())
    return invalid_argument(where_ + ": its rows cannot be records (" + schema_.describe() + "): " + valid.message());
  if (schema_.is_dense()) row_bytes_ = schema_.dense_width();
  return Status::ok();
}

// Values kept outside this file: raw data in external files (which may name any file,
// /etc/hostname as well as data), or a virtual dataset's sources; refused unless
// allow_external.
Status H5Dataset::check_storage(hid_t dcpl) const {
  if (const int external = H5Pget_external_count(dcpl); external > 0 && !allow_external_) {
    char first[256] = {};
    off_t offset = 0;
    hsize_t size = 0;
    H5Pget_external(dcpl, 0, sizeof first, first, &offset, &size);
    return invalid_argument(where_ + " keeps its values in " + std::to_string(external) + " external file" +
                            (external == 1 ? "" : "s") + " ('" + first + "'" + (external > 1 ? ", ..." : "") + ")" +
                            kAllowExternal);
  }
  if (H5Pget_layout(dcpl) == H5D_VIRTUAL && !allow_external_)
    return invalid_argument(where_ +
                            " is a virtual dataset (its values come from other datasets, of this or other files)" +
                            std::string(kAllowExternal));
  return Status::ok();
}

// A chunked dataset's chunk shape: the rows of a band, its bytes, and the bound on what
// each chunk may decode to.
Status H5Dataset::read_layout(hid_t dcpl) {
  if (H5Pget_layout(dcpl) != H5D_CHUNKED) return Status::ok();
  std::vector<hsize_t> chunk(rank_);
  if (H5Pget_chunk(dcpl, rank_, chunk.data()) != rank_)
    return io_error("cannot read the chunk shape of " + where_ + ": " + h5_error());
  chunk_rows_ = chunk[0];
  chunk_dims_ = chunk;
  bound_decoding(dcpl);
  uint64_t band = chunk[0] * H5Tget_size(type_);
  for (int i = 1; i < rank_; ++i) band *= chunk[i] * ((dims_[i] + chunk[i] - 1) / chunk[i]);
  band_bytes_ = band;
  return Status::ok();
}

// A chunk's declared bytes bound what gzip or bzip2 may decode it to: exactly, where the
// other filters keep its size (shuffle, the checksum); with room to spare where another
// decodes after it (scaleoffset adds a header, a plugin may too), and for variable-length
// rows, whose stored size depends on the file's address size.
void H5Dataset::bound_decoding(hid_t dcpl) {
  uint64_t chunk = H5Tget_size(type_);
  for (const hsize_t c : chunk_dims_) chunk *= c;
  int resizing = 0;  // filters that change the size of what they encode
  const int filters = H5Pget_nfilters(dcpl);
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0, config = 0;
    size_t values = 0;
    const H5Z_filter_t id = H5Pget_filter2(dcpl, i, &flags, &values, nullptr, 0, nullptr, &config);
    if (id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_FLETCHER32) ++resizing;
  }
  decode_exact_ = resizing <= 1 && !element_.vlen;
  decode_limit_ = decode_exact_ ? chunk : chunk + chunk / 8 + 4096;
}

Status H5Dataset::use_chunk_cache(uint64_t bytes) {
  bool refused = false;
  H5PropertyList dapl(access_list(H5P_DATASET_ACCESS, allow_external_, &refused));
  uint64_t chunks = 1;  // chunks in one band: consecutive in HDF5's chunk index, so as many slots never collide
  if (chunk_rows_ > 0) {
    H5PropertyList dcpl(H5Dget_create_plist(dataset_));
    std::vector<hsize_t> chunk(rank_);
    if (dcpl.id >= 0 && H5Pget_chunk(dcpl.id, rank_, chunk.data()) == rank_)
      for (int i = 1; i < rank_; ++i) chunks *= (dims_[i] + chunk[i] - 1) / chunk[i];
  }
  if (dapl.id < 0 || H5Pset_chunk_cache(dapl.id, std::max<uint64_t>(521, chunks + 1), bytes, 1.0) < 0)
    return io_error("cannot set the chunk cache of " + where_ + ": " + h5_error());
  const hid_t reopened = H5Dopen2(file_id_, name_.c_str(), dapl.id);
  if (reopened < 0) return io_error("cannot open " + where_ + ": " + h5_error());
  H5Dclose(dataset_);
  dataset_ = reopened;
  return Status::ok();
}

Status H5Dataset::select_rows(uint64_t first, uint64_t count, hid_t& file_space, hid_t& mem_space) const {
  std::vector<hsize_t> start(rank_, 0), counts(dims_);
  start[0] = first;
  counts[0] = count;
  file_space = H5Dget_space(dataset_);
  if (file_space < 0 ||
      H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start.data(), nullptr, counts.data(), nullptr) < 0)
    return io_error("cannot select rows " + std::to_string(first) + ".." + std::to_string(first + count) + " of " +
                    where_ + ": " + h5_error());
  mem_space = H5Screate_simple(rank_, counts.data(), nullptr);
  if (mem_space < 0) return io_error("cannot describe rows of " + where_ + ": " + h5_error());
  return Status::ok();
}

Status H5Dataset::read_dense(uint64_t first, uint64_t count, uint8_t* out) {
  H5Space file_space, mem_space;
  ZREC_RETURN_IF_ERROR(select_rows(first, count, file_space.id, mem_space.id));
  // The dataset's own type as the memory type: HDF5 converts nothing.
  const H5DecodeScope scope(decode_limit_, decode_exact_);
  if (H5Dread(dataset_, type_, mem_space.id, file_space.id, H5P_DEFAULT, out) < 0)
    return read_error(first, count, scope);
  return Status::ok();
}

Status H5Dataset::read_vlen(uint64_t first, uint64_t count, H5VlenRows& out) {
  out.release();
  H5Space file_space;
  ZREC_RETURN_IF_ERROR(select_rows(first, count, file_space.id, out.mem_space_));
  // A sequence of the file's element type (its byte order kept), in memory.
  const hid_t base = H5Tget_super(type_);
  out.mem_type_ = base < 0 ? -1 : H5Tvlen_create(base);
  if (base >= 0) H5Tclose(base);
  if (out.mem_type_ < 0) return io_error("cannot describe rows of " + where_ + ": " + h5_error());
  out.rows_.assign(count, hvl_t{0, nullptr});
  const H5DecodeScope scope(decode_limit_, decode_exact_);
  if (H5Dread(dataset_, out.mem_type_, out.mem_space_, file_space.id, H5P_DEFAULT, out.rows_.data()) < 0) {
    const Status error = read_error(first, count, scope);
    out.rows_.clear();  // nothing to reclaim after a failed read
    out.release();
    return error;
  }
  return Status::ok();
}

Status H5Dataset::read_error(uint64_t first, uint64_t count, const H5DecodeScope& scope) const {
  const std::string rows =
      "cannot read rows " + std::to_string(first) + ".." + std::to_string(first + count) + " of " + where_ + ": ";
  const std::string error = h5_error();
  if (!scope.failure()) return io_error(rows + error);
  const H5DecodeFailure& f = *scope.failure();
  const std::string chunk = chunk_named(first, count, f.input);
  return invalid_argument(rows + (chunk.starts_with("chunk [") ? "its " : "a ") + f.filter + " " + chunk + " " +
                          f.what + " (a damaged file, or one made to exhaust memory)");
}

std::string H5Dataset::chunk_named(uint64_t first, uint64_t count, const std::string& input) const {
  const std::string rows = "chunk of rows " + std::to_string(first) + ".." + std::to_string(first + count);
  if (chunk_dims_.empty() || chunk_rows_ == 0) return rows;
  // Each chunk of the rows, other axes fastest, whose stored bytes (but a 4-byte
  // checksum after them) are the ones the filter refused.
  std::vector<hsize_t> at(rank_, 0);
  std::string raw;
  uint64_t searched = 0;
  for (at[0] = first / chunk_rows_ * chunk_rows_; at[0] < first + count; at[0] += chunk_rows_) {
    for (int axis = 0; axis >= 0 && searched++ < kMaxChunksSearched;) {
      hsize_t stored = 0;
      uint32_t mask = 0;
      if (H5Dget_chunk_storage_size(dataset_, at.data(), &stored) >= 0 &&
          (stored == input.size() || stored == input.size() + 4)) {
        raw.resize(stored);
        if (H5Dread_chunk(dataset_, H5P_DEFAULT, at.data(), &mask, raw.data()) >= 0 && raw.starts_with(input)) {
          H5Eclear2(H5E_DEFAULT);
          return "chunk " + offset_text(at) + " (" + std::to_string(stored) + " bytes stored)";
        }
      }
      // The next chunk offset along the other axes; axis 0 when they wrap around.
      for (axis = rank_ - 1; axis >= 1; --axis) {
        at[axis] += chunk_dims_[axis];
        if (at[axis] < dims_[axis]) break;
        at[axis] = 0;
      }
      if (axis == 0) axis = -1;
    }
  }
  H5Eclear2(H5E_DEFAULT);
  return rows;
}

}  // namespace zrec::cli
