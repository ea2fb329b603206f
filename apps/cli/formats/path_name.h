// The parts of a path as the commands name them ("ds/" is the directory ds): one rule
// for trailing slashes, so every command reads DEST, a root or an output alike.
//
//   strip_trailing_slashes("ds//")  -> "ds"     ("/" stays "/")
//   base_name("a/b/ds/")            -> "ds"
//   parent_directory("ds/")         -> "."      ("a/b" -> "a", "/x" -> "/")
#pragma once

#include <string>

namespace zrec::cli {

std::string strip_trailing_slashes(std::string path);

// The last component of `path` after its trailing slashes are stripped; of a URL's
// path, its query and fragment cut off ("http://h/d/s?token=T" -> "s").
std::string base_name(std::string path);

// The directory `path` lies in, after its trailing slashes are stripped.
std::string parent_directory(std::string path);

}  // namespace zrec::cli
