// Croissant JSON-LD (see croissant.h). Terms as the Croissant 1.0 specification's
// context defines them; arrayShape and isArray are Croissant 1.1's, which 1.0 readers
// ignore.
#include "cli/formats/croissant.h"

#include "cli/formats/file_signature.h"
#include "cli/formats/json_string.h"

namespace zrec::cli {

namespace {

constexpr const char* kContext = R"({
    "@language": "en",
    "@vocab": "https://schema.org/",
    "sc": "https://schema.org/",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "dct": "http://purl.org/dc/terms/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isArray": "cr:isArray",
    "arrayShape": "cr:arrayShape",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform"
  })";

constexpr const char* kEncoding = "application/x-zrecord";

std::string quoted(std::string_view s) {
  std::string out;
  append_json_string(out, s);
  return out;
}

// `"key": "value"` lines of an object at `indent`, comma-joined by the caller.
std::string member(int indent, std::string_view key, const std::string& json_value) {
  return std::string(static_cast<size_t>(indent), ' ') + quoted(key) + ": " + json_value;
}

std::string joined(const std::vector<std::string>& items, int indent, char open, char close) {
  if (items.empty()) return std::string{open, close};
  std::string out(1, open);
  for (size_t i = 0; i < items.size(); ++i) out += (i ? ",\n" : "\n") + items[i];
  return out + "\n" + std::string(static_cast<size_t>(indent), ' ') + close;
}

std::string object(const std::vector<std::string>& members, int indent) { return joined(members, indent, '{', '}'); }

std::string file_object(const CroissantFile& f, int indent) {
  const int in = indent + 2;
  return std::string(static_cast<size_t>(indent), ' ') +
         object({member(in, "@type", quoted("cr:FileObject")), member(in, "@id", quoted(f.path)),
                 member(in, "name", quoted(f.path)), member(in, "contentUrl", quoted(f.path)),
                 member(in, "contentSize", quoted(std::to_string(f.bytes) + " B")),
                 member(in, "encodingFormat", quoted(f.path.ends_with(".json") ? "application/json" : kEncoding)),
                 member(in, "sha256", quoted(f.sha256_hex))},
                indent);
}

std::string stream_file_set(const CroissantStream& s, int indent) {
  const int in = indent + 2;
  return std::string(static_cast<size_t>(indent), ' ') +
         object({member(in, "@type", quoted("cr:FileSet")), member(in, "@id", quoted("stream/" + s.name)),
                 member(in, "name", quoted(s.name)), member(in, "encodingFormat", quoted(kEncoding)),
                 member(in, "includes", quoted(s.name.empty() ? "*.zr" : s.name + "/*.zr"))},
                indent);
}

std::string shape_text(const Schema& schema) {
  if (!schema.is_dense()) {
    std::string t;
    for (uint32_t d = 0; d < schema.ndim; ++d) t += (d ? "," : "") + std::string("-1");
    return t;
  }
  std::string t;
  for (size_t d = 0; d < schema.item_shape->size(); ++d) t += (d ? "," : "") + std::to_string((*schema.item_shape)[d]);
  return t;
}

std::string classes_id(const std::string& stream) { return stream + "_classes"; }

std::string field(const CroissantStream& s, const DatasetCard& card, int indent) {
  const int in = indent + 2;
  const bool scalar = s.schema.is_dense() && s.schema.item_shape->empty();
  std::vector<std::string> m = {
      member(in, "@type", quoted("cr:Field")), member(in, "@id", quoted("samples/" + s.name)),
      member(in, "name", quoted(s.name)),
      member(in, "description", quoted("zrec stream '" + s.name + "': " + s.schema.describe())),
      member(in, "dataType", quoted(s.data_type))};
  if (!scalar) {
    m.push_back(member(in, "isArray", "true"));
    m.push_back(member(in, "arrayShape", quoted(shape_text(s.schema))));
  }
  m.push_back(
      member(in, "source",
             object({member(in + 2, "fileSet", object({member(in + 4, "@id", quoted("stream/" + s.name))}, in + 2)),
                     member(in + 2, "extract", object({member(in + 4, "fileProperty", quoted("content"))}, in + 2))},
                    in)));
  if (card.labels.count(s.name) > 0)
    m.push_back(member(in, "references",
                       object({member(in + 2, "field",
                                      object({member(in + 4, "@id", quoted(classes_id(s.name) + "/index"))}, in + 2))},
                              in)));
  return std::string(static_cast<size_t>(indent), ' ') + object(m, indent);
}

std::string classes_record_set(const std::string& stream, const std::vector<std::string>& names, int indent) {
  const int in = indent + 2;
  const std::string id = classes_id(stream);
  auto typed_field = [&](const char* name, const char* type) {
    return std::string(static_cast<size_t>(in + 2), ' ') +
           object({member(in + 4, "@type", quoted("cr:Field")), member(in + 4, "@id", quoted(id + "/" + name)),
                   member(in + 4, "name", quoted(name)), member(in + 4, "dataType", quoted(type))},
                  in + 2);
  };
  std::vector<std::string> rows;
  for (size_t i = 0; i < names.size(); ++i)
    rows.push_back(std::string(static_cast<size_t>(in + 2), ' ') + "{" + quoted(id + "/index") + ": " +
                   std::to_string(i) + ", " + quoted(id + "/name") + ": " + quoted(names[i]) + "}");
  return std::string(static_cast<size_t>(indent), ' ') +
         object({member(in, "@type", quoted("cr:RecordSet")), member(in, "@id", quoted(id)),
                 member(in, "name", quoted(id)),
                 member(in, "description", quoted("The class names of stream '" + stream + "', by label value")),
                 member(in, "dataType", quoted("sc:Enumeration")),
                 member(in, "key", object({member(in + 2, "@id", quoted(id + "/index"))}, in)),
                 member(in, "field",
                        joined({typed_field("index", "sc:Integer"), typed_field("name", "sc:Text")}, in, '[', ']')),
                 member(in, "data", joined(rows, in, '[', ']'))},
                indent);
}

}  // namespace

std::string croissant_data_type(const Schema& schema, std::span<const uint8_t> first) {
  switch (schema.dtype.kind) {
    case DTypeKind::kBool:
      return "sc:Boolean";
    case DTypeKind::kInt:
    case DTypeKind::kUInt:
      break;
    case DTypeKind::kFloat:
      return "sc:Float";
    case DTypeKind::kBytes:
    case DTypeKind::kUnicode:
      return "sc:Text";
    default:
      return "sc:Text";
  }
  // Ragged 1-D bytes are a file's or a text's bytes more often than numbers.
  if (schema.dtype.itemsize == 1 && !schema.is_dense() && schema.ndim == 1) {
    const FileSignature* sig = file_signature(first);
    if (sig != nullptr && !sig->mime.empty() && sig->mime.starts_with("image/")) return "sc:ImageObject";
    if (looks_like_text(first)) return "sc:Text";
  }
  return "sc:Integer";
}

std::string croissant_json(const CroissantDataset& d) {
  constexpr int in = 2;
  std::vector<std::string> top = {member(in, "@context", kContext), member(in, "@type", quoted("sc:Dataset")),
                                  member(in, "conformsTo", quoted("http://mlcommons.org/croissant/1.0")),
                                  member(in, "name", quoted(d.name))};
  const auto text = [&](const char* key) -> const std::string* {
    const auto it = d.card.text.find(key);
    return it == d.card.text.end() ? nullptr : &it->second;
  };
  top.push_back(member(in, "description",
                       quoted(text("description") ? *text("description")
                                                  : "A zrec dataset of " + std::to_string(d.samples) + " samples")));
  if (text("license")) top.push_back(member(in, "license", quoted(*text("license"))));
  if (text("citation")) top.push_back(member(in, "citeAs", quoted(*text("citation"))));
  if (text("url")) top.push_back(member(in, "url", quoted(*text("url"))));
  if (text("version")) top.push_back(member(in, "version", quoted(*text("version"))));
  std::vector<std::string> distribution;
  for (const CroissantFile& f : d.other_files) distribution.push_back(file_object(f, in + 2));
  for (const CroissantStream& s : d.streams) {
    for (const CroissantFile& f : s.files) distribution.push_back(file_object(f, in + 2));
    distribution.push_back(stream_file_set(s, in + 2));
  }
  top.push_back(member(in, "distribution", joined(distribution, in, '[', ']')));
  std::vector<std::string> fields;
  for (const CroissantStream& s : d.streams) fields.push_back(field(s, d.card, in + 4));
  std::vector<std::string> record_sets = {
      std::string(in + 2, ' ') +
      object({member(in + 4, "@type", quoted("cr:RecordSet")), member(in + 4, "@id", quoted("samples")),
              member(in + 4, "name", quoted("samples")),
              member(in + 4, "description",
                     quoted(std::to_string(d.samples) + " samples, one record of each field per sample")),
              member(in + 4, "field", joined(fields, in + 4, '[', ']'))},
             in + 2)};
  for (const auto& [stream, names] : d.card.labels) record_sets.push_back(classes_record_set(stream, names, in + 2));
  top.push_back(member(in, "recordSet", joined(record_sets, in, '[', ']')));
  return object(top, 0) + "\n";
}

}  // namespace zrec::cli
