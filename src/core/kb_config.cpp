#include "core/kb_config.h"

#include <nlohmann/json.hpp>
#include <regex>

#include "core/util.h"
#include "quarry/error.h"

namespace quarry::core {
using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& msg) {
  throw Error(Code::invalid_argument, "config field '" + field + "': " + msg, {{"field", field}});
}

// The settings and their meanings are in one page; an unknown key points there.
[[noreturn]] void unknown_key(const std::string& field, const std::string& known) {
  bad(field, "unknown key (known: " + known + "; docs/configuration.md describes each)");
}

void expect_object(const json& j, const std::string& field) {
  if (!j.is_object()) bad(field, "must be a JSON object");
}

int get_int(const json& v, const std::string& field, int lo, int hi) {
  if (!v.is_number_integer()) bad(field, "must be an integer");
  auto x = v.get<long long>();
  if (x < lo || x > hi)
    bad(field, "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got " +
                   std::to_string(x) + ")");
  return static_cast<int>(x);
}

std::string get_string(const json& v, const std::string& field) {
  if (!v.is_string()) bad(field, "must be a string");
  return v.get<std::string>();
}

std::vector<std::string> get_string_list(const json& v, const std::string& field) {
  if (!v.is_array()) bad(field, "must be an array of strings");
  std::vector<std::string> out;
  for (const auto& e : v) {
    if (!e.is_string()) bad(field, "must be an array of strings");
    out.push_back(e.get<std::string>());
  }
  return out;
}

bool is_identifier(const std::string& s) {
  static const std::regex re("[A-Za-z_][A-Za-z0-9_]{0,63}");
  return std::regex_match(s, re);
}

void apply_chunking(const json& j, ChunkingConfig& c) {
  expect_object(j, "chunking");
  for (const auto& [k, v] : j.items()) {
    const std::string f = "chunking." + k;
    if (k == "profile") {
      c.profile = get_string(v, f);
      if (c.profile != "none" && c.profile != "prose" && c.profile != "code")
        bad(f, "must be one of none, prose, code");
    } else if (k == "max_tokens") {
      if (v.is_null())
        c.max_tokens.reset();
      else
        c.max_tokens = get_int(v, f, 16, 8191);
    } else if (k == "overlap_tokens") {
      if (v.is_null())
        c.overlap_tokens.reset();
      else
        c.overlap_tokens = get_int(v, f, 0, 4095);
    } else if (k == "segmenter") {
      c.segmenter = v.is_null() ? "icu" : get_string(v, f);  // null: a new KB's default
      if (c.segmenter != "icu" && c.segmenter != "none") bad(f, "must be one of icu, none");
    } else {
      unknown_key(f, "profile, max_tokens, overlap_tokens, segmenter");
    }
  }
}

void apply_subjects(const json& j, SubjectConfig& c) {
  expect_object(j, "subjects");
  for (const auto& [k, v] : j.items()) {
    const std::string f = "subjects." + k;
    if (k == "keys") {
      c.keys = get_string_list(v, f);
      for (const auto& key : c.keys)
        if (!is_identifier(key))
          bad(f, "'" + key + "' is not a valid metadata key ([A-Za-z_][A-Za-z0-9_]*)");
    } else if (k == "rule") {
      c.rule = get_string(v, f);
      if (c.rule != "exactly_one") bad(f, "must be exactly_one");
    } else {
      unknown_key(f, "keys, rule");
    }
  }
}

void apply_limits(const json& j, LimitsConfig& c) {
  expect_object(j, "limits");
  for (const auto& [k, v] : j.items()) {
    const std::string f = "limits." + k;
    if (k == "max_upload_bytes") {
      if (!v.is_number_integer() || v.get<long long>() < 1 || v.get<long long>() > (1LL << 34))
        bad(f, "must be an integer between 1 and 17179869184");
      c.max_upload_bytes = v.get<long long>();
    } else if (k == "max_chunks_per_document") {
      c.max_chunks_per_document = get_int(v, f, 1, 1000000);
    } else if (k == "max_chunks_per_call") {
      c.max_chunks_per_call = get_int(v, f, 1, 100000000);
    } else {
      unknown_key(f, "max_upload_bytes, max_chunks_per_document, max_chunks_per_call");
    }
  }
}

double get_number(const json& v, const std::string& field, double lo, double hi) {
  if (!v.is_number()) bad(field, "must be a number");
  double x = v.get<double>();
  if (x < lo || x > hi)
    bad(field, "must be between " + json(lo).dump() + " and " + json(hi).dump() + " (got " +
                   v.dump() + ")");
  return x;
}

std::string get_settings(const json& v, const std::string& field) {
  if (!v.is_object()) bad(field, "must be a JSON object");
  return v.dump();
}

void apply_embedder(const json& j, EmbedderConfig& c) {
  if (j.is_string() || j.is_null()) {  // shorthand: "embedder": "hash:256"
    c.provider = j.is_null() ? "" : j.get<std::string>();
    return;
  }
  expect_object(j, "embedder");
  for (const auto& [k, v] : j.items()) {
    const std::string f = "embedder." + k;
    if (k == "provider") {
      c.provider = v.is_null() ? "" : get_string(v, f);
    } else if (k == "settings") {
      c.settings_json = get_settings(v, f);
    } else {
      unknown_key(f, "provider, settings");
    }
  }
  static const std::regex spec("([a-z][a-z0-9_-]{0,31})(:.{1,200})?");
  if (!c.provider.empty() && !std::regex_match(c.provider, spec))
    bad("embedder.provider", "must look like 'static:glove-100d', 'hash' or 'hash:256'");
}

void apply_store(const json& j, StoreConfig& c) {
  if (j.is_string()) {  // shorthand: "store": "embedded"
    c.id = j.get<std::string>();
    return;
  }
  expect_object(j, "store");
  for (const auto& [k, v] : j.items()) {
    const std::string f = "store." + k;
    if (k == "id") {
      c.id = get_string(v, f);
    } else if (k == "settings") {
      c.settings_json = get_settings(v, f);
    } else if (k == "embedding_mode") {
      c.embedding_mode = v.is_null() ? "" : get_string(v, f);
      if (!c.embedding_mode.empty() && c.embedding_mode != "platform" &&
          c.embedding_mode != "plugin" && c.embedding_mode != "auto")
        bad(f, "must be one of platform, plugin, auto");
    } else {
      unknown_key(f, "id, settings, embedding_mode");
    }
  }
  static const std::regex id("[a-z][a-z0-9_-]{0,31}");
  if (!std::regex_match(c.id, id)) bad("store.id", "must be a store id such as 'embedded'");
}

void apply_hybrid(const json& j, HybridConfig& c) {
  expect_object(j, "hybrid");
  const HybridConfig defaults;
  for (const auto& [k, v] : j.items()) {
    const std::string f = "hybrid." + k;
    if (v.is_null()) {  // `null` resets a setting to its default (docs/cli.md)
      if (k == "fusion")
        c.fusion = defaults.fusion;
      else if (k == "semantic_ratio")
        c.semantic_ratio = defaults.semantic_ratio;
      else if (k == "weighting")
        c.weighting = defaults.weighting;
      else if (k == "rrf_k")
        c.rrf_k = defaults.rrf_k;
      else if (k == "keyword_weight")
        c.keyword_weight = defaults.keyword_weight;
      else if (k == "vector_weight")
        c.vector_weight = defaults.vector_weight;
      else
        unknown_key(f, "fusion, semantic_ratio, weighting, rrf_k, keyword_weight, vector_weight");
    } else if (k == "fusion") {
      c.fusion = get_string(v, f);
      if (c.fusion != "interpolation" && c.fusion != "rrf")
        bad(f, "must be one of interpolation, rrf");
    } else if (k == "semantic_ratio") {
      c.semantic_ratio = get_number(v, f, 0, 1);
    } else if (k == "weighting") {
      c.weighting = get_string(v, f);
      if (c.weighting != "adaptive" && c.weighting != "fixed")
        bad(f, "must be one of adaptive, fixed");
    } else if (k == "rrf_k") {
      c.rrf_k = get_int(v, f, 1, 10000);
    } else if (k == "keyword_weight") {
      c.keyword_weight = get_number(v, f, 0, 100);
    } else if (k == "vector_weight") {
      c.vector_weight = get_number(v, f, 0, 100);
    } else {
      unknown_key(f, "fusion, semantic_ratio, weighting, rrf_k, keyword_weight, vector_weight");
    }
  }
  if (c.keyword_weight + c.vector_weight <= 0)
    bad("hybrid.vector_weight", "keyword_weight and vector_weight cannot both be 0");
}

void apply_keyword(const json& j, KeywordConfig& c) {
  if (j.is_null()) {
    c = KeywordConfig{};
    return;
  }
  expect_object(j, "keyword");
  const KeywordConfig defaults;
  for (const auto& [k, v] : j.items()) {
    const std::string f = "keyword." + k;
    if (k == "segmenter") {
      c.segmenter = v.is_null() ? defaults.segmenter : get_string(v, f);
      if (c.segmenter != "icu" && c.segmenter != "bigram") bad(f, "must be one of icu, bigram");
    } else if (k == "diacritics") {
      c.diacritics = v.is_null() ? defaults.diacritics : get_string(v, f);
      if (c.diacritics != "fold" && c.diacritics != "keep") bad(f, "must be one of fold, keep");
    } else {
      unknown_key(f, "segmenter, diacritics");
    }
  }
  // Setting one on a KB of the older index settles the other at its default.
  if (c.segmenter.empty()) c.segmenter = defaults.segmenter;
  if (c.diacritics.empty()) c.diacritics = defaults.diacritics;
}

}  // namespace

void validate_kb_name(const std::string& name) {
  static const std::regex re("[a-z0-9][a-z0-9_-]{0,62}");
  if (!std::regex_match(name, re))
    throw Error(
        Code::invalid_argument,
        "invalid knowledge base name '" + name +
            "': use 1-63 characters of a-z, 0-9, '_' and '-', starting with a letter or digit",
        {{"field", "name"}});
}

void validate_kb_config(const KbConfig& c) {
  const auto& ch = c.chunking;
  if (ch.profile == "none") {
    if (ch.max_tokens)
      bad("chunking.max_tokens", "is refused under profile 'none' (one chunk per document)");
    if (ch.overlap_tokens)
      bad("chunking.overlap_tokens", "is refused under profile 'none' (one chunk per document)");
  }
  if (ch.overlap_tokens && *ch.overlap_tokens > ch.effective_max_tokens() / 2)
    bad("chunking.overlap_tokens", "must be at most half of max_tokens (" +
                                       std::to_string(ch.effective_max_tokens() / 2) + ")");
}

KbConfig kb_config_from_json(const json& j, const KbConfig& base) {
  KbConfig c = base;
  expect_object(j, "config");
  for (const auto& [k, v] : j.items()) {
    // null resets a setting to its default, at the top level as below it (docs/cli.md).
    if (k == "description") {
      c.description = v.is_null() ? std::string() : get_string(v, k);
      if (c.description.size() > 4096) bad(k, "must be at most 4096 bytes");
    } else if (k == "modes") {
      c.modes.clear();
      if (v.is_null()) {
        c.modes = KbConfig{}.modes;  // and the semantic ones below, with an embedder
        continue;
      }
      for (const auto& name : get_string_list(v, k)) {
        auto m = parse_mode(name);
        if (!m) bad("modes", "unknown mode '" + name + "' (known: " + mode_names() + ")");
        c.modes.push_back(*m);
      }
    } else if (k == "chunking") {
      apply_chunking(v, c.chunking);
    } else if (k == "subjects") {
      apply_subjects(v, c.subjects);
    } else if (k == "limits") {
      apply_limits(v, c.limits);
    } else if (k == "embedder") {
      apply_embedder(v, c.embedder);
    } else if (k == "store") {
      apply_store(v, c.store);
    } else if (k == "hybrid") {
      apply_hybrid(v, c.hybrid);
    } else if (k == "keyword") {
      apply_keyword(v, c.keyword);
    } else if (k == "revision") {
      c.revision = v.is_null() ? 0 : get_int(v, k, 0, 1 << 30);
    } else {
      unknown_key(k,
                  "description, modes, chunking, subjects, limits, embedder, store, hybrid, "
                  "keyword, revision");
    }
  }
  // A whole stored config written before the keyword settings existed: its index keeps the
  // tokenizer it was built with (KeywordConfig::legacy) until a keyword setting is made.
  if (!j.contains("keyword") && j.contains("revision") && j.contains("hybrid") &&
      j.contains("store"))
    c.keyword = KeywordConfig{"", ""};
  // A KB that gains an embedder while still on the default modes serves the semantic modes too.
  const bool modes_default = !j.contains("modes") || j["modes"].is_null();
  if (!c.embedder.provider.empty() && modes_default && c.modes == KbConfig{}.modes)
    c.modes = {Mode::grep, Mode::keyword, Mode::vector, Mode::hybrid, Mode::automatic};
  validate_kb_config(c);
  return c;
}

namespace {
json mode_list_json(const std::vector<Mode>& modes) {
  json out = json::array();
  for (Mode m : modes) out.push_back(mode_name(m));
  return out;
}
}  // namespace

json kb_config_to_json(const KbConfig& c) {
  // Only what the user set is stored: derived defaults follow later changes of max_tokens.
  json ch = {{"profile", c.chunking.profile}};
  if (c.chunking.max_tokens) ch["max_tokens"] = *c.chunking.max_tokens;
  if (c.chunking.overlap_tokens) ch["overlap_tokens"] = *c.chunking.overlap_tokens;
  ch["segmenter"] = c.chunking.segmenter;
  json out = {
      {"description", c.description},
      {"modes", mode_list_json(c.modes)},
      {"chunking", ch},
      {"subjects", {{"keys", c.subjects.keys}, {"rule", c.subjects.rule}}},
      {"limits",
       {{"max_upload_bytes", c.limits.max_upload_bytes},
        {"max_chunks_per_document", c.limits.max_chunks_per_document},
        {"max_chunks_per_call", c.limits.max_chunks_per_call}}},
      {"embedder",
       {{"provider", c.embedder.provider}, {"settings", json::parse(c.embedder.settings_json)}}},
      {"store",
       {{"id", c.store.id},
        {"settings", json::parse(c.store.settings_json)},
        {"embedding_mode",
         c.store.embedding_mode.empty() ? json(nullptr) : json(c.store.embedding_mode)}}},
      {"hybrid",
       {{"fusion", c.hybrid.fusion},
        {"semantic_ratio", c.hybrid.semantic_ratio},
        {"weighting", c.hybrid.weighting},
        {"rrf_k", c.hybrid.rrf_k},
        {"keyword_weight", c.hybrid.keyword_weight},
        {"vector_weight", c.hybrid.vector_weight}}},
      {"revision", c.revision},
  };
  if (!c.keyword.legacy())
    out["keyword"] = {{"segmenter", c.keyword.segmenter}, {"diacritics", c.keyword.diacritics}};
  return out;
}

KbConfig kb_config_set(const KbConfig& c, const std::string& dotted_key, const std::string& value) {
  json v = json::parse(value, nullptr, /*allow_exceptions=*/false);
  if (v.is_discarded()) v = value;  // bare words are strings
  // `modes=keyword,vector`: the list as a shell user types it.
  if (dotted_key == "modes" && v.is_string()) {
    json list = json::array();
    const std::string text = v.get<std::string>();
    for (std::string::size_type at = 0; at <= text.size();) {
      auto comma = text.find(',', at);
      if (comma == std::string::npos) comma = text.size();
      std::string name = text.substr(at, comma - at);
      name.erase(0, name.find_first_not_of(' '));
      name.erase(name.find_last_not_of(' ') + 1);
      if (!name.empty()) list.push_back(name);
      at = comma + 1;
    }
    v = list;
  }
  json patch = v;
  std::string::size_type end = dotted_key.size();
  while (true) {
    auto dot = dotted_key.rfind('.', end - 1);
    std::string part = dotted_key.substr(dot == std::string::npos ? 0 : dot + 1,
                                         end - (dot == std::string::npos ? 0 : dot + 1));
    if (part.empty()) bad(dotted_key, "empty key segment");
    patch = json{{part, patch}};
    if (dot == std::string::npos || dot == 0) break;
    end = dot;
  }
  // Under `none` the stored budgets are meaningless: switching to none clears them.
  KbConfig base = c;
  if (dotted_key == "chunking.profile" && v == "none") {
    base.chunking.max_tokens.reset();
    base.chunking.overlap_tokens.reset();
  }
  return kb_config_from_json(patch, base);
}

std::string config_revision(const KbConfig& c, const std::string& tokenizer) {
  json parts = {{"profile", c.chunking.profile},
                {"max_tokens", c.chunking.effective_max_tokens()},
                {"overlap_tokens", c.chunking.effective_overlap_tokens()},
                {"revision", c.revision}};
  if (!tokenizer.empty()) parts["tokenizer"] = tokenizer;
  // none is how every KB was cut before the setting: their revisions stay what they were.
  if (c.chunking.segmenter != "none") parts["segmenter"] = c.chunking.segmenter;
  return sha256_hex(parts.dump()).substr(0, 16);
}

std::string revision(const KbConfig& c, const std::string& embedder_identity,
                     const std::string& tokenizer) {
  return sha256_hex(config_revision(c, tokenizer) + "|" + embedder_identity).substr(0, 16);
}

}  // namespace quarry::core
