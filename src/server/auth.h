// Who is calling and what they may do (SPEC §10). Scopes are ordered: read < write (anything
// that spends: ingest, edits, re-embedding) < admin (knowledge-base settings, tokens). A token
// may be limited to some knowledge bases. Permission is decided from the principal and the
// KB *name* alone, before any lookup, so a caller without access gets the same 403 whether or
// not the KB exists.
#pragma once

#include <string>
#include <vector>

#include "quarry/engine.h"

namespace quarry::server {

enum class Scope { read = 0, write = 1, admin = 2 };

struct Principal {
  std::string actor;  // "token:<id>" or "local"
  Scope scope = Scope::read;
  std::vector<std::string> kbs;  // empty: every KB
};

const char* scope_name(Scope s);
Scope scope_from_name(const std::string& s);  // throws invalid_argument

// Throws Error(forbidden) unless `p` has at least `need` and (when `kb` is given) may reach it.
void require(const Principal& p, Scope need, const std::string& kb = "");
bool may_reach(const Principal& p, const std::string& kb);

// Authenticates an `Authorization` header value ("Bearer qry_..."). Without a header the
// caller is the local admin when `allow_anonymous` (loopback without --require-token), else
// Error(unauthorized). A header that is present is always checked.
Principal authenticate(Engine& engine, const std::string& authorization, bool allow_anonymous);

}  // namespace quarry::server
