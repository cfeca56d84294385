#include "ingest/ingest.h"

#include <nlohmann/json.hpp>

#include "core/kb_config.h"
#include "core/util.h"
#include "quarry/error.h"

namespace quarry::ingest {
using nlohmann::json;

namespace {

std::string lower_extension(const std::string& filename) {
  auto slash = filename.rfind('/');
  std::string base = slash == std::string::npos ? filename : filename.substr(slash + 1);
  auto dot = base.rfind('.');
  if (dot == std::string::npos || dot == 0) return "";
  std::string ext = base.substr(dot + 1);
  for (auto& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

std::string first_heading(std::string_view md) {
  std::size_t pos = 0;
  while (pos < md.size()) {
    auto nl = md.find('\n', pos);
    std::string_view line =
        md.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    if (line.size() > 2 && line[0] == '#') {
      auto start = line.find_first_not_of('#');
      if (start != std::string_view::npos && line[start] == ' ') {
        std::string_view t = line.substr(start + 1);
        while (!t.empty() && t.back() == ' ') t.remove_suffix(1);
        return std::string(t);
      }
    }
    if (nl == std::string_view::npos) break;
    pos = nl + 1;
  }
  return "";
}

std::string scalar_text(const json& v) {
  if (v.is_string()) return v.get<std::string>();
  return v.dump();
}

// Builds the file text and chunk rows, stages the files, commits the catalog, then renames.
// The chunker's chunks as catalog rows, offsets moved past the front matter.
std::vector<catalog::ChunkRow> to_rows(std::vector<chunk::Chunk> chunks, std::size_t front) {
  std::vector<catalog::ChunkRow> rows;
  rows.reserve(chunks.size());
  for (auto& c : chunks) {
    catalog::ChunkRow r;
    r.index = c.index;
    r.chunk_id = std::move(c.chunk_id);
    r.parent_chunk = std::move(c.parent_chunk);
    r.heading_path = std::move(c.heading_path);
    r.offset = static_cast<std::int64_t>(front + c.offset);
    r.length = static_cast<std::int64_t>(c.length);
    r.token_count = c.token_count;
    r.text = std::move(c.text);
    rows.push_back(std::move(r));
  }
  return rows;
}

void write_document(const WriteContext& ctx, catalog::DocumentRow& row, const std::string& body,
                    std::vector<chunk::Chunk> chunks, const std::string* raw,
                    const std::string& action) {
  convert::FrontMatter fm{
      row.id,   row.filename, row.source_sha256, row.converter, core::iso8601_utc(row.updated_at),
      row.title};
  const std::string front = convert::render_front_matter(fm);
  const std::string file = front + body;

  std::vector<catalog::ChunkRow> rows = to_rows(std::move(chunks), front.size());
  row.content_sha256 = core::sha256_hex(body);
  row.markdown_bytes = static_cast<std::int64_t>(file.size());
  row.body_offset = static_cast<std::int64_t>(front.size());
  row.chunk_count = static_cast<std::int64_t>(rows.size());

  const std::string md_path = ctx.layout.markdown_path(row.kb, row.id);
  const std::string raw_path = ctx.layout.raw_path(row.kb, row.id, row.raw_ext);
  std::string staged_md = stage_file(ctx.layout, md_path, file);
  std::string staged_raw;
  try {
    if (raw) staged_raw = stage_file(ctx.layout, raw_path, *raw);
    catalog::AuditEntry a = ctx.audit;
    a.action = action;
    a.kb = row.kb;
    a.target = row.id;
    a.details_json = json{{"filename", row.filename}, {"chunks", rows.size()}}.dump();
    ctx.catalog.documents().put(ctx.kb, row, rows, a);
  } catch (...) {
    remove_file_quietly(staged_md);
    if (!staged_raw.empty()) remove_file_quietly(staged_raw);
    throw;
  }
  commit_staged(staged_md, md_path);
  if (!staged_raw.empty()) commit_staged(staged_raw, raw_path);
}

}  // namespace

void check_upload_size(const KbConfig& config, const std::string& kb, const std::string& name,
                       std::int64_t bytes) {
  if (bytes > config.limits.max_upload_bytes)
    throw Error(Code::payload_too_large,
                name + " is " + std::to_string(bytes) + " bytes; the limit is " +
                    std::to_string(config.limits.max_upload_bytes) +
                    " (limits.max_upload_bytes): split the file, or raise the limit with "
                    "`quarry kb set " +
                    kb + " limits.max_upload_bytes=" + std::to_string(bytes) + "`",
                {{"limit", std::to_string(config.limits.max_upload_bytes)}});
}

std::string prepare_metadata(const KbConfig& config, const std::string& metadata_json,
                             catalog::DocumentRow& row) {
  json md = json::object();
  if (!metadata_json.empty()) {
    md = json::parse(metadata_json, nullptr, false);
    if (md.is_discarded() || !md.is_object())
      throw Error(Code::invalid_argument, "metadata must be a JSON object",
                  {{"field", "metadata"}});
  }
  row.subject_key.reset();
  row.subject_value.reset();
  const auto& keys = config.subjects.keys;
  if (!keys.empty()) {
    std::vector<std::string> present;
    for (const auto& k : keys)
      if (md.contains(k) && !md[k].is_null()) present.push_back(k);
    auto list = json(keys).dump();
    if (present.size() != 1)
      throw Error(Code::invalid_argument,
                  "document '" + row.filename + "' must carry exactly one subject key of " + list +
                      " in its metadata (found " + std::to_string(present.size()) +
                      "); pass e.g. --metadata '{\"" + keys.front() + "\": \"...\"}'",
                  {{"field", "metadata"}});
    const json& v = md[present.front()];
    if (!v.is_string() && !v.is_number_integer())
      throw Error(Code::invalid_argument,
                  "subject key '" + present.front() + "' must be a string or an integer",
                  {{"field", "metadata." + present.front()}});
    row.subject_key = present.front();
    row.subject_value = scalar_text(v);
  }
  return md.dump();
}

IngestItem ingest_document(const WriteContext& ctx, const KbConfig& config,
                           const std::string& filename, const std::string& bytes,
                           const IngestOptions& opts, std::int64_t* batch_chunks) {
  const std::string& kb = ctx.kb.name;
  IngestItem item;
  item.path = filename;
  check_upload_size(config, kb, filename, static_cast<std::int64_t>(bytes.size()));
  const std::string source_sha = core::sha256_hex(bytes);

  catalog::DocumentRow row;
  row.kb = kb;
  row.filename = filename;
  std::string metadata = prepare_metadata(config, opts.metadata_json, row);

  auto existing = ctx.catalog.documents().find_by_filename(ctx.kb, filename);
  if (existing) {
    if (existing->source_sha256 == source_sha) {
      item.status = "unchanged";
      item.doc_id = existing->id;
      item.chunks = existing->chunk_count;
      return item;
    }
    if (!opts.replace)
      throw Error(Code::conflict,
                  "'" + filename + "' already exists as document " + existing->id +
                      " with different content; pass --replace to update it in place",
                  {{"doc_id", existing->id}});
  }

  const std::string ext = lower_extension(filename);
  convert::ConvertInput in{bytes, filename, ext};
  convert::ConvertResult conv = ctx.converters.convert(in);

  auto now = core::now_ms();
  row.id = existing ? existing->id : core::new_ulid();
  row.created_at = existing ? existing->created_at : now;
  row.updated_at = now;
  row.title = !conv.title.empty() ? conv.title : first_heading(conv.markdown);
  if (row.title.empty()) row.title = filename.substr(filename.rfind('/') + 1);
  row.source_sha256 = source_sha;
  row.metadata_json = metadata;
  row.converter = conv.converter;
  row.raw_ext = ext;
  row.source_bytes = static_cast<std::int64_t>(bytes.size());
  row.chunking = ctx.chunking.revision;

  const std::string old_raw = existing && existing->raw_ext != ext
                                  ? ctx.layout.raw_path(kb, existing->id, existing->raw_ext)
                                  : "";
  // Chunk before writing anything so every limit is checked first.
  auto chunks = chunk::chunk_markdown(conv.markdown, ctx.chunking.options, *ctx.chunking.tokenizer);
  if (batch_chunks) {
    auto n = static_cast<std::int64_t>(chunks.size());
    if (*batch_chunks + n > config.limits.max_chunks_per_call)
      throw Error(Code::too_many_chunks,
                  "this ingest call would exceed " +
                      std::to_string(config.limits.max_chunks_per_call) +
                      " chunks (limits.max_chunks_per_call); ingest the rest in another call");
    *batch_chunks += n;
  }
  write_document(ctx, row, conv.markdown, std::move(chunks), &bytes,
                 existing ? "document.update" : "document.add");
  if (!old_raw.empty()) remove_file_quietly(old_raw);

  item.status = existing ? "updated" : "added";
  item.doc_id = row.id;
  item.chunks = row.chunk_count;
  item.warnings = std::move(conv.warnings);
  return item;
}

std::vector<catalog::ChunkRow> rechunk_document(const Layout& layout,
                                                const chunk::Chunking& chunking,
                                                const catalog::DocumentRow& row) {
  std::string file = read_whole_file(layout.markdown_path(row.kb, row.id));
  const auto at = std::min<std::size_t>(static_cast<std::size_t>(row.body_offset), file.size());
  return to_rows(chunk::chunk_markdown(file.substr(at), chunking.options, *chunking.tokenizer), at);
}

catalog::DocumentRow rewrite_document(const WriteContext& ctx, catalog::DocumentRow row,
                                      const std::string& markdown_body, const std::string* raw,
                                      const std::string& action) {
  row.updated_at = core::now_ms();
  if (raw) row.source_sha256 = core::sha256_hex(*raw);
  std::string t = first_heading(markdown_body);
  if (!t.empty()) row.title = t;
  row.chunking = ctx.chunking.revision;
  write_document(
      ctx, row, markdown_body,
      chunk::chunk_markdown(markdown_body, ctx.chunking.options, *ctx.chunking.tokenizer), raw,
      action);
  return row;
}

}  // namespace quarry::ingest
