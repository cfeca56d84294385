// The REST handlers, one per operation of routes.h, free of any HTTP library: the server
// turns an HTTP request into an ApiRequest (authenticated, permission already checked against
// the route's scope and KB) and an ApiReply back into a response.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "quarry/indexer.h"
#include "quarry/pump.h"
#include "server/auth.h"
#include "server/engine_pool.h"

namespace quarry::server {

struct UploadedFile {
  std::string field;     // form field name
  std::string filename;  // as the client named it
  std::string content;
};

struct ApiRequest {
  std::map<std::string, std::string> path;  // {kb}, {id}
  std::multimap<std::string, std::string> query;
  std::string body;
  std::string content_type;
  std::vector<UploadedFile> files;            // multipart/form-data file parts
  std::map<std::string, std::string> fields;  // multipart/form-data text parts
  Principal who;
  // The audit log's surface: "ui" for a request the web page sent (it marks each with
  // `X-Quarry-Client: ui`), else "rest".
  std::string surface = "rest";
};

struct ApiReply {
  int status = 200;
  std::string content_type = "application/json";
  std::string body;
};

struct ServerState {
  EnginePool& engines;
  Indexer* indexer = nullptr;  // null when the server runs without one
  std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
  std::string openapi_json;
  // Prometheus text of the HTTP counters (the server's), appended to /metrics.
  std::function<std::string()> http_metrics;
  // The embedding pump (SPEC §8): providers shared with the scheduler, which runs what
  // triggers queue (null when the server runs without it).
  std::shared_ptr<PumpProviders> pump_providers;
  PumpScheduler* pump_scheduler = nullptr;
};

using RestHandler = ApiReply (*)(ServerState&, const ApiRequest&);

// Handlers by operation id; every row of rest_routes() has one. Errors are thrown as
// quarry::Error and rendered by the caller.
const std::map<std::string, RestHandler>& rest_handlers();
// The pump's handlers (rest_pump.cpp), merged into rest_handlers().
const std::map<std::string, RestHandler>& pump_handlers();

}  // namespace quarry::server
