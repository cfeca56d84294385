#include "pump/yaml.h"

#include <yaml.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <regex>

#include "quarry/error.h"

namespace quarry::pump {
using nlohmann::json;

namespace {

[[noreturn]] void bad(const std::string& file, const std::string& what, std::size_t line) {
  throw Error(Code::invalid_argument,
              "use case " + file + " (line " + std::to_string(line + 1) + "): " + what,
              {{"file", file}});
}

// A plain scalar by YAML 1.2's core schema.
json plain(const std::string& v) {
  static const std::regex integer("[-+]?[0-9]+"),
      number("[-+]?(\\.[0-9]+|[0-9]+(\\.[0-9]*)?)([eE][-+]?[0-9]+)?");
  if (v.empty() || v == "~" || v == "null" || v == "Null" || v == "NULL") return nullptr;
  if (v == "true" || v == "True" || v == "TRUE") return true;
  if (v == "false" || v == "False" || v == "FALSE") return false;
  if (std::regex_match(v, integer)) {
    errno = 0;
    long long n = std::strtoll(v.c_str(), nullptr, 10);
    if (errno == 0) return n;
  }
  if (std::regex_match(v, number)) return std::strtod(v.c_str(), nullptr);
  return v;
}

class Parser {
 public:
  Parser(const std::string& text, std::string file) : file_(std::move(file)) {
    yaml_parser_initialize(&p_);
    yaml_parser_set_input_string(&p_, reinterpret_cast<const unsigned char*>(text.data()),
                                 text.size());
  }
  ~Parser() { yaml_parser_delete(&p_); }

  json document() {
    expect(YAML_STREAM_START_EVENT);
    Event e = next();
    if (e->type == YAML_STREAM_END_EVENT) return json::object();  // an empty file
    if (e->type != YAML_DOCUMENT_START_EVENT) bad(file_, "expected a document", line(e));
    json root = value(next());
    Event end = next();
    if (end->type != YAML_DOCUMENT_END_EVENT) bad(file_, "expected one document", line(end));
    if (next()->type != YAML_STREAM_END_EVENT)
      bad(file_, "holds several documents; one use case per file", line(end));
    return root;
  }

 private:
  struct Free {
    void operator()(yaml_event_t* e) const {
      yaml_event_delete(e);
      delete e;
    }
  };
  using Event = std::unique_ptr<yaml_event_t, Free>;

  static std::size_t line(const Event& e) { return e->start_mark.line; }

  Event next() {
    auto* e = new yaml_event_t;
    if (!yaml_parser_parse(&p_, e)) {
      delete e;
      bad(file_, std::string("is not valid YAML: ") + (p_.problem ? p_.problem : "syntax error"),
          p_.problem_mark.line);
    }
    return Event(e);
  }
  void expect(yaml_event_type_t t) {
    Event e = next();
    if (e->type != t) bad(file_, "unexpected YAML structure", line(e));
  }

  json value(Event e) {
    switch (e->type) {
      case YAML_SCALAR_EVENT: {
        if (e->data.scalar.tag) bad(file_, "YAML tags are not supported in use cases", line(e));
        std::string v(reinterpret_cast<const char*>(e->data.scalar.value), e->data.scalar.length);
        return e->data.scalar.style == YAML_PLAIN_SCALAR_STYLE ? plain(v) : json(v);
      }
      case YAML_SEQUENCE_START_EVENT: {
        json out = json::array();
        while (true) {
          Event item = next();
          if (item->type == YAML_SEQUENCE_END_EVENT) return out;
          out.push_back(value(std::move(item)));
        }
      }
      case YAML_MAPPING_START_EVENT: {
        json out = json::object();
        while (true) {
          Event k = next();
          if (k->type == YAML_MAPPING_END_EVENT) return out;
          if (k->type != YAML_SCALAR_EVENT) bad(file_, "mapping keys must be plain text", line(k));
          std::string key(reinterpret_cast<const char*>(k->data.scalar.value),
                          k->data.scalar.length);
          if (out.contains(key)) bad(file_, "key '" + key + "' appears twice", line(k));
          out[key] = value(next());
        }
      }
      case YAML_ALIAS_EVENT:
        bad(file_, "YAML aliases are not supported in use cases", line(e));
      default:
        bad(file_, "unexpected YAML structure", line(e));
    }
  }

  yaml_parser_t p_;
  std::string file_;
};

}  // namespace

json parse_yaml(const std::string& text, const std::string& file) {
  return Parser(text, file).document();
}

}  // namespace quarry::pump
