// .npz output through libarchive's zip writer (see npz_writer.h).
#include "cli/npz_writer.h"

#include "cli/os/libarchive_api.h"

namespace zrec::cli {

struct NpzWriter::Impl {
  const LibArchive* la = nullptr;
  Output* out = nullptr;
  Status sink_status;
  struct archive* ar = nullptr;
  struct archive_entry* entry = nullptr;

  ~Impl() {
    if (entry != nullptr) la->archive_entry_free(entry);
    if (ar != nullptr) la->archive_write_free(ar);
  }
  Status error(const char* what) const {
    if (!sink_status.is_ok()) return sink_status;
    const char* why = la->archive_error_string(ar);
    return io_error(std::string("cannot write .npz ") + what + ": " + (why != nullptr ? why : "unknown error"));
  }
  static la_ssize_t write_cb(struct archive*, void* data, const void* buf, size_t n) {
    auto* impl = static_cast<Impl*>(data);
    impl->sink_status = impl->out->write(buf, n);
    return impl->sink_status.is_ok() ? static_cast<la_ssize_t>(n) : -1;
  }
};

NpzWriter::NpzWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
NpzWriter::~NpzWriter() = default;

Result<std::unique_ptr<NpzWriter>> NpzWriter::open(Output& out) {
  auto impl = std::make_unique<Impl>();
  ZREC_ASSIGN_OR_RETURN(impl->la, libarchive());
  const LibArchive& la = *impl->la;
  impl->out = &out;
  impl->ar = la.archive_write_new();
  impl->entry = la.archive_entry_new();
  if (impl->ar == nullptr || impl->entry == nullptr) return io_error("cannot start libarchive (out of memory)");
  // Stored, as numpy.savez writes (np.load maps nothing; it reads each member whole).
  if (la.archive_write_set_format_zip(impl->ar) != ARCHIVE_OK ||
      la.archive_write_zip_set_compression_store(impl->ar) != ARCHIVE_OK)
    return impl->error("format");
  if (la.archive_write_open(impl->ar, impl.get(), nullptr, Impl::write_cb, nullptr) != ARCHIVE_OK)
    return impl->error("header");
  return std::unique_ptr<NpzWriter>(new NpzWriter(std::move(impl)));
}

Status NpzWriter::add(const std::string& name, const std::string& header, const uint8_t* payload,
                      uint64_t payload_bytes) {
  Impl& m = *impl_;
  const LibArchive& la = *m.la;
  const std::string member = name + ".npy";
  la.archive_entry_clear(m.entry);
  la.archive_entry_set_pathname(m.entry, member.c_str());
  la.archive_entry_set_filetype(m.entry, AE_IFREG);
  la.archive_entry_set_perm(m.entry, 0644);
  la.archive_entry_set_size(m.entry, static_cast<la_int64_t>(header.size() + payload_bytes));
  if (la.archive_write_header(m.ar, m.entry) != ARCHIVE_OK) return m.error("header");
  if (la.archive_write_data(m.ar, header.data(), header.size()) != static_cast<la_ssize_t>(header.size()))
    return m.error("data");
  // archive_write_data takes at most SSIZE_MAX; a record is below 2^31 bytes.
  if (payload_bytes > 0 &&
      la.archive_write_data(m.ar, payload, payload_bytes) != static_cast<la_ssize_t>(payload_bytes))
    return m.error("data");
  return Status::ok();
}

Status NpzWriter::close() {
  Impl& m = *impl_;
  if (m.la->archive_write_close(m.ar) != ARCHIVE_OK) return m.error("end");
  return m.out->flush();
}

}  // namespace zrec::cli
