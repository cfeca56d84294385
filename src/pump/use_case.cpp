#include "pump/use_case.h"

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/kb_config.h"
#include "pump/cron.h"
#include "pump/yaml.h"
#include "quarry/error.h"

namespace quarry::pump {
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void bad(const std::string& key, const std::string& what) const {
    throw Error(Code::invalid_argument, "use case " + file_ + ": '" + key + "' " + what,
                {{"file", file_}, {"field", key}});
  }
  std::string str(const json& v, const std::string& key, bool may_be_empty = false) const {
    if (!v.is_string() || (!may_be_empty && v.get_ref<const std::string&>().empty()))
      bad(key, may_be_empty ? "expects a string" : "expects a non-empty string");
    return v.get<std::string>();
  }
  int integer(const json& v, const std::string& key, int lo, int hi) const {
    if (!v.is_number_integer() || v.get<std::int64_t>() < lo || v.get<std::int64_t>() > hi)
      bad(key, "expects an integer from " + std::to_string(lo) + " to " + std::to_string(hi));
    return v.get<int>();
  }
  void only(const json& obj, const std::string& where, const std::set<std::string>& keys) const {
    if (!obj.is_object()) bad(where.empty() ? "(file)" : where, "expects a JSON object");
    for (const auto& [k, v] : obj.items())
      if (!keys.count(k)) {
        std::string list;
        for (const auto& a : keys) list += (list.empty() ? "" : ", ") + a;
        bad(where.empty() ? k : where + "." + k, "is not a known key (known: " + list + ")");
      }
  }

 private:
  std::string file_;
};

SqlSource parse_sql(const json& j, const Reader& r, const std::string& base_dir) {
  r.only(j, "source",
         {"type", "driver", "dsn_secret", "path", "pending", "delete_document", "store_document",
          "store_chunk", "store_failure"});
  SqlSource s;
  if (!j.contains("driver")) r.bad("source.driver", "is required (postgres or sqlite)");
  s.driver = r.str(j["driver"], "source.driver");
  if (s.driver != "postgres" && s.driver != "sqlite")
    r.bad("source.driver", "'" + s.driver + "' is not one of: postgres, sqlite");
  if (s.driver == "postgres") {
    if (!j.contains("dsn_secret"))
      r.bad("source.dsn_secret", "is required for postgres (the name of a secret holding the DSN)");
    if (j.contains("path")) r.bad("source.path", "is for sqlite sources only");
    s.dsn_secret = r.str(j["dsn_secret"], "source.dsn_secret");
  } else {
    if (!j.contains("path")) r.bad("source.path", "is required for sqlite (the database file)");
    if (j.contains("dsn_secret")) r.bad("source.dsn_secret", "is for postgres sources only");
    fs::path p = r.str(j["path"], "source.path");
    // Absolute once deployed: the server that runs it has another working directory.
    if (p.is_relative() && !base_dir.empty()) p = fs::absolute(fs::path(base_dir) / p);
    s.path = p.lexically_normal().string();
  }
  auto statement = [&](const char* key, bool required) {
    if (!j.contains(key)) {
      if (required) r.bad(std::string("source.") + key, "is required");
      return std::string();
    }
    return r.str(j[key], std::string("source.") + key);
  };
  s.pending = statement("pending", true);
  s.delete_document = statement("delete_document", false);
  s.store_document = statement("store_document", false);
  s.store_chunk = statement("store_chunk", true);
  s.store_failure = statement("store_failure", false);
  return s;
}

HttpSource parse_http(const json& j, const Reader& r) {
  r.only(j, "source", {"type", "url", "api_key_secret", "allow_private"});
  HttpSource h;
  if (!j.contains("url")) r.bad("source.url", "is required (the app's webhook)");
  h.url = r.str(j["url"], "source.url");
  if (h.url.rfind("http://", 0) != 0 && h.url.rfind("https://", 0) != 0)
    r.bad("source.url", "must start with http:// or https://");
  if (h.url.find('#') != std::string::npos) r.bad("source.url", "must not have a fragment");
  if (j.contains("api_key_secret"))
    h.api_key_secret = r.str(j["api_key_secret"], "source.api_key_secret");
  if (j.contains("allow_private")) {
    if (!j["allow_private"].is_boolean()) r.bad("source.allow_private", "expects true or false");
    h.allow_private = j["allow_private"].get<bool>();
  }
  return h;
}

}  // namespace

void validate_cron(const std::string& expr, const std::string& file) {
  Cron::parse(expr, file);
}

UseCase parse_use_case(const std::string& name, const json& j, const std::string& file,
                       const std::string& base_dir) {
  Reader r(file);
  r.only(j, "",
         {"description", "chunking", "max_tokens", "overlap_tokens", "on", "cron", "batch_size",
          "timeout_ms", "revision", "source"});
  UseCase uc;
  uc.name = name;
  if (j.contains("description")) uc.description = r.str(j["description"], "description", true);
  if (j.contains("chunking")) {
    uc.chunking.profile = r.str(j["chunking"], "chunking");
    if (uc.chunking.profile != "none" && uc.chunking.profile != "prose" &&
        uc.chunking.profile != "code")
      r.bad("chunking", "'" + uc.chunking.profile + "' is not one of: none, prose, code");
  }
  const bool none = uc.chunking.profile == "none";
  if (j.contains("max_tokens")) {
    if (none) r.bad("max_tokens", "is refused under chunking 'none' (one row = one embedding)");
    uc.chunking.max_tokens = r.integer(j["max_tokens"], "max_tokens", 16, 8191);
  }
  if (j.contains("overlap_tokens")) {
    if (none) r.bad("overlap_tokens", "is refused under chunking 'none'");
    const int max = uc.chunking.effective_max_tokens();
    uc.chunking.overlap_tokens = r.integer(j["overlap_tokens"], "overlap_tokens", 0, max / 2);
  }
  if (j.contains("on")) {
    const json& on = j["on"];
    if (on.is_string()) {
      uc.on.push_back(r.str(on, "on"));
    } else if (on.is_array()) {
      for (const auto& e : on) uc.on.push_back(r.str(e, "on"));
    } else {
      r.bad("on", "expects an event name or a list of them");
    }
  }
  if (j.contains("cron")) {
    uc.cron = r.str(j["cron"], "cron");
    validate_cron(uc.cron, file);
  }
  if (j.contains("batch_size")) uc.batch_size = r.integer(j["batch_size"], "batch_size", 1, 1000);
  if (j.contains("timeout_ms"))
    uc.timeout_ms = r.integer(j["timeout_ms"], "timeout_ms", 1000, 300000);
  if (j.contains("revision")) uc.revision = r.integer(j["revision"], "revision", 0, 1 << 30);
  if (!j.contains("source")) r.bad("source", "is required (type sql)");
  const json& src = j["source"];
  if (!src.is_object() || !src.contains("type")) r.bad("source.type", "is required (sql or http)");
  uc.source_type = r.str(src["type"], "source.type");
  if (uc.source_type == "sql")
    uc.sql = parse_sql(src, r, base_dir);
  else if (uc.source_type == "http")
    uc.http = parse_http(src, r);
  else
    r.bad("source.type", "'" + uc.source_type + "' is not one of: sql, http");
  return uc;
}

json use_case_to_json(const UseCase& uc) {
  json j = {{"description", uc.description},
            {"chunking", uc.chunking.profile},
            {"on", uc.on},
            {"batch_size", uc.batch_size},
            {"timeout_ms", uc.timeout_ms},
            {"revision", uc.revision}};
  if (uc.chunking.max_tokens) j["max_tokens"] = *uc.chunking.max_tokens;
  if (uc.chunking.overlap_tokens) j["overlap_tokens"] = *uc.chunking.overlap_tokens;
  if (!uc.cron.empty()) j["cron"] = uc.cron;
  if (uc.source_type == "http") {
    json src = {{"type", "http"}, {"url", uc.http.url}, {"allow_private", uc.http.allow_private}};
    if (!uc.http.api_key_secret.empty()) src["api_key_secret"] = uc.http.api_key_secret;
    j["source"] = std::move(src);
    return j;
  }
  json src = {{"type", uc.source_type},
              {"driver", uc.sql.driver},
              {"pending", uc.sql.pending},
              {"store_chunk", uc.sql.store_chunk}};
  if (uc.sql.driver == "postgres") src["dsn_secret"] = uc.sql.dsn_secret;
  if (uc.sql.driver == "sqlite") src["path"] = uc.sql.path;
  if (!uc.sql.delete_document.empty()) src["delete_document"] = uc.sql.delete_document;
  if (!uc.sql.store_document.empty()) src["store_document"] = uc.sql.store_document;
  if (!uc.sql.store_failure.empty()) src["store_failure"] = uc.sql.store_failure;
  j["source"] = std::move(src);
  return j;
}

UseCase load_use_case_file(const std::string& path) {
  fs::path p(path);
  const std::string name = p.stem().string();
  try {
    core::validate_kb_name(name);
  } catch (const Error&) {
    throw Error(Code::invalid_argument,
                "use case file " + p.filename().string() +
                    ": its name must be 1-63 lowercase letters, digits, '-' or '_', starting with "
                    "a letter or digit; rename the file",
                {{"file", p.filename().string()}});
  }
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error(Code::not_found, "cannot read use case file " + path, {{"file", path}});
  std::stringstream ss;
  ss << in.rdbuf();
  const auto ext = p.extension().string();
  if (ext == ".yaml" || ext == ".yml")
    return parse_use_case(name, parse_yaml(ss.str(), p.filename().string()), p.filename().string(),
                          p.parent_path().string());
  json j = json::parse(ss.str(), nullptr, false);
  if (j.is_discarded())
    throw Error(Code::invalid_argument,
                "use case " + p.filename().string() + " is not valid JSON; fix its syntax",
                {{"file", p.filename().string()}});
  return parse_use_case(name, j, p.filename().string(), p.parent_path().string());
}

std::string config_revision(const UseCase& uc) {
  KbConfig c;
  c.chunking = uc.chunking;
  c.revision = uc.revision;
  return core::config_revision(c);
}

std::string revision(const UseCase& uc, const std::string& embedder_identity,
                     const std::string& tokenizer) {
  KbConfig c;
  c.chunking = uc.chunking;
  c.revision = uc.revision;
  return core::revision(c, embedder_identity, tokenizer);
}

}  // namespace quarry::pump
