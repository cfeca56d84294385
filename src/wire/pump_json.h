// The pump's results as JSON (quarry/pump.h): one shape for the CLI's --json and the REST API
// (docs/openapi.json: PumpUseCase, PumpRun, PumpSpend).
#pragma once

#include <nlohmann/json.hpp>

#include "quarry/pump.h"

namespace quarry::wire {

nlohmann::json to_json(const PumpUseCaseStatus& s);
nlohmann::json to_json(const PumpRunResult& r);
nlohmann::json to_json(const PumpSpend& s);
nlohmann::json to_json(const PumpDeployReport& r);
nlohmann::json to_json(const PumpEmbedding& e);

}  // namespace quarry::wire
