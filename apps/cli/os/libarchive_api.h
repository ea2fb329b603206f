// libarchive, loaded by the commands that read or write tar or zip (append-tar, cat
// --format tar and npz) when they first need it, not by every zrec process: linked, libarchive brought
// eight more libraries (libxml2, ICU, nettle, lzma, lz4, bz2, acl) into the start of
// every `zrec info`, 5 ms of the dynamic loader's time on a 2-CPU VM (docs/bench.md,
// "Process start"). The calls go through the table below; the types and constants are
// libarchive's own, from its headers.
#pragma once

#include <archive.h>
#include <archive_entry.h>

#include "zrec/status.h"

#include "zrec_support/shared_library.h"

namespace zrec::cli {

// Every libarchive function zrec calls: X(name).
#define ZREC_LIBARCHIVE_FUNCTIONS(X)         \
  X(archive_version_string)                  \
  X(archive_error_string)                    \
  X(archive_filter_bytes)                    \
  X(archive_read_new)                        \
  X(archive_read_free)                       \
  X(archive_read_support_filter_all)         \
  X(archive_read_support_format_tar)         \
  X(archive_read_set_options)                \
  X(archive_read_open_fd)                    \
  X(archive_read_open_filename)              \
  X(archive_read_next_header)                \
  X(archive_read_data)                       \
  X(archive_write_new)                       \
  X(archive_write_free)                      \
  X(archive_write_set_format_pax_restricted) \
  X(archive_write_set_format_zip)            \
  X(archive_write_zip_set_compression_store) \
  X(archive_write_set_bytes_in_last_block)   \
  X(archive_write_open)                      \
  X(archive_write_header)                    \
  X(archive_write_data)                      \
  X(archive_write_close)                     \
  X(archive_entry_new)                       \
  X(archive_entry_free)                      \
  X(archive_entry_clear)                     \
  X(archive_entry_pathname)                  \
  X(archive_entry_hardlink)                  \
  X(archive_entry_filetype)                  \
  X(archive_entry_size)                      \
  X(archive_entry_size_is_set)               \
  X(archive_entry_set_pathname)              \
  X(archive_entry_set_filetype)              \
  X(archive_entry_set_perm)                  \
  X(archive_entry_set_size)

struct LibArchive {
  ZREC_SHARED_LIBRARY_TABLE(LibArchive, ZREC_LIBARCHIVE_FUNCTIONS)
};

// The loaded library's functions, loaded on the first call (thread-safe); an error
// naming the library and the loader's reason when it cannot be loaded.
Result<const LibArchive*> libarchive();

}  // namespace zrec::cli
