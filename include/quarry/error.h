// The one error type of Quarry. Every failure a user can cause carries a stable machine-readable
// code (the same string in CLI output, REST and MCP errors) and a message that says what to do.
#pragma once

#include <exception>
#include <map>
#include <string>

namespace quarry {

enum class Code {
  ok = 0,
  invalid_argument,
  not_found,
  already_exists,
  conflict,
  unsupported_format,
  engine_unavailable,
  corrupt_input,
  payload_too_large,
  no_content,
  too_many_chunks,
  mode_unavailable,
  dimension_mismatch,
  busy,
  io_error,
  unauthorized,
  forbidden,
  rate_limited,       // a remote provider/store kept answering 429 after every retry
  upstream_error,     // a remote provider/store refused the request (its message is kept)
  timeout,            // a remote call took longer than its limit
  blocked_address,    // the SSRF guard refused an outbound address (§10)
  content_too_large,  // a chunk is longer than the embedder accepts (permanent per document)
  input_rejected,     // the embedder refused this input itself (permanent per document)
  cancelled,          // the user stopped a long operation; it resumes where it stopped
  contract_violation,  // an app's pump source broke the pump contract (§8): fix the app
  budget_exhausted,    // the pump's spend budget for this month is used up (§8)
  internal,
};

// Stable snake_case name of a code ("invalid_argument", ...).
const char* code_name(Code code);
// Parses a code name; Code::internal for unknown names.
Code code_from_name(const std::string& name);
// The CLI's exit status for a code (documented in docs/cli.md; never renumbered).
int exit_status(Code code);

class Error : public std::exception {
 public:
  Error(Code code, std::string message, std::map<std::string, std::string> details = {})
      : code_(code), message_(std::move(message)), details_(std::move(details)) {}

  Code code() const noexcept { return code_; }
  const std::string& message() const noexcept { return message_; }
  const std::map<std::string, std::string>& details() const noexcept { return details_; }
  const char* what() const noexcept override { return message_.c_str(); }

 private:
  Code code_;
  std::string message_;
  std::map<std::string, std::string> details_;
};

}  // namespace quarry
