#include "quarry/error.h"

#include <array>
#include <utility>

namespace quarry {
namespace {
struct CodeInfo {
  Code code;
  const char* name;
  int exit;
};
// Exit statuses are part of the CLI contract: append, never renumber.
constexpr std::array<CodeInfo, 27> kCodes{{
    {Code::ok, "ok", 0},
    {Code::invalid_argument, "invalid_argument", 2},
    {Code::not_found, "not_found", 3},
    {Code::already_exists, "already_exists", 4},
    {Code::conflict, "conflict", 5},
    {Code::unsupported_format, "unsupported_format", 6},
    {Code::engine_unavailable, "engine_unavailable", 7},
    {Code::corrupt_input, "corrupt_input", 8},
    {Code::payload_too_large, "payload_too_large", 9},
    {Code::no_content, "no_content", 10},
    {Code::too_many_chunks, "too_many_chunks", 11},
    {Code::mode_unavailable, "mode_unavailable", 12},
    {Code::dimension_mismatch, "dimension_mismatch", 13},
    {Code::busy, "busy", 14},
    {Code::io_error, "io_error", 15},
    {Code::unauthorized, "unauthorized", 16},
    {Code::forbidden, "forbidden", 17},
    {Code::rate_limited, "rate_limited", 18},
    {Code::upstream_error, "upstream_error", 19},
    {Code::timeout, "timeout", 21},  // 20 is ingest's "some files failed"
    {Code::blocked_address, "blocked_address", 22},
    {Code::content_too_large, "content_too_large", 23},
    {Code::input_rejected, "input_rejected", 24},
    {Code::cancelled, "cancelled", 130},  // as a shell reports SIGINT
    {Code::contract_violation, "contract_violation", 25},
    {Code::budget_exhausted, "budget_exhausted", 26},
    {Code::internal, "internal", 1},
}};
}  // namespace

const char* code_name(Code code) {
  for (const auto& c : kCodes)
    if (c.code == code) return c.name;
  return "internal";
}

Code code_from_name(const std::string& name) {
  for (const auto& c : kCodes)
    if (name == c.name) return c.code;
  return Code::internal;
}

int exit_status(Code code) {
  for (const auto& c : kCodes)
    if (c.code == code) return c.exit;
  return 1;
}

}  // namespace quarry
