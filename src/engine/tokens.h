// Server tokens (SPEC §10) on top of the catalog's rows: validation, minting (the secret is
// 256 random bits, shown once, stored as a SHA-256) and lookup by secret. The Engine holds the
// writer lock around the writes.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "catalog/token_table.h"
#include "quarry/types.h"

namespace quarry::engine {

NewToken mint_token(catalog::TokenTable& tokens, const std::string& name, const std::string& scope,
                    const std::vector<std::string>& kbs, catalog::AuditEntry audit);
TokenInfo token_info(const catalog::TokenRow& row);
// The valid token whose secret this is.
std::optional<TokenInfo> find_token(const catalog::TokenTable& tokens, const std::string& secret);

}  // namespace quarry::engine
