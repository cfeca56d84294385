// REST handlers of the embedding pump (SPEC §8): the status listing, a manual run, query-time
// embedding and events. Use cases belong to the server, not to a knowledge base, so a token
// limited to some KBs may not use them; like every permission, that is decided before the use
// case is looked up, so names cannot be probed.
#include <memory>
#include <string>

#include "quarry/pump.h"
#include "server/rest_helpers.h"
#include "wire/fields.h"
#include "wire/pump_json.h"

namespace quarry::server {
namespace {
using nlohmann::json;

void require_pump_access(const ApiRequest& r, Scope need) {
  require(r.who, need);
  if (!r.who.kbs.empty())
    throw Error(Code::forbidden,
                "pump use cases belong to the whole server: use a token not limited to KBs");
}

// A Pump on its own catalog connection (one per request: handlers run on many threads), sharing
// the server's loaded embedders.
std::unique_ptr<Pump> open_pump(ServerState& s, const ApiRequest& r) {
  PumpOptions o;
  o.data_dir = s.engines.data_dir();
  o.actor = r.who.actor;
  o.surface = "rest";
  o.providers = s.pump_providers;
  return Pump::open(o);
}

void poke(ServerState& s) {
  if (s.pump_scheduler) s.pump_scheduler->poke();
}

ApiReply list_pump_use_cases(ServerState& s, const ApiRequest& r) {
  require_pump_access(r, Scope::read);
  auto p = open_pump(s, r);
  json items = json::array();
  for (const auto& st : p->list()) items.push_back(wire::to_json(st));
  return reply({{"use_cases", items},
                {"spend", wire::to_json(p->spend())},
                {"scheduler", s.pump_scheduler != nullptr}});
}

ApiReply run_pump_use_case(ServerState& s, const ApiRequest& r) {
  require_pump_access(r, Scope::write);
  wire::Fields(body_object(r, /*may_be_empty=*/true), {});
  auto res = open_pump(s, r)->run(r.path.at("use_case"));
  poke(s);  // not drained, or a trigger queued while it ran: the scheduler continues
  return reply(wire::to_json(res), res.status == "already_running" ? 202 : 200);
}

ApiReply embed_pump_text(ServerState& s, const ApiRequest& r) {
  require_pump_access(r, Scope::write);
  const json b = body_object(r);
  // Blank text is the pump's to refuse (SPEC §8), with its own message.
  const std::string text = wire::Fields(b, {"text"}).required_string("text", true);
  return reply(wire::to_json(open_pump(s, r)->embed(r.path.at("use_case"), text)));
}

ApiReply post_event(ServerState& s, const ApiRequest& r) {
  require_pump_access(r, Scope::write);
  const json b = body_object(r);
  const std::string name = wire::Fields(b, {"name"}).required_string("name");
  auto names = open_pump(s, r)->event(name);
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
