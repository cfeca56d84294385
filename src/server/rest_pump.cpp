// REST handlers of the embedding pump (SPEC §8): the status listing, a manual run, query-time
// embedding and events. Use cases belong to the server, not to a knowledge base, so a token
// limited to some KBs may not use them; like every permission, that is decided before the use
// case is looked up, so names cannot be probed.
#include <memory>
#include <string>

#include "catalog/catalog.h"
#include "core/layout.h"
#include "core/secret_store.h"
#include "pump/pump.h"
#include "pump/pump_json.h"
#include "pump/scheduler.h"
#include "server/rest_helpers.h"

namespace quarry::server {
namespace {
using nlohmann::json;

void require_pump_access(const ApiRequest& r, Scope need) {
  require(r.who, need);
  if (!r.who.kbs.empty())
    throw Error(Code::forbidden,
                "pump use cases belong to the whole server: use a token not limited to KBs");
}

// A Pump on its own catalog connection (one per request: handlers run on many threads).
struct PumpHandle {
  std::unique_ptr<catalog::Catalog> cat;
  std::unique_ptr<pump::Pump> pump;
};

PumpHandle open_pump(ServerState& s) {
  const std::string dir = s.engines.data_dir();
  PumpHandle h;
  h.cat = catalog::Catalog::open(core::Layout{dir}.catalog_path());
  h.pump = std::make_unique<pump::Pump>(dir, *h.cat, core::secret_lookup(dir), s.pump_providers);
  return h;
}

void poke(ServerState& s) {
  if (s.pump_scheduler) s.pump_scheduler->poke();
}

ApiReply list_pump_use_cases(ServerState& s, const ApiRequest& r) {
  require_pump_access(r, Scope::read);
  auto h = open_pump(s);
  json items = json::array();
  for (const auto& st : h.pump->list()) items.push_back(pump::to_json(st));
  return reply({{"use_cases", items},
                {"spend", pump::to_json(h.pump->spend())},
                {"scheduler", s.pump_scheduler != nullptr}});
}

ApiReply run_pump_use_case(ServerState& s, const ApiRequest& r) {
  require_pump_access(r, Scope::write);
  body_object(r, {}, /*may_be_empty=*/true);
  auto h = open_pump(s);
  auto res = h.pump->run(r.path.at("use_case"));
  poke(s);  // not drained, or a trigger queued while it ran: the scheduler continues
  return reply(pump::to_json(res), res.status == "already_running" ? 202 : 200);
}

ApiReply embed_pump_text(ServerState& s, const ApiRequest& r) {
  require_pump_access(r, Scope::write);
  json b = body_object(r, {"text"});
  const std::string text = str_field(b, "text", true);
  auto h = open_pump(s);
  auto e = h.pump->embed(r.path.at("use_case"), text);
  return reply({{"embedding", e.embedding}, {"revision", e.revision}});
}

ApiReply post_event(ServerState& s, const ApiRequest& r) {
  require_pump_access(r, Scope::write);
  json b = body_object(r, {"name"});
  const std::string name = str_field(b, "name", true);
  auto h = open_pump(s);
  auto names = h.pump->event(name);
  poke(s);
  return reply({{"event", name}, {"triggered", names}}, 202);
}

}  // namespace

const std::map<std::string, RestHandler>& pump_handlers() {
  static const std::map<std::string, RestHandler> handlers = {
      {"listPumpUseCases", list_pump_use_cases},
      {"runPumpUseCase", run_pump_use_case},
      {"embedPumpText", embed_pump_text},
      {"postEvent", post_event},
  };
  return handlers;
}

}  // namespace quarry::server
