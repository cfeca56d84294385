#include "catalog/sqlite/filter_sql.h"

#include "catalog/sqlite/sqlite.h"

namespace quarry::catalog {
namespace {

using core::Filter;
using core::Scalar;

std::string json_path(const std::string& field) {
  std::string p = "$";
  std::size_t start = 0;
  while (true) {
    auto dot = field.find('.', start);
    p += ".\"" + field.substr(start, dot == std::string::npos ? std::string::npos : dot - start) +
         "\"";
    if (dot == std::string::npos) return p;
    start = dot + 1;
  }
}

// A comparison that is 1 or 0, never NULL: values of another JSON kind never compare equal.
std::string compare(const std::string& col, const Scalar& v, const char* op, SqlFilter& out,
                    const std::string& path) {
  auto type = "json_type(" + col + ", ?)";
  auto value = "json_extract(" + col + ", ?)";
  std::string kind;
  if (std::holds_alternative<std::string>(v))
    kind = type + " = 'text'";
  else if (std::holds_alternative<bool>(v))
    kind = type + (std::get<bool>(v) ? " = 'true'" : " = 'false'");
  else if (std::holds_alternative<std::nullptr_t>(v))
    kind = type + " = 'null'";
  else
    kind = type + " IN ('integer', 'real')";
  out.params.push_back(path);
  if (std::holds_alternative<bool>(v) || std::holds_alternative<std::nullptr_t>(v)) {
    if (std::string(op) == "=") return "COALESCE(" + kind + ", 0)";
    return "0";  // booleans and null have no order
  }
  out.params.push_back(path);
  out.params.push_back(v);
  return "COALESCE(" + kind + " AND " + value + " " + op + " ?, 0)";
}

std::string emit(const Filter& f, const std::string& col, SqlFilter& out) {
  using Op = Filter::Op;
  if (f.op == Op::And || f.op == Op::Or) {
    if (f.children.empty()) return f.op == Op::And ? "1" : "0";
    std::string s = "(";
    for (std::size_t i = 0; i < f.children.size(); ++i) {
      if (i) s += f.op == Op::And ? " AND " : " OR ";
      s += emit(f.children[i], col, out);
    }
    return s + ")";
  }
  const std::string path = json_path(f.field);
  switch (f.op) {
    case Op::Exists:
      out.params.push_back(path);
      return std::string("(json_type(") + col + ", ?) IS " +
             (std::get<bool>(f.values[0]) ? "NOT NULL)" : "NULL)");
    case Op::Eq:
      return compare(col, f.values[0], "=", out, path);
    case Op::Ne:
      return "(NOT " + compare(col, f.values[0], "=", out, path) + ")";
    case Op::Gt:
      return compare(col, f.values[0], ">", out, path);
    case Op::Gte:
      return compare(col, f.values[0], ">=", out, path);
    case Op::Lt:
      return compare(col, f.values[0], "<", out, path);
    case Op::Lte:
      return compare(col, f.values[0], "<=", out, path);
    case Op::In:
    case Op::Nin: {
      std::string s = "(";
      for (std::size_t i = 0; i < f.values.size(); ++i) {
        if (i) s += " OR ";
        s += compare(col, f.values[i], "=", out, path);
      }
      if (f.values.empty()) s += "0";
      s += ")";
      return f.op == Op::In ? s : "(NOT " + s + ")";
    }
    default:
      return "0";
  }
}

}  // namespace

SqlFilter compile_filter(const core::Filter& f, const std::string& column) {
  SqlFilter out;
  if (f.empty()) return out;
  out.sql = emit(f, column, out);
  return out;
}

int bind_filter(Stmt& st, const SqlFilter& f, int first) {
  int i = first;
  for (const auto& p : f.params) {
    std::visit(
        [&](const auto& v) {
          using T = std::decay_t<decltype(v)>;
          if constexpr (std::is_same_v<T, std::nullptr_t>)
            st.bind_null(i);
          else if constexpr (std::is_same_v<T, bool>)
            st.bind(i, static_cast<std::int64_t>(v));
          else
            st.bind(i, v);
        },
        p);
    ++i;
  }
  return i;
}

}  // namespace quarry::catalog
