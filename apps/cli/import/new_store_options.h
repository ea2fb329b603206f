// The options of the append commands that may create their stores (append-tar's new
// streams, append-h5 --create): --codec, --dict and --shards, parsed into the
// CreateOptions the new stores get, with the same checks and messages as `zrec create`
// (--level is every append's: append_session.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "zrec/store_writer.h"

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

struct NewStoreArgs {
  std::string codec;    // --codec: raw, zstd, zstd_dict or auto; empty: default_codec (codec_rules.h)
  std::string dict;     // --dict FILE: the dictionary of zstd_dict
  uint32_t shards = 4;  // --shards: 1..255
};

// Binds --codec, --dict and --shards on `cmd`; `which` starts their help ("New
// streams", "The new store": the help adds "(needs --create)" where they need it).
void add_new_store_options(CLI::App* cmd, NewStoreArgs& args, const std::string& which);

// The --create of an append that makes its store when it does not exist (append-h5,
// append-lmdb): "--create", bound to `create` and described as "Create STORE HOW when it
// does not exist", then add_new_store_options for "The new store", each needing --create.
void add_create_options(CLI::App* cmd, bool& create, NewStoreArgs& args, const std::string& how);

// The CreateOptions of a new store (without its schema): usage errors (thrown) for
// --checksum or --level with raw, zstd_dict without --dict and --dict without
// zstd_dict; I/O errors reading the dictionary file. `checksum` and `level` are the
// append's --checksum and --level. Without --codec the codec is zstd until
// set_new_store_codec, once the schema is known.
Result<CreateOptions> new_store_options(const NewStoreArgs& args, bool checksum, int level);

// Sets c.codec from c.schema when --codec was not given (default_codec, codec_rules.h:
// raw for tiny Dense records); `checksum` and `level` as for new_store_options.
void set_new_store_codec(CreateOptions& c, const NewStoreArgs& args, bool checksum, int level);

class AppendSession;

// The store an append --create makes (append-h5, append-lmdb): a run that fails before it
// published anything takes it back, so a failed first run leaves no empty store behind.
class CreatedStore {
 public:
  explicit CreatedStore(std::string path) : path_(std::move(path)) {}

  // Creates the store with `options` in `ctx` and remembers that this run did.
  Status create(const CreateOptions& options, const Context& ctx);
  // `failed`, after removing the store if this run created it (a warning when it cannot).
  Status take_back(Status failed) const;
  // The end of a run: `session`'s finish(s); when that fails and nothing was published,
  // the session (and the store's lock) goes first, then the store is taken back.
  Status finish(std::unique_ptr<AppendSession> session, Status s) const;
  // Whether this run made the store.
  explicit operator bool() const { return created_; }

 private:
  std::string path_;
  bool created_ = false;
};

}  // namespace zrec::cli
