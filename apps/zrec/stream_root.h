// A root of named streams: a directory whose subdirectories are stores (zrec info,
// append-tar, cat --format tar).
#pragma once

#include <string>
#include <vector>

namespace zrec::cli {

// True when `path` holds a meta.zr (stat follows links: a linked store counts).
bool is_store_dir(const std::string& path);

// The names of `root`'s subdirectories that are stores, sorted; leaves out
// ".NAME.zrec-tmp-XXXXXX", a store create_store was building when killed (it removes
// such leftovers when it creates NAME again), which is not a stream. Empty when root
// cannot be listed.
std::vector<std::string> child_stores(const std::string& root);

}  // namespace zrec::cli
