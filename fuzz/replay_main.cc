// Runs a fuzz target's LLVMFuzzerTestOneInput once on each file named (or on every file
// of each directory named), without libFuzzer. Every build replays the seed corpora and
// the regression inputs (fuzz/regressions/<target>/: inputs that once crashed) this
// way, under whatever sanitizers it has.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  size_t runs = 0;
  auto run_file = [&](const fs::path& p) {
    std::ifstream f(p, std::ios::binary);
    std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    ++runs;
  };
  for (int i = 1; i < argc; ++i) {
    const fs::path p(argv[i]);
    if (fs::is_directory(p)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(p))
        if (e.is_regular_file()) files.push_back(e.path());
      std::sort(files.begin(), files.end());
      for (const auto& f : files) run_file(f);
    } else if (fs::exists(p)) {
      run_file(p);
    }
  }
  std::printf("%zu inputs replayed, 0 failed\n", runs);
  return 0;
}
