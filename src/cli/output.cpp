#include "cli/output.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <iostream>

namespace quarry::cli {
using nlohmann::json;

std::unique_ptr<Engine> open_engine(const Globals& g) {
  EngineOptions o;
  o.data_dir = g.data_dir;
  o.surface = "cli";
  o.lock_timeout_ms = g.lock_timeout_ms;
  return Engine::open(o);
}

void print_json(const json& j) {
  std::cout << j.dump(2, ' ', false, json::error_handler_t::replace) << "\n";
}

json error_json(const Error& e) {
  json details = json::object();
  for (const auto& [k, v] : e.details()) details[k] = v;
  return {
      {"error", {{"code", code_name(e.code())}, {"message", e.message()}, {"details", details}}}};
}

bool stderr_is_tty() {
  return isatty(STDERR_FILENO) != 0;
}

void ProgressBar::draw(const std::string& prefix, std::size_t done, std::size_t total,
                       const std::string& suffix) {
  auto now = std::chrono::steady_clock::now();
  if (done != total && now - last_ < std::chrono::milliseconds(100)) return;
  last_ = now;
  const std::size_t width = 30;
  const std::size_t filled = total ? std::min(width, width * done / total) : width;
  std::cerr << "\r" << prefix << "[" << std::string(filled, '#') << std::string(width - filled, '.')
            << "] " << done << "/" << total << " " << suffix << "\033[K" << std::flush;
  if (done == total) std::cerr << "\r\033[K" << std::flush;
}

json to_json(const IndexStatus& s) {
  return {{"keyword", s.keyword}, {"vector", s.vector}};
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
  cfg["chunking"]["effective_max_tokens"] = k.config.chunking.effective_max_tokens();
  cfg["chunking"]["effective_overlap_tokens"] = k.config.chunking.effective_overlap_tokens();
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

void print_vectors_human(const KbInfo& k) {
  const auto& v = k.vectors;
  if (v.serving_revision.empty() && v.building_revision.empty()) return;
  std::cout << "  vectors: " << v.ready << "/" << v.documents << " documents ready";
  if (v.stale) std::cout << ", " << v.stale << " stale";
  if (v.pending - v.stale > 0) std::cout << ", " << v.pending - v.stale << " pending";
  if (v.failed) std::cout << ", " << v.failed << " failed";
  std::cout << "; serving revision " << v.serving_revision;
  if (!v.building_revision.empty()) std::cout << ", building " << v.building_revision;
  std::cout << "\n";
  for (const auto& f : v.failures)
    std::cout << "    failed " << f.doc_id << "  [" << f.code << "] " << f.message << "\n";
  if (v.pending > 0)
    std::cout << "    run `quarry reindex --kb " << k.name << "` to embed what is pending\n";
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
          {"failures", failures}};
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
          {"score", h.score},
          {"raw_score", h.raw_score},
          {"metric", h.metric},
          {"subject", subject_json(h.subject)},
          {"metadata", metadata(h.metadata_json)}};
}

json per_mode(const SearchResponse& r) {
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
  return {{"kb", r.kb},
          {"mode", r.mode},
          {"hits", hits},
          {"degraded", r.degraded},
          {"per_mode", per_mode(r)},
          {"index_status", to_json(r.index_status)},
          {"took_ms", r.took_ms}};
}

json to_json(const GrepResponse& r) {
  json matches = json::array();
  for (const auto& m : r.matches) {
    json before = json::array(), after = json::array();
    for (const auto& l : m.before) before.push_back({{"line", l.line}, {"text", l.text}});
    for (const auto& l : m.after) after.push_back({{"line", l.line}, {"text", l.text}});
    json ranges = json::array();
    for (const auto& [b, e] : m.ranges) ranges.push_back({b, e});
    matches.push_back({{"kb", m.kb},
                       {"doc_id", m.doc_id},
                       {"filename", m.filename},
                       {"line", m.line},
                       {"text", m.text},
                       {"ranges", ranges},
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

}  // namespace quarry::cli
