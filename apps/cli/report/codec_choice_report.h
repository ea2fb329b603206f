// How commands report the codec `--codec auto` chose (zrec/codec_choice.h): one line
// for people and one JSON object, the same facts in both (docs/json.md, "codec_choice").
//
// Example:
//   report.note(codec_choice_line("tokens/", choice));
//   // "codec auto chose zstd_dict for 'tokens/': 7630 of 200000 records sampled, 953
//   //  held out and measured (469912 bytes); compression ratio zstd 1.83x, zstd_dict 2.33x"
//   report.set_json("codec_choice", codec_choice_facts(choice).object());
#pragma once

#include <string>
#include <vector>

#include "zrec/codec_choice.h"

#include "cli/report/command_report.h"

namespace zrec::cli {

std::string codec_choice_line(const std::string& store, const CodecChoice& choice);

// codec, source_records, records_sampled, records_measured (held out when a dictionary
// was trained), raw_bytes, zstd_bytes, dict_bytes (null
// when no dictionary was trained), ratio_zstd, ratio_dict (raw / compressed; null
// likewise), dict_size (dict.zr's bytes, 0 unless zstd_dict was chosen).
JsonFacts codec_choice_facts(const CodecChoice& choice);

// A root's streams whose codec this run chose (choices[i], stream names[i]'s; null: not
// chosen by this run): one line each, and "codec_choice" as an object of their facts by
// stream name; nothing when no stream's codec was chosen.
void report_stream_choices(CommandReport& report, const std::string& root, const std::vector<std::string>& names,
                           const std::vector<const CodecChoice*>& choices);

}  // namespace zrec::cli
