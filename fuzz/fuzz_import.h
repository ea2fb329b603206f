// Helpers of the import fuzz targets (fuzz_tar_import, fuzz_lmdb_import): they run the
// zrec CLI in-process, as a user runs it, on each input written to the scratch directory.
#pragma once

#include <cstdint>
#include <filesystem>
#include <initializer_list>
#include <string>
#include <vector>

#include "zrec/dataset.h"

#include "cli/app/app.h"
#include "cli/commands.h"
#include "fuzz_util.h"

namespace zrec::fuzz {

// `zrec -q --threads 1 --no-progress ARGS...` in this process: its exit code. One lane,
// so that an input costs the same on every machine.
inline int zrec_cli(std::initializer_list<std::string> args) {
  std::vector<std::string> words = {"zrec", "-q", "--threads", "1", "--no-progress"};
  words.insert(words.end(), args);
  std::vector<char*> argv;
  for (auto& w : words) argv.push_back(w.data());
  return cli::run_cli(static_cast<int>(argv.size()), argv.data(), cli::all_commands());
}

// `data` as the file `path` (replaced).
inline void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr || (size > 0 && std::fwrite(data, 1, size, f) != size) || std::fclose(f) != 0) abort();
}

// A path in the scratch directory, with whatever the previous input left there removed.
inline std::string fresh(const std::string& name) {
  const std::string path = scratch_dir() + "/" + name;
  std::error_code ignored;
  std::filesystem::remove_all(path, ignored);
  return path;
}

// What an import must leave: a store (or a root whose streams are named by the stream
// name rule) that `zrec verify` finds valid. Traps otherwise.
inline void require_valid(const std::string& path, bool root) {
  if (root)
    for (const auto& e : std::filesystem::directory_iterator(path))  // streams; not the zrec-root marker
      if (e.is_directory() && !stream_name_problem(e.path().filename().string()).empty()) __builtin_trap();
  if (zrec_cli({"verify", path}) != 0) __builtin_trap();
}

}  // namespace zrec::fuzz
