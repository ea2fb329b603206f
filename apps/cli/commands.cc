// The command table (see commands.h).
#include "cli/commands.h"

namespace zrec::cli {

namespace {

constexpr CommandEntry kCommands[] = {
    {"create", register_create},
    {"append-npy", register_append_npy},
    {"append-files", register_append_files},
    {"append-stream", register_append_stream},
    {"append-tar", register_append_tar},
    {"append-lmdb", register_append_lmdb},
    {"append-h5", register_append_h5},
    {"adopt", register_adopt},
    {"card", register_card},
    {"cat", register_cat},
    {"info", register_info},
    {"train-dict", register_train_dict},
    {"recompress", register_recompress},
    {"concat", register_concat},
    {"digest", register_digest},
    {"diff", register_diff},
    {"duplicates", register_duplicates},
    {"split", register_split},
    {"verify", register_verify},
    {"sync", register_sync},
    {"bench", register_bench},
#ifdef ZREC_WITH_VIEW  // cmake/cli.cmake: built with ZREC_BUILD_VIEW
    {"view", register_view},
#endif
    {"completion", register_completion},
};

}  // namespace

std::span<const CommandEntry> all_commands() { return kCommands; }

}  // namespace zrec::cli
