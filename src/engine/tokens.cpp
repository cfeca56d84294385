#include "engine/tokens.h"

#include <nlohmann/json.hpp>

#include "core/kb_config.h"
#include "core/util.h"
#include "quarry/error.h"

namespace quarry::engine {
using nlohmann::json;

NewToken mint_token(catalog::TokenTable& tokens, const std::string& name, const std::string& scope,
                    const std::vector<std::string>& kbs, catalog::AuditEntry audit) {
  if (scope != "read" && scope != "write" && scope != "admin")
    throw Error(Code::invalid_argument, "scope must be read, write or admin", {{"field", "scope"}});
  if (name.empty() || name.size() > 100)
    throw Error(Code::invalid_argument, "token name must be 1-100 characters", {{"field", "name"}});
  for (const auto& kb : kbs) core::validate_kb_name(kb);
  NewToken t;
  t.secret = "qry_" + core::random_hex(32);
  catalog::TokenRow row;
  row.id = core::new_ulid();
  row.name = name;
  row.scope = scope;
  row.kbs_json = json(kbs).dump();
  row.created_at = core::now_ms();
  audit.action = "token.create";
  audit.target = row.id;
  audit.details_json = json{{"name", name}, {"scope", scope}, {"kbs", kbs}}.dump();
  tokens.create(row, core::sha256_hex(t.secret), audit);
  t.token = token_info(row);
  return t;
}

TokenInfo token_info(const catalog::TokenRow& r) {
  TokenInfo t;
  t.id = r.id;
  t.name = r.name;
  t.scope = r.scope;
  t.kbs = json::parse(r.kbs_json).get<std::vector<std::string>>();
  t.created_at = core::iso8601_utc(r.created_at);
  if (r.revoked_at) t.revoked_at = core::iso8601_utc(r.revoked_at);
  return t;
}

std::optional<TokenInfo> find_token(const catalog::TokenTable& tokens, const std::string& secret) {
  if (secret.rfind("qry_", 0) != 0) return std::nullopt;
  auto row = tokens.find_by_hash(core::sha256_hex(secret));
  if (!row) return std::nullopt;
  return token_info(*row);
}

}  // namespace quarry::engine
