// Where stores are: store directories, their files, and datasets of named streams (a
// directory whose subdirectories are stores, one per stream; docs/format.md §1).
//
//   for (const std::string& name : zrec::child_stores("shards/"))
//     auto store = zrec::Store::open(zrec::join_path("shards/", name));
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zrec {

// The files of a store directory (§1).
inline constexpr const char* kMetaFile = "meta.zr";
inline constexpr const char* kDictFile = "dict.zr";
inline std::string data_file_name(uint32_t shard) { return "data_" + std::to_string(shard) + ".zr"; }

// "<dir>/<name>" without doubling a trailing slash.
std::string join_path(const std::string& dir, const std::string& name);

// True when `path` holds a meta.zr. stat(2) follows links, so a linked store (or a
// store whose meta.zr is a link, a FIFO or a directory, which opening it then refuses
// naming the problem) counts as one. Except: a meta.zr that is itself a store (a stream
// named meta.zr in a root of named streams, as an older append-tar could make) does not
// make `path` a store; `path` is then a root.
bool is_store_dir(const std::string& path);

// The names of `root`'s subdirectories that are stores, sorted by name. Leaves out
// ".NAME.zrec-tmp-XXXXXX", a store that create was building when it was killed (the
// next create of NAME removes it), and ".NAME.zrec-join-XXXXXX", a join in steps not yet
// published (zrec/join.h): neither is a stream. Empty when `root` cannot be listed.
std::vector<std::string> child_stores(const std::string& root);

}  // namespace zrec
