// The JSON shapes of the public types: one renderer shared by the CLI's --json output, the
// REST API (docs/openapi.json describes them) and MCP's structured tool results.
#include "wire/wire.h"

#include <chrono>

#include "quarry/util.h"

namespace quarry::wire {
using nlohmann::json;

json error_json(const Error& e) {
  json details = json::object();
  for (const auto& [k, v] : e.details()) details[k] = v;
  return {
      {"error", {{"code", code_name(e.code())}, {"message", e.message()}, {"details", details}}}};
}

json to_json(const IndexStatus& s) {
  return {{"keyword", s.keyword}, {"vector", s.vector}};
}

json to_json(const ChunkInfo& c) {
  return {{"index", c.index},
          {"chunk_id", c.chunk_id},
          {"parent_chunk", c.parent_chunk ? json(*c.parent_chunk) : json(nullptr)},
          {"heading_path", c.heading_path},
          {"offset", c.offset},
          {"body_offset", c.body_offset},
          {"length", c.length},
          {"token_count", c.token_count},
          {"text", c.text}};
}

static json subject_json(const std::optional<Subject>& s) {
  if (!s) return nullptr;
  return {{"key", s->key}, {"value", s->value}};
}

static json metadata(const std::string& text) {
  json j = json::parse(text, nullptr, false);
  return j.is_discarded() ? json::object() : j;
}

json to_json(const KbInfo& k) {
  json cfg = json::parse(k.config_json);
  // What chunking uses: the config's budgets, capped at the embedding model's input.
  cfg["chunking"]["effective_max_tokens"] = k.chunk_max_tokens;
  cfg["chunking"]["effective_overlap_tokens"] = k.chunk_overlap_tokens;
  cfg["chunking"]["tokenizer"] = k.chunk_tokenizer;
  if (k.config.chunking.profile == "none") {
    cfg["chunking"].erase("effective_max_tokens");
    cfg["chunking"].erase("effective_overlap_tokens");
  }
  return {{"name", k.name},
          {"description", k.config.description},
          {"config", cfg},
          {"documents", k.documents},
          {"chunks", k.chunks},
          {"markdown_bytes", k.markdown_bytes},
          {"source_bytes", k.source_bytes},
          {"created_at", k.created_at},
          {"updated_at", k.updated_at},
          {"index_status", to_json(k.index_status)},
          {"revision", k.revision},
          {"config_revision", k.config_revision},
          {"vectors", to_json(k.vectors)}};
}

json to_json(const VectorIndexInfo& v) {
  json failures = json::array();
  for (const auto& f : v.failures)
    failures.push_back(
        {{"doc_id", f.doc_id}, {"code", f.code}, {"message", f.message}, {"at", f.at}});
  auto rev = [](const std::string& r) { return r.empty() ? json(nullptr) : json(r); };
  return {{"serving_revision", rev(v.serving_revision)},
          {"building_revision", rev(v.building_revision)},
          {"previous_revision", rev(v.previous_revision)},
          {"documents", v.documents},
          {"ready", v.ready},
          {"stale", v.stale},
          {"pending", v.pending},
          {"failed", v.failed},
          {"stored_vectors", v.stored},
          {"failures", failures},
          {"unavailable", v.unavailable_code.empty()
                              ? json(nullptr)
                              : json{{"code", v.unavailable_code}, {"message", v.unavailable}}}};
}

json to_json(const Document& d) {
  json j = {{"id", d.id},
            {"kb", d.kb},
            {"filename", d.filename},
            {"title", d.title},
            {"source_sha256", d.source_sha256},
            {"content_sha256", d.content_sha256},
            {"metadata", metadata(d.metadata_json)},
            {"subject", subject_json(d.subject)},
            {"converter", d.converter},
            {"source_bytes", d.source_bytes},
            {"markdown_bytes", d.markdown_bytes},
            {"chunk_count", d.chunk_count},
            {"created_at", d.created_at},
            {"updated_at", d.updated_at},
            {"markdown_path", d.markdown_path},
            {"raw_path", d.raw_path},
            {"index_status", to_json(d.index_status)}};
  if (d.vector_failure)
    j["vector_error"] = {{"code", d.vector_failure->code},
                         {"message", d.vector_failure->message},
                         {"at", d.vector_failure->at}};
  return j;
}

static json ranges_json(const std::vector<std::pair<std::size_t, std::size_t>>& ranges) {
  json out = json::array();
  for (const auto& [b, e] : ranges) out.push_back({b, e});
  return out;
}

// The byte offset `at` of `text` in Unicode code points (the code points that start before it).
static std::size_t code_points_before(const std::string& text, std::size_t at) {
  std::size_t n = 0;
  for (std::size_t i = 0; i < at && i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) ++n;
  return n;
}

json to_json(const KbChangePlan& p) {
  auto pair = [](const std::string& b, const std::string& a) {
    return json{{"before", b}, {"after", a}};
  };
  return {{"dry_run", true},
          {"kb", p.kb},
          {"description", p.config.description},
          {"config", json::parse(p.config_json)},
          {"revision", pair(p.revision_before, p.revision_after)},
          {"config_revision", pair(p.config_revision_before, p.config_revision_after)},
          {"vectors", p.vectors},
          {"re_embed", p.re_embed},
          {"re_cut", p.re_cut},
          {"re_cut_at", p.re_cut_at.empty() ? json(nullptr) : json(p.re_cut_at)},
          {"documents", p.documents},
          {"chunks", p.chunks},
          {"chunks_after", p.chunks_after}};
}

json to_json(const Hit& h) {
  return {{"kb", h.kb},
          {"doc_id", h.doc_id},
          {"filename", h.filename},
          {"title", h.title},
          {"chunk_id", h.chunk_id},
          {"chunk_index", h.chunk_index},
          {"parent_chunk", h.parent_chunk ? json(*h.parent_chunk) : json(nullptr)},
          {"heading_path", h.heading_path},
          {"offset", h.offset},
          {"length", h.length},
          {"snippet", h.snippet},
          {"snippet_text", h.snippet_text},
          {"highlights", ranges_json(h.highlights)},
          {"score", h.score},
          {"raw_score", h.raw_score},
          {"metric", h.metric},
          {"subject", subject_json(h.subject)},
          {"metadata", metadata(h.metadata_json)}};
}

static json per_mode(const SearchResponse& r) {
  json out = json::object();
  for (const auto& [mode, list] : r.per_mode) {
    json hits = json::array();
    for (const auto& h : list) hits.push_back(to_json(h));
    out[mode] = hits;
  }
  return out;
}

json to_json(const SearchResponse& r) {
  json hits = json::array();
  for (const auto& h : r.hits) hits.push_back(to_json(h));
  json out = {{"kb", r.kb},
              {"mode", mode_name(r.mode)},
              {"hits", hits},
              {"degraded", r.degraded},
              {"per_mode", per_mode(r)},
              {"index_status", to_json(r.index_status)},
              {"took_ms", r.took_ms}};
  if (!r.hint.empty()) out["hint"] = r.hint;  // auto only, and only when it has one
  return out;
}

json to_json(const GrepResponse& r) {
  json matches = json::array();
  for (const auto& m : r.matches) {
    json before = json::array(), after = json::array();
    for (const auto& l : m.before) before.push_back({{"line", l.line}, {"text", l.text}});
    for (const auto& l : m.after) after.push_back({{"line", l.line}, {"text", l.text}});
    json ranges = json::array(), highlights = json::array();
    for (const auto& [b, e] : m.ranges) {
      ranges.push_back({b, e});
      highlights.push_back({code_points_before(m.text, b), code_points_before(m.text, e)});
    }
    matches.push_back({{"kb", m.kb},
                       {"doc_id", m.doc_id},
                       {"filename", m.filename},
                       {"line", m.line},
                       {"text", m.text},
                       {"ranges", ranges},
                       {"highlights", highlights},
                       {"before", before},
                       {"after", after},
                       {"subject", subject_json(m.subject)}});
  }
  return {{"kb", r.kb},
          {"matches", matches},
          {"truncated", r.truncated},
          {"files_searched", r.files_searched},
          {"files_matched", r.files_matched},
          {"took_ms", r.took_ms}};
}

json to_json(const IngestItem& i) {
  json j = {{"path", i.path}, {"status", i.status}};
  if (!i.doc_id.empty()) j["doc_id"] = i.doc_id;
  if (i.status == "failed")
    j["error"] = {{"code", i.code}, {"message", i.message}};
  else
    j["chunks"] = i.chunks;
  if (!i.warnings.empty()) j["warnings"] = i.warnings;
  if (!i.vector_status.empty()) {
    j["vector_status"] = i.vector_status;
    if (!i.vector_code.empty())
      j["vector_error"] = {{"code", i.vector_code}, {"message", i.vector_message}};
  }
  return j;
}

json to_json(const IngestReport& r) {
  json items = json::array();
  for (const auto& i : r.items) items.push_back(to_json(i));
  return {{"added", r.added},   {"updated", r.updated}, {"unchanged", r.unchanged},
          {"failed", r.failed}, {"bytes", r.bytes},     {"took_ms", r.took_ms},
          {"items", items}};
}

json to_json(const ReindexReport& r) {
  json j = {{"kb", r.kb},
            {"serving_revision", r.serving_revision},
            {"target_revision", r.target_revision},
            {"documents", r.documents},
            {"chunks", r.chunks},
            {"chunks_embedded", r.chunks_embedded},
            {"chunks_cached", r.chunks_cached},
            {"provider_calls", r.provider_calls},
            {"failed", r.failed},
            {"pending", r.pending},
            {"orphans", r.orphans},
            {"cancelled", r.cancelled},
            {"cut_over", r.cut_over},
            {"took_ms", r.took_ms},
            {"rested_ms", r.rested_ms}};
  if (!r.error_code.empty()) j["error"] = {{"code", r.error_code}, {"message", r.error_message}};
  return j;
}

json to_json(const ReindexProgress& p) {
  return {{"kb", p.kb},         {"revision", p.revision}, {"total", p.total}, {"done", p.done},
          {"failed", p.failed}, {"rate", p.rate},         {"eta_s", p.eta_s}};
}

json to_json(const ActivityEntry& a) {
  json details = json::parse(a.details_json, nullptr, false);
  if (details.is_discarded()) details = json::object();
  return {{"id", a.id},         {"at", a.at}, {"actor", a.actor},   {"surface", a.surface},
          {"action", a.action}, {"kb", a.kb}, {"target", a.target}, {"details", details}};
}

json to_json(const TokenInfo& t) {
  return {{"id", t.id},
          {"name", t.name},
          {"scope", t.scope},
          {"kbs", t.kbs},
          {"created_at", t.created_at},
          {"revoked_at", t.revoked_at.empty() ? json(nullptr) : json(t.revoked_at)}};
}

static json plugin_json(const RegisteredPlugin& p, bool provider) {
  json j = {{"id", p.id}, {"description", nullptr}, {"settings", nullptr}};
  if (provider) j["models"] = nullptr;
  if (!p.schema) return j;
  j["description"] = p.schema->description;
  json settings = json::array();
  for (const auto& s : p.schema->settings)
    settings.push_back(
        {{"name", s.name},
         {"type", s.type},
         {"required", s.required},
         {"default", s.default_json.empty() ? json(nullptr) : json::parse(s.default_json)},
         {"description", s.description},
         {"enum", s.allowed.empty() ? json(nullptr) : json(s.allowed)}});
  j["settings"] = settings;
  if (provider) {
    json models = json::array();
    for (const auto& m : p.schema->models)
      models.push_back({{"name", m.name},
                        {"dimensions", m.dimensions > 0 ? json(m.dimensions) : json(nullptr)},
                        {"description", m.description},
                        {"default", m.is_default}});
    j["models"] = models;
  }
  return j;
}

json plugins_json(const std::vector<RegisteredPlugin>& providers,
                  const std::vector<RegisteredPlugin>& stores) {
  json ps = json::array(), ss = json::array();
  for (const auto& p : providers) ps.push_back(plugin_json(p, true));
  for (const auto& s : stores) ss.push_back(plugin_json(s, false));
  return {{"providers", ps}, {"stores", ss}};
}

json remote_document_json(const Document& d) {
  json j = to_json(d);
  j.erase("markdown_path");
  j.erase("raw_path");
  return j;
}

json reindex_state_json(const std::string& kb, const IndexerKbState* st) {
  json j = {{"kb", kb},        {"running", false},          {"progress", nullptr},
            {"last", nullptr}, {"consecutive_failures", 0}, {"next_attempt", nullptr}};
  if (!st) return j;
  j["running"] = st->running;
  if (st->progress) j["progress"] = to_json(*st->progress);
  if (st->last) j["last"] = to_json(*st->last);
  j["consecutive_failures"] = st->consecutive_failures;
  if (st->consecutive_failures > 0)
    j["next_attempt"] = iso8601_utc(
        std::chrono::duration_cast<std::chrono::milliseconds>(st->next_attempt.time_since_epoch())
            .count());
  return j;
}

Error redacted(const Error& e, const std::string& data_dir) {
  auto clean = [&data_dir](std::string s) {
    if (!data_dir.empty())
      for (auto at = s.find(data_dir); at != std::string::npos; at = s.find(data_dir, at))
        s.replace(at, data_dir.size(), "<data-dir>");
    return repair_utf8(s);
  };
  std::map<std::string, std::string> details;
  for (const auto& [k, v] : e.details()) details[repair_utf8(k)] = clean(v);
  return Error(e.code(), clean(e.message()), std::move(details));
}

int http_status(Code code) {
  switch (code) {
    case Code::ok:
      return 200;
    case Code::invalid_argument:
      return 400;
    case Code::unauthorized:
      return 401;
    case Code::forbidden:
      return 403;
    case Code::blocked_address:
      return 403;
    case Code::not_found:
      return 404;
    case Code::already_exists:
    case Code::conflict:
      return 409;
    case Code::payload_too_large:
    case Code::content_too_large:
      return 413;
    case Code::unsupported_format:
    case Code::corrupt_input:
    case Code::no_content:
    case Code::too_many_chunks:
    case Code::mode_unavailable:
    case Code::dimension_mismatch:
    case Code::input_rejected:
    case Code::contract_violation:
      return 422;
    case Code::budget_exhausted:
      return 402;
    case Code::rate_limited:
      return 429;
    case Code::busy:
    case Code::engine_unavailable:
      return 503;
    case Code::upstream_error:
      return 502;
    case Code::timeout:
      return 504;
    case Code::cancelled:
      return 409;
    case Code::io_error:
    case Code::internal:
      return 500;
  }
  return 500;
}

}  // namespace quarry::wire
