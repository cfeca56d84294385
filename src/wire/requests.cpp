// The request codec (wire/requests.h): every surface's search, grep, ingest and KB requests
// decoded in one place, with one set of defaults and bounds.
#include "wire/requests.h"

#include <array>

#include "wire/fields.h"

namespace quarry::wire {
using nlohmann::json;

namespace {

// Standard base64 (RFC 4648 §4); whitespace is skipped (line-wrapped encoders), padding is
// optional. Anything else names the field.
std::string decode_base64(const std::string& in, const std::string& field) {
  static const std::array<int, 256> value = [] {
    std::array<int, 256> v{};
    v.fill(-1);
    const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (int i = 0; i < 64; ++i) v[static_cast<unsigned char>(alphabet[i])] = i;
    return v;
  }();
  std::string out;
  out.reserve(in.size() / 4 * 3);
  std::uint32_t acc = 0;
  int bits = 0, pad = 0;
  for (char c : in) {
    if (c == ' ' || c == '\r' || c == '\n') continue;
    if (c == '=') {
      ++pad;
      continue;
    }
    const int v = value[static_cast<unsigned char>(c)];
    if (v < 0 || pad > 0) throw bad_field(field, "'" + field + "' is not valid base64");
    acc = (acc << 6) | static_cast<std::uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<char>((acc >> bits) & 0xFF));
    }
  }
  // Leftover bits must be the zero padding of a final partial group (6 or 12 bits, never 18).
  if (pad > 2 || bits >= 6 || (acc & ((1u << bits) - 1)) != 0)
    throw bad_field(field, "'" + field + "' is not valid base64");
  return out;
}

std::vector<std::string> string_array(const Fields& f, const std::string& name) {
  std::vector<std::string> out;
  const json* v = f.get(name);
  if (!v) return out;
  if (!v->is_array()) throw bad_field(name, "'" + name + "' must be an array of strings");
  for (const auto& s : *v) {
    if (!s.is_string()) throw bad_field(name, "'" + name + "' must be an array of strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

// metadata and replace, as every ingest request reads them.
void decode_ingest_common(const Fields& f, IngestOptions& o) {
  o.metadata_json = f.object_text("metadata");
  o.replace = f.flag("replace", false);
}

}  // namespace

// --- search ------------------------------------------------------------------------------------

const std::vector<std::string>& search_fields() {
  static const std::vector<std::string> keys = {"query",  "mode",   "top_k",          "min_score",
                                                "filter", "fusion", "semantic_ratio", "advanced"};
  return keys;
}

SearchRequest decode_search(const json& body, const std::string& kb) {
  const Fields f(body, search_fields());
  SearchRequest r;
  r.kb = kb;
  r.query = f.required_string("query");
  if (auto m = f.string("mode")) r.mode = mode_from_name(*m);  // absent: kDefaultMode
  r.top_k = static_cast<int>(f.integer("top_k", 1, kTopKMax).value_or(kTopKDefault));
  r.min_score = f.number("min_score", 0, 1).value_or(0);
  r.filter_json = f.object_text("filter");
  if (f.has("fusion")) r.fusion = f.choice("fusion", {"interpolation", "rrf"}, "");
  r.semantic_ratio = f.number("semantic_ratio", 0, 1);
  r.advanced = f.flag("advanced", false);
  return r;
}

json encode_search(const SearchRequest& r) {
  json j = {{"query", r.query}, {"top_k", r.top_k}, {"min_score", r.min_score}};
  if (r.mode) j["mode"] = mode_name(*r.mode);
  if (!r.filter_json.empty()) j["filter"] = json::parse(r.filter_json);
  if (r.fusion) j["fusion"] = *r.fusion;
  if (r.semantic_ratio) j["semantic_ratio"] = *r.semantic_ratio;
  if (r.advanced) j["advanced"] = true;
  return j;
}

// --- grep --------------------------------------------------------------------------------------

const std::vector<std::string>& grep_fields() {
  static const std::vector<std::string> keys = {
      "pattern", "literal",        "ignore_case",   "word",        "invert",
      "context", "before_context", "after_context", "max_matches", "filter"};
  return keys;
}

GrepRequest decode_grep(const json& body, const std::string& kb) {
  const Fields f(body, grep_fields());
  GrepRequest r;
  r.kb = kb;
  r.pattern = f.required_string("pattern");
  r.literal = f.flag("literal", false);
  r.ignore_case = f.flag("ignore_case", false);
  r.word = f.flag("word", false);
  r.invert = f.flag("invert", false);
  const auto context = f.integer("context", 0, kContextMax).value_or(0);
  r.before_context =
      static_cast<int>(f.integer("before_context", 0, kContextMax).value_or(context));
  r.after_context = static_cast<int>(f.integer("after_context", 0, kContextMax).value_or(context));
  r.max_matches = static_cast<std::size_t>(
      f.integer("max_matches", 1, kMaxMatchesMax).value_or(kMaxMatchesDefault));
  r.filter_json = f.object_text("filter");
  return r;
}

json encode_grep(const GrepRequest& r) {
  json j = {{"pattern", r.pattern},
            {"before_context", r.before_context},
            {"after_context", r.after_context},
            {"max_matches", r.max_matches}};
  if (r.literal) j["literal"] = true;
  if (r.ignore_case) j["ignore_case"] = true;
  if (r.word) j["word"] = true;
  if (r.invert) j["invert"] = true;
  if (!r.filter_json.empty()) j["filter"] = json::parse(r.filter_json);
  return j;
}

// --- ingest ------------------------------------------------------------------------------------

const std::vector<std::string>& upload_fields() {
  static const std::vector<std::string> keys = {"filename", "content", "content_base64", "metadata",
                                                "replace"};
  return keys;
}

UploadBatch decode_upload(const json& body) {
  const Fields f(body, upload_fields());
  UploadBatch b;
  Upload u;
  u.filename = f.required_string("filename");
  const bool text = f.has("content"), b64 = f.has("content_base64");
  if (text == b64) throw bad_field("content", "give exactly one of 'content' and 'content_base64'");
  // Text may be empty here: an empty document is refused by ingest as no_content, with its code.
  u.bytes =
      text ? *f.string("content") : decode_base64(*f.string("content_base64"), "content_base64");
  decode_ingest_common(f, b.options);
  b.uploads.push_back(std::move(u));
  return b;
}

UploadBatch decode_upload_form(const std::map<std::string, std::string>& fields,
                               const std::vector<FormFile>& files) {
  UploadBatch b;
  for (const auto& [k, v] : fields) {
    if (k == "metadata") {
      const json m = json::parse(v, nullptr, false);
      if (m.is_discarded() || !m.is_object())
        throw bad_field("metadata", "'metadata' must be JSON object text");
      b.options.metadata_json = m.dump();
    } else if (k == "replace") {
      if (v != "true" && v != "false")
        throw bad_field("replace", "'replace' must be true or false");
      b.options.replace = v == "true";
    } else {
      throw bad_field(k, "unknown form field '" + k + "' (expected file, metadata, replace)");
    }
  }
  for (const auto& file : files) {
    if (file.field != "file") throw bad_field(file.field, "file parts must be named 'file'");
    if (file.filename.empty())
      throw bad_field("file",
                      "a 'file' part has an empty filename; name each file (curl -F "
                      "'file=@notes.md' names it after the path)");
    b.uploads.push_back({file.filename, file.content});
  }
  if (b.uploads.empty()) throw bad_field("file", "the form has no 'file' part");
  return b;
}

IngestOptions decode_ingest_options(const json& body) {
  const Fields f(body, {"metadata", "replace", "include", "exclude"});
  IngestOptions o;
  decode_ingest_common(f, o);
  o.include = string_array(f, "include");
  o.exclude = string_array(f, "exclude");
  return o;
}

// --- knowledge bases ---------------------------------------------------------------------------

KbCreate decode_kb_create(const json& body) {
  const Fields f(body, {"name", "config", "description"});
  KbCreate c;
  c.name = f.required_string("name");
  json config = json::object();
  if (const json* v = f.get("config")) {
    if (!v->is_object()) throw bad_field("config", "'config' must be a JSON object");
    config = *v;
  }
  if (auto d = f.string("description")) config["description"] = *d;
  c.config_json = config.dump();
  return c;
}

KbChange decode_kb_change(const json& body) {
  const Fields f(body, {"settings", "cutover"});
  const json* settings = f.get("settings");
  if (!settings || !settings->is_object())
    throw bad_field("settings", "'settings' must be a non-empty object of \"key\": value pairs");
  std::vector<std::pair<std::string, json>> pairs;
  for (const auto& [k, v] : settings->items()) pairs.emplace_back(k, v);
  return decode_kb_change(pairs, f.string("cutover").value_or("on-complete"));
}

KbChange decode_kb_change(const std::vector<std::pair<std::string, json>>& settings,
                          const std::string& cutover) {
  if (settings.empty())
    throw bad_field("settings", "'settings' must be a non-empty object of \"key\": value pairs");
  KbChange c;
  for (const auto& [k, v] : settings) {
    if (v.is_string())
      c.settings.emplace_back(k, v.get<std::string>());
    else if (v.is_number() || v.is_boolean())
      c.settings.emplace_back(k, v.dump());
    else
      throw bad_field(k, "setting '" + k + "' must be a string, number or boolean");
  }
  if (cutover != "on-complete" && cutover != "immediate")
    throw bad_field("cutover", "'cutover' must be on-complete or immediate");
  c.cutover_immediate = cutover == "immediate";
  return c;
}

}  // namespace quarry::wire
