// REST handlers (SPEC §9). Each one decodes its input with the request codec (wire/requests.h:
// the same fields, defaults and bounds as MCP and the CLI; unknown body keys are errors naming
// the key), calls the Engine and renders the result with wire/wire.h, so REST, MCP and the CLI's
// --json agree on every shape (docs/openapi.json describes them).
#include "server/rest.h"

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "quarry/plugin.h"
#include "quarry/secrets.h"
#include "server/rest_helpers.h"
#include "wire/fields.h"
#include "wire/requests.h"
#include "wire/wire.h"

namespace quarry::server {
namespace {
using nlohmann::json;

const std::string& kb_of(const ApiRequest& r) {
  return r.path.at("kb");
}

EnginePool::Lease engine(ServerState& s, const ApiRequest& r) {
  return s.engines.acquire(r.who.actor, r.surface);
}

void poke(ServerState& s, const std::string& kb) {
  if (s.indexer) s.indexer->poke(kb);
}

json document_json(const Document& d) {
  return wire::remote_document_json(d);
}

json reindex_state(ServerState& s, const std::string& kb) {
  if (!s.indexer) return wire::reindex_state_json(kb, nullptr);
  const auto all = s.indexer->state();
  const auto it = all.find(kb);
  return wire::reindex_state_json(kb, it == all.end() ? nullptr : &it->second);
}

json kb_status(ServerState& s, const KbInfo& k) {
  return {{"kb", k.name},
          {"documents", k.documents},
          {"chunks", k.chunks},
          {"index_status", wire::to_json(k.index_status)},
          {"revision", k.revision},
          {"config_revision", k.config_revision},
          {"vectors", wire::to_json(k.vectors)},
          {"reindex", reindex_state(s, k.name)}};
}

// --- server ------------------------------------------------------------------------------------

ApiReply get_health(ServerState&, const ApiRequest&) {
  return reply({{"status", "ok"}, {"version", "0.1.0"}});
}

// The caller as authenticated: a client (the web page) shows what its scope does not allow as
// disabled rather than failing after a click.
ApiReply get_me(ServerState&, const ApiRequest& r) {
  const bool anonymous = r.who.actor.rfind("token:", 0) != 0;
  return reply({{"actor", r.who.actor},
                {"anonymous", anonymous},
                {"token_id", anonymous ? json(nullptr) : json(r.who.actor.substr(6))},
                {"scope", scope_name(r.who.scope)},
                {"kbs", r.who.kbs},
                {"can",
                 {{"read", true},
                  {"write", r.who.scope >= Scope::write},
                  {"admin", r.who.scope >= Scope::admin}}}});
}

// The embedding providers and vector stores this build offers, with their settings, for a
// client that builds a KB's config (a web page's form).
ApiReply list_plugins(ServerState&, const ApiRequest&) {
  return reply(wire::plugins_json(described_providers(), described_stores()));
}

ApiReply get_openapi(ServerState& s, const ApiRequest&) {
  return ApiReply{200, "application/json", s.openapi_json};
}

ApiReply get_status(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  json kbs = json::array();
  for (const auto& k : e->list_kbs())
    if (may_reach(r.who, k.name)) kbs.push_back(kb_status(s, k));
  double uptime =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - s.started).count();
  return reply({{"version", "0.1.0"}, {"uptime_s", uptime}, {"kbs", kbs}});
}

std::string prom_label(const std::string& v) {
  std::string out;
  for (char c : v) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out.push_back(c);
  }
  return out;
}

ApiReply get_metrics(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  std::string out;
  auto gauge = [&out](const char* name, const char* help,
                      const std::vector<std::pair<std::string, std::int64_t>>& rows) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " gauge\n";
    for (const auto& [kb, v] : rows)
      out += std::string(name) + "{kb=\"" + prom_label(kb) + "\"} " + std::to_string(v) + "\n";
  };
  std::vector<std::pair<std::string, std::int64_t>> docs, chunks, pending, failed;
  for (const auto& k : e->list_kbs()) {
    if (!may_reach(r.who, k.name)) continue;
    docs.emplace_back(k.name, k.documents);
    chunks.emplace_back(k.name, k.chunks);
    pending.emplace_back(k.name, k.vectors.pending);
    failed.emplace_back(k.name, k.vectors.failed);
  }
  gauge("quarry_documents", "Documents in a knowledge base.", docs);
  gauge("quarry_chunks", "Chunks in a knowledge base.", chunks);
  gauge("quarry_vectors_pending", "Documents whose vectors are not ready.", pending);
  gauge("quarry_vectors_failed", "Documents whose embedding failed permanently.", failed);
  if (s.http_metrics) out += s.http_metrics();
  return ApiReply{200, "text/plain; version=0.0.4", out};
}

ApiReply list_activity(ServerState& s, const ApiRequest& r) {
  std::string kb = query_param(r, "kb");
  // A KB-limited admin may read the log of its KBs only.
  if (kb.empty() && !r.who.kbs.empty())
    throw Error(Code::forbidden, "this token is limited to some knowledge bases: pass ?kb=NAME",
                {{"field", "kb"}});
  require(r.who, Scope::admin, kb);
  int limit = int_param(r, "limit", 100, 1, 1000);
  std::string before = query_param(r, "before", "0");
  char* end = nullptr;
  long long before_id = std::strtoll(before.c_str(), &end, 10);
  if (*end != '\0' || before_id < 0) throw bad("before", "'before' must be an entry id");
  auto e = engine(s, r);
  auto entries = e->activity(kb, limit, before_id);
  json arr = json::array();
  for (const auto& a : entries) arr.push_back(wire::to_json(a));
  json next = static_cast<int>(entries.size()) == limit ? json(entries.back().id) : json(nullptr);
  return reply({{"entries", arr}, {"next_before", next}});
}

// --- knowledge bases ---------------------------------------------------------------------------

// Where a KB's embedder sends its key and requests. An admin token limited to some KBs must not
// be able to point the server's secrets (or its network position) at a host of its choosing:
// only an unlimited admin may set these.
void check_outbound_settings(const ApiRequest& r, const std::string& text) {
  if (r.who.kbs.empty()) return;
  for (const char* key : {"base_url", "api_key_secret", "allow_private"})
    if (text.find(key) != std::string::npos)
      throw Error(
          Code::forbidden,
          std::string("setting '") + key + "' needs an admin token not limited to knowledge bases",
          {{"field", key}});
}

ApiReply list_kbs(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  json kbs = json::array();
  for (const auto& k : e->list_kbs())
    if (may_reach(r.who, k.name)) kbs.push_back(wire::to_json(k));
  return reply({{"kbs", kbs}});
}

ApiReply create_kb(ServerState& s, const ApiRequest& r) {
  const wire::KbCreate c = wire::decode_kb_create(body_object(r));
  require(r.who, Scope::admin, c.name);
  check_outbound_settings(r, c.config_json);
  auto e = engine(s, r);
  return reply(wire::to_json(e->create_kb(c.name, c.config_json)), 201);
}

ApiReply get_kb(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  return reply(wire::to_json(e->describe_kb(kb_of(r))));
}

// ?dry_run=true: the same checks and errors, nothing written; the answer says what the change
// would do (Engine::plan_kb_change, the decision set_kb acts on).
ApiReply update_kb(ServerState& s, const ApiRequest& r) {
  const bool dry_run = bool_param(r, "dry_run", false);
  const json b = body_object(r);
  const wire::KbChange c = wire::decode_kb_change(b);
  check_outbound_settings(r, b["settings"].dump());
  auto e = engine(s, r);
  if (dry_run)
    return reply(wire::to_json(e->plan_kb_change(kb_of(r), c.settings, c.cutover_immediate)));
  KbInfo k = e->set_kb(kb_of(r), c.settings, c.cutover_immediate);
  poke(s, k.name);
  return reply(wire::to_json(k));
}

ApiReply delete_kb(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  e->delete_kb(kb_of(r));
  return reply({{"deleted", kb_of(r)}});
}

ApiReply get_kb_status(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  return reply(kb_status(s, e->describe_kb(kb_of(r))));
}

// --- documents ---------------------------------------------------------------------------------

ApiReply list_documents(ServerState& s, const ApiRequest& r) {
  int limit = int_param(r, "limit", 100, 1, 1000);
  std::string filter = query_param(r, "filter");
  auto e = engine(s, r);
  auto page = e->list_documents(kb_of(r), query_param(r, "cursor"), limit, filter);
  json docs = json::array();
  for (const auto& d : page.documents) docs.push_back(document_json(d));
  return reply(
      {{"documents", docs},
       {"next_cursor", page.next_cursor.empty() ? json(nullptr) : json(page.next_cursor)}});
}

ApiReply add_documents(ServerState& s, const ApiRequest& r) {
  wire::UploadBatch batch;
  if (r.content_type.rfind("multipart/form-data", 0) == 0) {
    std::vector<wire::FormFile> files;
    for (const auto& f : r.files) files.push_back({f.field, f.filename, f.content});
    batch = wire::decode_upload_form(r.fields, files);
  } else {
    batch = wire::decode_upload(body_object(r));
  }
  auto& uploads = batch.uploads;
  const IngestOptions& opts = batch.options;
  IngestReport report;
  const auto t0 = std::chrono::steady_clock::now();
  {
    auto e = engine(s, r);
    for (auto& u : uploads) {
      IngestItem item;
      try {
        item = e->ingest_bytes(kb_of(r), u.filename, u.bytes, opts);
      } catch (const Error& err) {
        // The CLI's advice ("--replace") in REST's words.
        if (err.code() == Code::conflict && uploads.size() == 1) {
          std::string m = err.message();
          for (auto at = m.find("--replace"); at != std::string::npos; at = m.find("--replace"))
            m.replace(at, 9, "\"replace\": true");
          throw Error(err.code(), m, err.details());
        }
        if (uploads.size() == 1) throw;
        item.path = u.filename;
        item.status = "failed";
        item.code = code_name(err.code());
        item.message = err.message();
      }
      if (item.status == "failed" && uploads.size() == 1)
        throw Error(code_from_name(item.code), item.message, {{"filename", u.filename}});
      if (item.status == "added") ++report.added;
      if (item.status == "updated") ++report.updated;
      if (item.status == "unchanged") ++report.unchanged;
      if (item.status == "failed") ++report.failed;
      report.bytes += static_cast<std::int64_t>(u.bytes.size());
      report.items.push_back(std::move(item));
    }
  }
  report.took_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (report.added || report.updated) poke(s, kb_of(r));
  return reply(wire::to_json(report), report.added ? 201 : 200);
}

ApiReply delete_documents_where(ServerState& s, const ApiRequest& r) {
  const std::string filter = wire::Fields(body_object(r), {"filter"}).object_text("filter");
  if (filter.empty() || filter == "{}")
    throw bad("filter", "'filter' is required and must not be empty (it would delete everything)");
  auto e = engine(s, r);
  auto ids = e->delete_where(kb_of(r), filter);
  if (!ids.empty()) poke(s, kb_of(r));
  return reply({{"deleted", ids}});
}

ApiReply get_document(ServerState& s, const ApiRequest& r) {
  bool with_markdown = bool_param(r, "markdown", true);
  auto e = engine(s, r);
  json out = {{"document", document_json(e->get_document(kb_of(r), r.path.at("id")))}};
  if (with_markdown) out["markdown"] = e->read_markdown(kb_of(r), r.path.at("id"));
  return reply(out);
}

ApiReply get_document_markdown(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  return ApiReply{200, "text/markdown; charset=utf-8", e->read_markdown(kb_of(r), r.path.at("id"))};
}

// The chunks search returns for this document, with offsets into its Markdown body (what
// getDocumentMarkdown answers), for a viewer that shows chunk boundaries.
ApiReply list_document_chunks(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  json chunks = json::array();
  for (const auto& c : e->list_chunks(kb_of(r), r.path.at("id")))
    chunks.push_back(wire::to_json(c));
  return reply({{"kb", kb_of(r)}, {"doc_id", r.path.at("id")}, {"chunks", std::move(chunks)}});
}

ApiReply edit_document(ServerState& s, const ApiRequest& r) {
  const std::string md =
      wire::Fields(body_object(r), {"markdown"}).required_string("markdown", true);
  auto e = engine(s, r);
  Document d = e->edit_document(kb_of(r), r.path.at("id"), md);
  poke(s, kb_of(r));
  return reply(document_json(d));
}

ApiReply delete_document(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  e->delete_document(kb_of(r), r.path.at("id"));
  poke(s, kb_of(r));
  return reply({{"deleted", r.path.at("id")}});
}

ApiReply reconvert_document(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  Document d = e->reconvert_document(kb_of(r), r.path.at("id"));
  poke(s, kb_of(r));
  return reply(document_json(d));
}

// --- retrieval ---------------------------------------------------------------------------------

ApiReply search(ServerState& s, const ApiRequest& r) {
  const SearchRequest q = wire::decode_search(body_object(r), kb_of(r));
  auto e = engine(s, r);
  return reply(wire::to_json(e->search(q)));
}

ApiReply grep(ServerState& s, const ApiRequest& r) {
  const GrepRequest q = wire::decode_grep(body_object(r), kb_of(r));
  auto e = engine(s, r);
  return reply(wire::to_json(e->grep(q)));
}

// --- index lifecycle ---------------------------------------------------------------------------

ApiReply get_reindex(ServerState& s, const ApiRequest& r) {
  auto e = engine(s, r);
  e->describe_kb(kb_of(r));  // 404 for an unknown KB
  return reply(reindex_state(s, kb_of(r)));
}

ApiReply start_reindex(ServerState& s, const ApiRequest& r) {
  wire::Fields(body_object(r, /*may_be_empty=*/true), {});
  {
    auto e = engine(s, r);
    e->describe_kb(kb_of(r));
  }
  if (!s.indexer)
    throw Error(Code::engine_unavailable,
                "this server runs without its background indexer (--no-indexer): run "
                "`quarry reindex --kb " +
                    kb_of(r) + "`");
  s.indexer->poke(kb_of(r));
  return reply(reindex_state(s, kb_of(r)), 202);
}

// --- tokens ------------------------------------------------------------------------------------

void require_unlimited_admin(const ApiRequest& r) {
  require(r.who, Scope::admin);
  if (!r.who.kbs.empty())
    throw Error(Code::forbidden, "tokens are managed by an admin token not limited to KBs");
}

ApiReply list_tokens(ServerState& s, const ApiRequest& r) {
  require_unlimited_admin(r);
  auto e = engine(s, r);
  json arr = json::array();
  for (const auto& t : e->list_tokens()) arr.push_back(wire::to_json(t));
  return reply({{"tokens", arr}});
}

ApiReply create_token(ServerState& s, const ApiRequest& r) {
  require_unlimited_admin(r);
  const json b = body_object(r);
  const wire::Fields f(b, {"name", "scope", "kbs"});
  std::vector<std::string> kbs;
  if (const json* list = f.get("kbs")) {
    if (!list->is_array()) throw bad("kbs", "'kbs' must be an array of KB names");
    for (const auto& k : *list) {
      if (!k.is_string()) throw bad("kbs", "'kbs' must be an array of KB names");
      kbs.push_back(k.get<std::string>());
    }
  }
  auto e = engine(s, r);
  NewToken t = e->create_token(f.required_string("name"), f.required_string("scope"), kbs);
  return reply({{"token", wire::to_json(t.token)}, {"secret", t.secret}}, 201);
}

ApiReply revoke_token(ServerState& s, const ApiRequest& r) {
  require_unlimited_admin(r);
  auto e = engine(s, r);
  e->revoke_token(r.path.at("id"));
  return reply({{"revoked", r.path.at("id")}});
}

// --- secrets (admin, every KB): written and deleted, never read back --------------------------

ApiReply list_secrets(ServerState& s, const ApiRequest& r) {
  require_unlimited_admin(r);
  return reply({{"secrets", secret_names(s.engines.data_dir())}});
}

ApiReply put_secret(ServerState& s, const ApiRequest& r) {
  require_unlimited_admin(r);
  const std::string& name = r.path.at("name");
  if (!valid_secret_name(name))
    throw bad("name", "invalid secret name '" + name +
                          "': use letters, digits and '_', not starting with a digit (at most 64)");
  const json body = body_object(r);  // Fields holds a reference
  const wire::Fields f(body, {"value"});
  set_secret(s.engines.data_dir(), name, f.required_string("value"));
  return reply({{"name", name}, {"stored", true}});
}

ApiReply delete_secret_route(ServerState& s, const ApiRequest& r) {
  require_unlimited_admin(r);
  const std::string& name = r.path.at("name");
  if (!delete_secret(s.engines.data_dir(), name))
    throw Error(Code::not_found, "no secret named '" + name + "' (see GET /api/v1/secrets)",
                {{"name", name}});
  return reply({{"deleted", name}});
}

}  // namespace

const std::map<std::string, RestHandler>& rest_handlers() {
  static const std::map<std::string, RestHandler> handlers = {
      {"getHealth", get_health},
      {"getOpenApi", get_openapi},
      {"getStatus", get_status},
      {"getMe", get_me},
      {"listPlugins", list_plugins},
      {"getMetrics", get_metrics},
      {"listActivity", list_activity},
      {"listKbs", list_kbs},
      {"createKb", create_kb},
      {"getKb", get_kb},
      {"updateKb", update_kb},
      {"deleteKb", delete_kb},
      {"getKbStatus", get_kb_status},
      {"listDocuments", list_documents},
      {"addDocuments", add_documents},
      {"deleteDocumentsWhere", delete_documents_where},
      {"getDocument", get_document},
      {"getDocumentMarkdown", get_document_markdown},
      {"listDocumentChunks", list_document_chunks},
      {"editDocument", edit_document},
      {"deleteDocument", delete_document},
      {"reconvertDocument", reconvert_document},
      {"search", search},
      {"grep", grep},
      {"getReindex", get_reindex},
      {"startReindex", start_reindex},
      {"listTokens", list_tokens},
      {"createToken", create_token},
      {"revokeToken", revoke_token},
      {"listSecrets", list_secrets},
      {"putSecret", put_secret},
      {"deleteSecret", delete_secret_route},
  };
  static const std::map<std::string, RestHandler> all = [] {
    auto m = handlers;
    for (const auto& [k, v] : pump_handlers()) m.emplace(k, v);
    return m;
  }();
  return all;
}

}  // namespace quarry::server
