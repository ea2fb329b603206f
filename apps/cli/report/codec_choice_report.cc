// The report of a codec choice (codec_choice_report.h).
#include "cli/report/codec_choice_report.h"

#include "zrec/store.h"

#include "cli/formats/printable.h"

namespace zrec::cli {

std::string codec_choice_line(const std::string& store, const CodecChoice& c) {
  std::string line =
      std::string("codec auto chose ") + to_string(c.codec) + " for '" + printable(store) + "': " + describe_choice(c);
  if (!c.note.empty()) line += "; " + c.note;
  return line;
}

JsonFacts codec_choice_facts(const CodecChoice& c) {
  JsonFacts f;
  auto ratio = [&](const char* key, uint64_t compressed) {
    if (compressed == 0) f.set_null(key);
    else f.set(key, static_cast<double>(c.sizes.raw) / static_cast<double>(compressed));
  };
  f.set("codec", to_string(c.codec)).set("source_records", c.population).set("records_sampled", c.sampled);
  f.set("records_measured", c.sizes.records);
  f.set("raw_bytes", c.sizes.raw).set("zstd_bytes", c.sizes.zstd);
  if (c.trained) f.set("dict_bytes", c.sizes.dict);
  else f.set_null("dict_bytes");
  ratio("ratio_zstd", c.sizes.zstd);
  ratio("ratio_dict", c.trained ? c.sizes.dict : 0);
  f.set("dict_size", uint64_t{c.dictionary.size()});
  return f;
}

void report_stream_choices(CommandReport& report, const std::string& root, const std::vector<std::string>& names,
                           const std::vector<const CodecChoice*>& choices) {
  JsonFacts streams;
  bool any = false;
  for (size_t i = 0; i < choices.size(); ++i) {
    const CodecChoice* choice = choices[i];
    if (choice == nullptr) continue;
    any = true;
    report.note(codec_choice_line(join_path(root, names[i]), *choice));
    streams.set_json(names[i], codec_choice_facts(*choice).object());
  }
  if (any) report.set_json("codec_choice", streams.object());
}

}  // namespace zrec::cli
