// The write tools: add_document, edit_document, delete_document (absent with --read-only).
// They need Scope::write (writes spend: embedding calls follow), checked before any lookup.
// The Engine they lease is tagged with the caller and surface "mcp", so the audit log records
// every write made through MCP (SPEC §10). After a write the server's indexer is poked
// (McpOptions::on_write) so vectors follow without waiting for its next interval.
#include "server/mcp_tools.h"
#include "wire/requests.h"
#include "wire/wire.h"

namespace quarry::server::mcp {

namespace {

EnginePool::Lease writer(const ToolCall& c, const std::string& kb) {
  require(c.who, Scope::write, kb);
  return c.engines.acquire(c.who.actor, "mcp");
}

void written(const ToolCall& c, const std::string& kb) {
  if (c.opts.on_write) c.opts.on_write(kb);
}

}  // namespace

ToolOutput run_add_document(const ToolCall& c) {
  const std::string kb = c.args.kb(c.opts);
  // The upload as REST decodes it: filename, content or content_base64, metadata, replace.
  wire::UploadBatch batch = wire::decode_upload(c.args.request());
  const wire::Upload& u = batch.uploads.front();
  const std::string& filename = u.filename;
  auto e = writer(c, kb);
  IngestItem item = e->ingest_bytes(kb, filename, u.bytes, batch.options);
  if (item.status == "failed")  // ingest_bytes throws; a failed item is kept as an error too
    throw Error(code_from_name(item.code), item.message, {{"filename", filename}});
  if (item.status != "unchanged") written(c, kb);
  json out = wire::to_json(item);
  out["kb"] = kb;
  return {out, text_ingest(kb, item)};
}

ToolOutput run_edit_document(const ToolCall& c) {
  const std::string kb = c.args.kb(c.opts);
  const std::string id = c.args.required_string("doc_id");
  auto content = c.args.string("content");
  if (!content)
    throw Error(Code::invalid_argument, "argument 'content' is required: the new Markdown",
                {{"field", "content"}});
  auto e = writer(c, kb);
  Document d = e->edit_document(kb, id, *content);
  written(c, kb);
  return {document_json(d), "edited " + d.id + " (" + d.filename + ") in '" + kb +
                                "': " + std::to_string(d.chunk_count) + " chunks; keyword " +
                                d.index_status.keyword + ", vector " + d.index_status.vector};
}

ToolOutput run_delete_document(const ToolCall& c) {
  const std::string kb = c.args.kb(c.opts);
  const std::string id = c.args.required_string("doc_id");
  auto e = writer(c, kb);
  e->delete_document(kb, id);
  written(c, kb);
  return {{{"kb", kb}, {"doc_id", id}, {"deleted", true}}, "deleted " + id + " from '" + kb + "'"};
}

}  // namespace quarry::server::mcp
