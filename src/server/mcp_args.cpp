// Reading a tool's arguments: one place that turns a wrong type, a value out of range or an
// unknown key into Error(invalid_argument) with the field named, so every tool reports bad
// input the same way and the agent can fix its call.
#include <cmath>

#include "server/mcp_tools.h"

namespace quarry::server::mcp {

namespace {

Error bad(const char* name, const std::string& what) {
  return Error(Code::invalid_argument, std::string("argument '") + name + "' " + what,
               {{"field", name}});
}

}  // namespace

Args::Args(const json& arguments, const json& input_schema) : args_(arguments) {
  if (!args_.is_object()) throw Error(Code::invalid_argument, "arguments must be a JSON object");
  const json& props = input_schema.value("properties", json::object());
  for (const auto& [key, value] : args_.items()) {
    if (props.contains(key)) continue;
    std::string known;
    for (const auto& [k, v] : props.items()) known += (known.empty() ? "" : ", ") + k;
    throw Error(Code::invalid_argument,
                "unknown argument '" + key +
                    "' (this tool takes: " + (known.empty() ? "no arguments" : known) + ")",
                {{"field", key}});
  }
}

const json* Args::get(const char* name) const {
  auto it = args_.find(name);
  if (it == args_.end() || it->is_null()) return nullptr;
  return &*it;
}

bool Args::has(const char* name) const {
  return get(name) != nullptr;
}

std::optional<std::string> Args::string(const char* name) const {
  const json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw bad(name, "must be a string");
  return v->get<std::string>();
}

std::string Args::required_string(const char* name) const {
  auto v = string(name);
  if (!v) throw bad(name, "is required");
  if (v->empty()) throw bad(name, "must not be empty");
  return *v;
}

std::optional<std::int64_t> Args::integer(const char* name, std::int64_t min,
                                          std::int64_t max) const {
  const json* v = get(name);
  if (!v) return std::nullopt;
  // JSON has one number type: 5.0 is an integer, 5.5 is not.
  bool whole = v->is_number_integer() ||
               (v->is_number_float() && std::trunc(v->get<double>()) == v->get<double>() &&
                std::abs(v->get<double>()) < 9e15);
  if (!whole) throw bad(name, "must be an integer");
  auto n =
      v->is_number_float() ? static_cast<std::int64_t>(v->get<double>()) : v->get<std::int64_t>();
  if (n < min || n > max)
    throw bad(name, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  return n;
}

std::optional<double> Args::number(const char* name, double min, double max) const {
  const json* v = get(name);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw bad(name, "must be a number");
  double d = v->get<double>();
  if (!(d >= min && d <= max))
    throw bad(name, "must be between " + std::to_string(min) + " and " + std::to_string(max));
  return d;
}

bool Args::flag(const char* name, bool fallback) const {
  const json* v = get(name);
  if (!v) return fallback;
  if (!v->is_boolean()) throw bad(name, "must be true or false");
  return v->get<bool>();
}

std::string Args::object_text(const char* name) const {
  const json* v = get(name);
  if (!v) return "";
  if (!v->is_object()) throw bad(name, "must be a JSON object");
  return v->dump();
}

std::string Args::kb(const McpOptions& opts) const {
  auto given = string("kb");
  if (!opts.kb.empty()) {
    if (given && !given->empty() && *given != opts.kb)
      throw Error(Code::forbidden,
                  "this MCP server serves only knowledge base '" + opts.kb +
                      "' (it was started with --kb); leave out the kb argument",
                  {{"kb", *given}});
    return opts.kb;
  }
  if (!given || given->empty())
    throw Error(Code::invalid_argument,
                "argument 'kb' is required: the knowledge base to use (list_knowledge_bases "
                "names them)",
                {{"field", "kb"}});
  return *given;
}

}  // namespace quarry::server::mcp
