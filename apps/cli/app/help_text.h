// What `zrec [<command>] --help` says after its options: the description and the
// examples. Both are written once, in man/zrec.1 or man/zrec-<command>.1, which marks
// them with `.\" --help` (DESCRIPTION paragraphs and EXAMPLES command lines), and copied
// at build time (cmake/help_from_man.py writes the definitions into the build
// directory), so help and man page say the same thing.
#pragma once

#include <string_view>

namespace zrec::cli {

// The marked DESCRIPTION paragraphs of `command`'s man page ("zrec" for the root), roff
// decoded and filled to 90 columns, separated by a blank line and ending in a newline;
// empty when the page marks none (`completion`).
std::string_view help_description(std::string_view command);

// The marked examples of `command`'s man page, one per line ("  zrec cat images/ 0:100
// -o first100.npy\n", continuation lines with the page's indentation after the two
// spaces); empty when the page marks none (the root, `completion`).
std::string_view help_examples(std::string_view command);

}  // namespace zrec::cli
