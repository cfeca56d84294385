#include "server/auth.h"

#include <algorithm>

namespace quarry::server {

const char* scope_name(Scope s) {
  switch (s) {
    case Scope::read:
      return "read";
    case Scope::write:
      return "write";
    case Scope::admin:
      return "admin";
  }
  return "read";
}

Scope scope_from_name(const std::string& s) {
  if (s == "read") return Scope::read;
  if (s == "write") return Scope::write;
  if (s == "admin") return Scope::admin;
  throw Error(Code::invalid_argument, "scope must be read, write or admin", {{"field", "scope"}});
}

bool may_reach(const Principal& p, const std::string& kb) {
  return p.kbs.empty() || std::find(p.kbs.begin(), p.kbs.end(), kb) != p.kbs.end();
}

void require(const Principal& p, Scope need, const std::string& kb) {
  if (static_cast<int>(p.scope) < static_cast<int>(need))
    throw Error(Code::forbidden,
                std::string("this needs a token with scope ") + scope_name(need) + "; yours has " +
                    scope_name(p.scope) + " (create one with `quarry token create --scope " +
                    scope_name(need) + "`)",
                {{"required_scope", scope_name(need)}});
  if (!kb.empty() && !may_reach(p, kb))
    throw Error(Code::forbidden, "this token may not reach knowledge base '" + kb + "'",
                {{"kb", kb}});
}

Principal authenticate(Engine& engine, const std::string& authorization, bool allow_anonymous) {
  if (authorization.empty()) {
    if (allow_anonymous) return Principal{"local", Scope::admin, {}};
    throw Error(Code::unauthorized,
                "a bearer token is required: send `Authorization: Bearer qry_...` (create one "
                "with `quarry token create --scope read`)");
  }
  static const std::string kBearer = "Bearer ";
  if (authorization.size() <= kBearer.size() ||
      !std::equal(kBearer.begin(), kBearer.end(), authorization.begin(),
                  [](char a, char b) { return std::tolower(a) == std::tolower(b); }))
    throw Error(Code::unauthorized,
                "the Authorization header must be `Bearer <token>` (create a token with "
                "`quarry token create`)");
  auto info = engine.authenticate(authorization.substr(kBearer.size()));
  if (!info)
    throw Error(Code::unauthorized,
                "unknown or revoked token (list valid ones with `quarry token list`)");
  return Principal{"token:" + info->id, scope_from_name(info->scope), info->kbs};
}

}  // namespace quarry::server
