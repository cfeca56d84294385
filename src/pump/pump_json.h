// The pump's results as JSON: one shape for the CLI's --json and the REST API
// (docs/openapi.json, PumpUseCase / PumpRun / PumpSpend).
#pragma once

#include <nlohmann/json.hpp>

#include "pump/pump.h"

namespace quarry::pump {

nlohmann::json to_json(const UseCaseStatus& s);
nlohmann::json to_json(const RunResult& r);
nlohmann::json to_json(const Spend& s);

}  // namespace quarry::pump
