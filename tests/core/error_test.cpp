// Error codes are a contract: the same snake_case names in CLI, REST and MCP output, and CLI
// exit statuses that are never renumbered (docs/cli.md).
#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>

#include "quarry/error.h"

namespace quarry {
namespace {

const std::map<Code, std::pair<std::string, int>>& expected() {
  static const std::map<Code, std::pair<std::string, int>> m = {
      {Code::ok, {"ok", 0}},
      {Code::invalid_argument, {"invalid_argument", 2}},
      {Code::not_found, {"not_found", 3}},
      {Code::already_exists, {"already_exists", 4}},
      {Code::conflict, {"conflict", 5}},
      {Code::unsupported_format, {"unsupported_format", 6}},
      {Code::engine_unavailable, {"engine_unavailable", 7}},
      {Code::corrupt_input, {"corrupt_input", 8}},
      {Code::payload_too_large, {"payload_too_large", 9}},
      {Code::no_content, {"no_content", 10}},
      {Code::too_many_chunks, {"too_many_chunks", 11}},
      {Code::mode_unavailable, {"mode_unavailable", 12}},
      {Code::dimension_mismatch, {"dimension_mismatch", 13}},
      {Code::busy, {"busy", 14}},
      {Code::io_error, {"io_error", 15}},
      {Code::unauthorized, {"unauthorized", 16}},
      {Code::forbidden, {"forbidden", 17}},
      {Code::rate_limited, {"rate_limited", 18}},
      {Code::upstream_error, {"upstream_error", 19}},
      {Code::timeout, {"timeout", 21}},
      {Code::blocked_address, {"blocked_address", 22}},
      {Code::content_too_large, {"content_too_large", 23}},
      {Code::input_rejected, {"input_rejected", 24}},
      {Code::cancelled, {"cancelled", 130}},
      {Code::contract_violation, {"contract_violation", 25}},
      {Code::budget_exhausted, {"budget_exhausted", 26}},
      {Code::internal, {"internal", 1}},
  };
  return m;
}

TEST(ErrorCodes, NamesAndExitStatusesAreStable) {
  for (const auto& [code, want] : expected()) {
    EXPECT_EQ(code_name(code), want.first);
    EXPECT_EQ(exit_status(code), want.second) << want.first;
  }
}

TEST(ErrorCodes, EveryCodeHasAUniqueNameAndExitStatus) {
  std::set<std::string> names;
  std::set<int> statuses;
  int n = 0;
  for (int i = static_cast<int>(Code::ok); i <= static_cast<int>(Code::internal); ++i, ++n) {
    auto code = static_cast<Code>(i);
    names.insert(code_name(code));
    statuses.insert(exit_status(code));
    EXPECT_EQ(code_from_name(code_name(code)), code) << code_name(code);
  }
  EXPECT_EQ(static_cast<int>(names.size()), n);
  EXPECT_EQ(static_cast<int>(statuses.size()), n);
  EXPECT_EQ(static_cast<std::size_t>(n), expected().size());
  // 20 is the CLI's "batch finished with failures"; no code may take it.
  EXPECT_EQ(statuses.count(20), 0u);
}

TEST(ErrorCodes, UnknownNameIsInternal) {
  EXPECT_EQ(code_from_name("no_such_code"), Code::internal);
  EXPECT_EQ(code_from_name(""), Code::internal);
  EXPECT_EQ(code_from_name("NOT_FOUND"), Code::internal);
}

TEST(ErrorType, CarriesCodeMessageAndDetails) {
  Error e(Code::conflict, "already there", {{"doc_id", "01ABC"}});
  EXPECT_EQ(e.code(), Code::conflict);
  EXPECT_STREQ(e.what(), "already there");
  EXPECT_EQ(e.details().at("doc_id"), "01ABC");
  const std::exception& base = e;
  EXPECT_STREQ(base.what(), "already there");
}

}  // namespace
}  // namespace quarry
