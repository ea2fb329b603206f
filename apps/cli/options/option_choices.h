// The named values an option takes, one table per option, written once: the command
// checks a value against it (choose: the value's position, or the usage error that
// lists the words), and `zrec completion` offers exactly its words, read from the
// option itself (offer_choices records them on it, choices_of reads them back), so the
// two never disagree (cat --format tar was accepted and not offered).
//
// Example:
//   offer_choices(cmd->add_option("--framing", a.framing, "..."), framing_names());
//   switch (choose(framing_names(), "--framing", a.framing)) { ... }
//   // "--framing pipe" -> UsageError "unknown --framing 'pipe' (use lines, nul, u32le or u64le)"
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "cli/options/cli11_fwd.h"

namespace zrec::cli {

using Choices = std::vector<std::string>;

// The tables. Codec, tier and workload names come from the to_string of their
// libraries, dtype names from parse_dtype's table (zrec/dtype.h).
const Choices& cat_format_names();     // cat --format: npy raw text jsonl tar npz
const Choices& framing_names();        // cat and append-stream --framing
const Choices& tar_array_names();      // cat --arrays: npy text
const Choices& number_syntax_names();  // append-stream --parse: ints floats
const Choices& codec_names();          // --codec: raw zstd zstd_dict
const Choices& new_codec_names();      // --codec of a store to be made: raw zstd zstd_dict auto
const Choices& tier_names();           // --tier: small balanced max
const Choices& workload_names();       // bench --workload
const Choices& dtype_names();          // --dtype: NumPy's names (bool, int8, ..., float32, ...)
const Choices& keep_names();           // duplicates --keep: first last

// Records `words` as the values of `o` (for completion) and returns `o`.
CLI::Option* offer_choices(CLI::Option* o, const Choices& words);
// The words recorded for `o`; null when none.
const Choices* choices_of(const CLI::Option* o);

// "lines, nul, u32le or u64le"
std::string choice_list(const Choices& words);
// The position of `value` in `words`; throws UsageError "unknown OPTION 'VALUE' (use
// ...)" when it is none of them.
size_t choose(const Choices& words, const std::string& option, const std::string& value);

}  // namespace zrec::cli
