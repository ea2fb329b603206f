// What `zrec recompress`, `zrec concat` and `zrec train-dict` share: the dictionary
// training options (--tier, --size, --samples, --seed), the training summary, and the store-to-store copy that
// recompress and concat both are.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "zrec/dict.h"
#include "zrec/status.h"

#include "cli/app/command.h"
#include "cli/options/cli11_fwd.h"
#include "cli/report/command_report.h"
#include "cli/roots/root_transfer.h"

namespace zrec::cli {

// The ratio "3.52x" of a / b (b == 0 gives "-").
std::string format_ratio(uint64_t a, uint64_t b);

// --tier, --samples, --seed (and, for train-dict, --size).
struct TrainArgs {
  std::string tier;      // "": balanced
  std::string size;      // "": the tier's dictionary size
  uint64_t samples = 0;  // 0: the tier's maximum
  uint64_t seed = 0;
};

// Registers the options; `with_size` adds --size (train-dict only).
void add_train_options(CLI::App* cmd, TrainArgs& args, bool with_size);

// The TrainOptions the arguments ask for (throws UsageError for a bad tier or size).
Result<TrainOptions> make_train_options(const TrainArgs& args, const GlobalOptions& g, int level);

// Trains a dictionary from `source` (described as `what` in messages), prints the
// trainer's warnings on stderr, and fills *report.
Result<std::vector<uint8_t>> train_with_report(const std::string& command, RecordSource& source,
                                               const TrainOptions& options, const std::string& what,
                                               const GlobalOptions& g, TrainReport* report);

// One line about a trained dictionary: size, ID, parameters, samples, held-out ratios.
std::string describe_training(const TrainReport& r, uint64_t dict_bytes, uint64_t seed, double seconds);
// The same facts for --json (docs/json.md): dict_bytes, dict_id, fastcover_k,
// fastcover_d, candidates, source_records, records_sampled, records_held_out,
// sample_bytes, seed, held_out_bytes, held_out_ratio_zstd, held_out_ratio_dict.
void training_facts(JsonFacts& facts, const TrainReport& r, uint64_t dict_bytes, uint64_t seed);

// Options of recompress and concat.
struct TransferArgs {
  std::string dst;
  std::vector<std::string> sources;
  std::string codec;    // "": the first source's codec
  std::string dict;     // --dict FILE
  uint32_t shards = 0;  // 0: the first source's
  int level = 0;        // 0: the format's default, and frames may be copied
  uint64_t window_mib = 64;
  bool checksum = false;    // --checksum: every frame of DST carries a content checksum
  bool json = false;        // --json: the outcome as one JSON object on stdout
  bool consume = false;     // concat --consume: remove the sources once DST is in place
  bool frame_copy = false;  // concat --frame-copy: copy frame by frame even where placement applies
  TrainArgs train;
  std::vector<std::string> stream_codecs;  // --stream-codec STREAM=CODEC (roots: root_transfer.h)
  std::string exclude_from;                // recompress --exclude-from FILE: sample IDs left out
};

// Registers --codec, --dict, --tier, --samples, --seed, --shards, --level,
// --window-mib, --checksum and --json (the operands are each command's own).
void add_transfer_options(CLI::App* cmd, TransferArgs& args);

// Builds args.dst from the records of args.sources, in order: the whole of recompress
// (one source) and concat (several). A concat whose sources all keep DST's codec,
// dictionary and shard count joins them by placement (zrec/join.h: each data file
// copied as one run, the table shifted) instead of copying frame by frame. Prints one
// summary line on stderr, or the JSON object with --json.
Status run_transfer(const std::string& command, TransferArgs& args, const GlobalOptions& g);

// The arguments of a transfer of roots (roots/root_transfer.h).
RootTransferArgs root_transfer_args(const TransferArgs& args);

}  // namespace zrec::cli
