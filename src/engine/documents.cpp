// The Engine's documents (SPEC §2): ingest of files, folders and uploads, reading, editing,
// reconverting and deleting; vectors follow through the scheduler (SPEC §7).
#include <filesystem>
#include <unordered_map>

#include "catalog/writer_lock.h"
#include "convert/converter.h"
#include "core/filter.h"
#include "core/util.h"
#include "engine/engine_impl.h"
#include "ingest/staging.h"

namespace fs = std::filesystem;

namespace quarry::engine {
namespace {

void tally(IngestReport& r, const IngestItem& item) {
  if (item.status == "added")
    ++r.added;
  else if (item.status == "updated")
    ++r.updated;
  else if (item.status == "unchanged")
    ++r.unchanged;
  else
    ++r.failed;
}

}  // namespace

// --- ingestion -----------------------------------------------------------------------------

IngestReport EngineImpl::ingest_path(const std::string& name, const std::string& path,
                                     const IngestOptions& opts) {
  auto t0 = std::chrono::steady_clock::now();
  const Kb kb = resolve(name);
  const chunk::Chunking chunking = vectors_->write_chunking(kb.ref, kb.config);
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    if (ec == std::errc::too_many_symbolic_link_levels)
      throw Error(Code::io_error,
                  "symbolic link loop: " + path +
                      " leads back to itself through symbolic links; fix or remove the link",
                  {{"path", path}});
    throw Error(Code::not_found, "no such file or directory: " + path, {{"path", path}});
  }
  std::vector<ingest::WalkEntry> entries;
  if (fs::is_directory(path, ec)) {
    entries = ingest::walk_directory(path, opts.include, opts.exclude);
  } else {
    entries.push_back({path, fs::path(path).filename().string(), "", ""});
  }
  IngestReport report;
  std::int64_t batch_chunks = 0;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (opts.cancel && opts.cancel->load()) {
      report.cancelled = true;
      report.not_reached = entries.size() - i;
      break;
    }
    const auto& e = entries[i];
    if (opts.progress) opts.progress(IngestProgress{i, entries.size(), e.relative});
    IngestItem item = ingest_entry(kb, chunking, e, opts, &batch_chunks, &report.bytes);
    tally(report, item);
    if (opts.on_item) opts.on_item(item);
    report.items.push_back(std::move(item));
  }
  if (opts.progress && !report.cancelled)
    opts.progress(IngestProgress{entries.size(), entries.size(), ""});
  report.took_ms = ms_since(t0);
  return report;
}

IngestItem EngineImpl::ingest_bytes(const std::string& name, const std::string& filename,
                                    const std::string& bytes, const IngestOptions& opts) {
  if (filename.empty() || filename.find('\0') != std::string::npos)
    throw Error(Code::invalid_argument, "a document needs a file name", {{"field", "filename"}});
  const Kb kb = resolve(name);
  const chunk::Chunking chunking = vectors_->write_chunking(kb.ref, kb.config);
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  IngestItem item = ingest::ingest_document(write_context(kb.ref, chunking), kb.config, filename,
                                            bytes, opts, nullptr);
  mark_pending(kb, item);
  return item;
}

IngestItem EngineImpl::ingest_entry(const Kb& kb, const chunk::Chunking& chunking,
                                    const ingest::WalkEntry& e, const IngestOptions& opts,
                                    std::int64_t* batch_chunks, std::int64_t* bytes_total) {
  IngestItem failed;
  failed.path = e.relative;
  failed.status = "failed";
  if (!e.error_code.empty()) {
    failed.code = e.error_code;
    failed.message = e.error_message;
    return failed;
  }
  try {
    std::error_code ec;
    auto size = fs::file_size(e.absolute, ec);  // refuse before reading a huge file
    if (!ec)
      ingest::check_upload_size(kb.config, kb.ref.name, e.relative,
                                static_cast<std::int64_t>(size));
    std::string bytes = ingest::read_whole_file(e.absolute);
    *bytes_total += static_cast<std::int64_t>(bytes.size());
    catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
    IngestItem item = ingest::ingest_document(write_context(kb.ref, chunking), kb.config,
                                              e.relative, bytes, opts, batch_chunks);
    item.path = e.relative;
    mark_pending(kb, item);
    return item;
  } catch (const Error& err) {
    failed.code = code_name(err.code());
    failed.message = err.message();
  } catch (const std::exception& ex) {
    failed.code = "internal";
    failed.message = ex.what();
  }
  return failed;
}

// Vectors are the scheduler's (SPEC §7): an ingested document is pending until a sweep
// (reindex, serve, --wait) embeds it.
void EngineImpl::mark_pending(const Kb& kb, IngestItem& item) {
  if (item.status == "failed" || item.doc_id.empty()) return;
  // The target revision's config, not the chunking in effect.
  if (kb.config.embedder.provider.empty()) return;
  if (auto row = cat_->documents().find(kb.ref, item.doc_id)) {
    VectorFailure f;  // an unchanged document may carry a tombstone
    item.vector_status = vectors_->document_status(kb.ref, kb.config, *row, &f);
    if (item.vector_status == "failed") {
      item.vector_code = f.code;
      item.vector_message = f.message;
    } else if (item.vector_status != "ready") {
      // Pending, and no sweep can embed it while the embedder is unavailable: say why.
      const lifecycle::KbVectors& v = vectors_->for_kb(kb.ref.name, kb.config);
      if (v.unavailable_code != Code::ok) {
        item.vector_code = code_name(v.unavailable_code);
        item.vector_message = v.unavailable;
      }
    }
  }
}

// --- documents -----------------------------------------------------------------------------

catalog::DocumentRow EngineImpl::doc_row(const Kb& kb, const std::string& id) const {
  auto row = cat_->documents().find(kb.ref, id);
  if (!row)
    throw Error(Code::not_found,
                "document " + id + " not found in knowledge base '" + kb.ref.name +
                    "' (ids are scoped to their KB; see `quarry docs list --kb " + kb.ref.name +
                    "`)",
                {{"doc_id", id}, {"kb", kb.ref.name}});
  return *row;
}

Document EngineImpl::with_vectors(Document d, const Kb& kb, const catalog::DocumentRow& row) {
  VectorFailure f;
  d.index_status.vector = vectors_->document_status(kb.ref, kb.config, row, &f);
  if (d.index_status.vector == "failed") d.vector_failure = f;
  return d;
}

DocumentPage EngineImpl::list_documents(const std::string& name, const std::string& cursor,
                                        int limit, const std::string& filter_json) {
  if (limit < 1 || limit > 10000)
    throw Error(Code::invalid_argument, "limit must be between 1 and 10000", {{"field", "limit"}});
  // A cursor is a next_cursor this API returned (a document id): anything else would list
  // from an arbitrary place instead of failing.
  if (!cursor.empty() && !core::is_ulid(cursor))
    throw Error(Code::invalid_argument,
                "cursor '" + core::repair_utf8(cursor.substr(0, 64)) +
                    "' is not a next_cursor this API returned; pass next_cursor back unchanged, "
                    "or leave cursor out for the first page",
                {{"field", "cursor"}});
  const core::Filter filter = core::parse_filter_text(filter_json);
  const Kb kb = resolve(name);
  auto rows = cat_->documents().list(kb.ref, cursor, limit + 1, filter);
  DocumentPage page;
  for (std::size_t i = 0; i < rows.size() && static_cast<int>(i) < limit; ++i)
    page.documents.push_back(with_vectors(to_document(rows[i], layout_), kb, rows[i]));
  if (static_cast<int>(rows.size()) > limit) page.next_cursor = page.documents.back().id;
  return page;
}

Document EngineImpl::get_document(const std::string& name, const std::string& id) {
  const Kb kb = resolve(name);
  auto row = doc_row(kb, id);
  return with_vectors(to_document(row, layout_), kb, row);
}

std::string EngineImpl::read_markdown(const std::string& name, const std::string& id) {
  const Kb kb = resolve(name);
  auto row = doc_row(kb, id);
  std::string file = ingest::read_whole_file(layout_.markdown_path(name, id));
  return file.substr(std::min<std::size_t>(static_cast<std::size_t>(row.body_offset), file.size()));
}

std::vector<ChunkInfo> EngineImpl::list_chunks(const std::string& name, const std::string& id) {
  const Kb kb = resolve(name);
  const auto row = doc_row(kb, id);
  std::vector<ChunkInfo> out;
  for (auto& c : cat_->documents().chunks_of(kb.ref, id)) {
    ChunkInfo i;
    i.index = c.index;
    i.chunk_id = std::move(c.chunk_id);
    i.parent_chunk = std::move(c.parent_chunk);
    i.heading_path = std::move(c.heading_path);
    i.offset = c.offset;
    i.body_offset = c.offset - row.body_offset;
    i.length = c.length;
    i.token_count = c.token_count;
    i.text = std::move(c.text);
    out.push_back(std::move(i));
  }
  return out;
}

Document EngineImpl::edit_document(const std::string& name, const std::string& id,
                                   const std::string& markdown) {
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  const Kb kb = resolve(name);
  const chunk::Chunking chunking = vectors_->write_chunking(kb.ref, kb.config);
  auto row = doc_row(kb, id);
  std::string body = convert::clean_markdown(markdown);
  auto out = ingest::rewrite_document(write_context(kb.ref, chunking), row, body, nullptr,
                                      "document.edit");
  return with_vectors(to_document(out, layout_), kb, out);
}

Document EngineImpl::reconvert_document(const std::string& name, const std::string& id) {
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  const Kb kb = resolve(name);
  const chunk::Chunking chunking = vectors_->write_chunking(kb.ref, kb.config);
  auto row = doc_row(kb, id);
  std::string raw = ingest::read_whole_file(layout_.raw_path(name, id, row.raw_ext));
  auto conv = convert::Registry::builtin().convert({raw, row.filename, row.raw_ext});
  row.converter = conv.converter;
  if (!conv.title.empty()) row.title = conv.title;
  auto out = ingest::rewrite_document(write_context(kb.ref, chunking), row, conv.markdown, nullptr,
                                      "document.reconvert");
  return with_vectors(to_document(out, layout_), kb, out);
}

void EngineImpl::delete_document(const std::string& name, const std::string& id) {
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  const Kb kb = resolve(name);
  auto row = doc_row(kb, id);
  cat_->documents().remove(kb.ref, id, audit("document.delete", name, id));
  // Then its coordinates (orphans, collected by the next sweep, if we die here).
  vectors_->delete_document(kb.ref, kb.config, id);
  ingest::remove_file_quietly(layout_.markdown_path(name, id));
  ingest::remove_file_quietly(layout_.raw_path(name, id, row.raw_ext));
}

std::vector<std::string> EngineImpl::delete_where(const std::string& name,
                                                  const std::string& filter_json) {
  core::Filter f = core::parse_filter_text(filter_json);
  catalog::WriterLock lock(layout_.data_dir, opts_.lock_timeout_ms);
  const Kb kb = resolve(name);
  std::unordered_map<std::string, std::string> ext;
  for (const auto& d : cat_->documents().list(kb.ref, "", 1 << 30, f)) ext[d.id] = d.raw_ext;
  auto ids =
      cat_->documents().remove_where(kb.ref, f, audit("document.delete_where", name, filter_json));
  for (const auto& id : ids) {
    vectors_->delete_document(kb.ref, kb.config, id);
    ingest::remove_file_quietly(layout_.markdown_path(name, id));
    ingest::remove_file_quietly(layout_.raw_path(name, id, ext[id]));
  }
  return ids;
}

}  // namespace quarry::engine
