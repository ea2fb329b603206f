// The examples `zrec <command> --help` ends with. They are the command lines that
// man/zrec-<command>.1 marks with `.\" --help` in its EXAMPLES section, copied at build
// time (cmake/help_examples.py writes the definition into the build directory), so the
// help and the man page show the same commands and each is written once, in the page.
#pragma once

#include <string_view>

namespace zrec::cli {

// The marked examples of `command`'s man page, one per line ("  zrec cat images/ 0:100
// -o first100.npy\n", continuation lines with the page's indentation after the two
// spaces); empty when the page marks none (the root, `completion`).
std::string_view help_examples(std::string_view command);

}  // namespace zrec::cli
