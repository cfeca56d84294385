#include "server/routes.h"

namespace quarry::server {

const std::vector<RouteSpec>& rest_routes() {
  static const std::vector<RouteSpec> routes = {
      {"GET", "/health", "getHealth", false, Scope::read},
      {"GET", "/openapi.json", "getOpenApi", false, Scope::read},
      {"GET", "/status", "getStatus", true, Scope::read},
      {"GET", "/me", "getMe", true, Scope::read},
      {"GET", "/plugins", "listPlugins", true, Scope::read},
      {"GET", "/metrics", "getMetrics", true, Scope::read},
      {"GET", "/activity", "listActivity", true, Scope::admin},
      {"GET", "/kbs", "listKbs", true, Scope::read},
      {"POST", "/kbs", "createKb", true, Scope::admin},
      {"GET", "/kbs/{kb}", "getKb", true, Scope::read},
      {"PATCH", "/kbs/{kb}", "updateKb", true, Scope::admin},
      {"DELETE", "/kbs/{kb}", "deleteKb", true, Scope::admin},
      {"GET", "/kbs/{kb}/status", "getKbStatus", true, Scope::read},
      {"GET", "/kbs/{kb}/documents", "listDocuments", true, Scope::read},
      {"POST", "/kbs/{kb}/documents", "addDocuments", true, Scope::write},
      {"POST", "/kbs/{kb}/documents/delete", "deleteDocumentsWhere", true, Scope::write},
      {"GET", "/kbs/{kb}/documents/{id}", "getDocument", true, Scope::read},
      {"GET", "/kbs/{kb}/documents/{id}/markdown", "getDocumentMarkdown", true, Scope::read},
      {"GET", "/kbs/{kb}/documents/{id}/chunks", "listDocumentChunks", true, Scope::read},
      {"PUT", "/kbs/{kb}/documents/{id}", "editDocument", true, Scope::write},
      {"DELETE", "/kbs/{kb}/documents/{id}", "deleteDocument", true, Scope::write},
      {"POST", "/kbs/{kb}/documents/{id}/reconvert", "reconvertDocument", true, Scope::write},
      {"POST", "/kbs/{kb}/search", "search", true, Scope::read},
      {"POST", "/kbs/{kb}/grep", "grep", true, Scope::read},
      {"GET", "/kbs/{kb}/reindex", "getReindex", true, Scope::read},
      {"POST", "/kbs/{kb}/reindex", "startReindex", true, Scope::write},
      {"GET", "/tokens", "listTokens", true, Scope::admin},
      {"POST", "/tokens", "createToken", true, Scope::admin},
      {"DELETE", "/tokens/{id}", "revokeToken", true, Scope::admin},
      {"GET", "/secrets", "listSecrets", true, Scope::admin},
      {"PUT", "/secrets/{name}", "putSecret", true, Scope::admin},
      {"DELETE", "/secrets/{name}", "deleteSecret", true, Scope::admin},
      {"GET", "/pump/use-cases", "listPumpUseCases", true, Scope::read},
      {"POST", "/pump/use-cases/{use_case}/_run", "runPumpUseCase", true, Scope::write},
      {"POST", "/pump/use-cases/{use_case}/_embed", "embedPumpText", true, Scope::write},
      {"POST", "/events", "postEvent", true, Scope::write},
  };
  return routes;
}

}  // namespace quarry::server
