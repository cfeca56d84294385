#include "catalog/sqlite/filter_sql.h"

#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_map>

#include "catalog/sqlite/sqlite.h"

namespace quarry::catalog {
namespace {

constexpr const char* kPointerType = "quarry_filter";

// Verdicts by metadata text, kept by SQLite beside the statement while the filter argument (a
// bound parameter) stays the same. The chunks of one document come one after another, and
// documents ingested together often carry the same metadata: each distinct text is parsed and
// evaluated once per statement run.
struct Memo {
  static constexpr std::size_t kMaxEntries = 4096;
  static constexpr std::size_t kMaxText = 4096;  // longer texts are evaluated every time
  std::uint64_t serial = 0;
  struct Hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, bool, Hash, std::equal_to<>> verdicts;
};

bool evaluate(const core::Filter& filter, std::string_view text) {
  nlohmann::json md = nlohmann::json::parse(text, nullptr, false);
  if (md.is_discarded() || !md.is_object()) md = nlohmann::json::object();
  return core::filter_matches(filter, md);
}

void filter_function(sqlite3_context* ctx, int, sqlite3_value** argv) {
  const auto* bound = static_cast<const SqlFilter*>(sqlite3_value_pointer(argv[1], kPointerType));
  if (!bound || !bound->filter) {
    sqlite3_result_error(ctx, "quarry_filter: no filter bound", -1);
    return;
  }
  const auto* data = reinterpret_cast<const char*>(sqlite3_value_text(argv[0]));
  const std::string_view text(data ? data : "",
                              static_cast<std::size_t>(sqlite3_value_bytes(argv[0])));
  try {
    auto* memo = static_cast<Memo*>(sqlite3_get_auxdata(ctx, 1));
    if (memo && memo->serial != bound->serial) memo = nullptr;  // another filter: start afresh
    if (memo) {
      if (auto it = memo->verdicts.find(text); it != memo->verdicts.end()) {
        sqlite3_result_int(ctx, it->second ? 1 : 0);
        return;
      }
    }
    const bool verdict = evaluate(*bound->filter, text);
    sqlite3_result_int(ctx, verdict ? 1 : 0);
    if (text.size() > Memo::kMaxText) return;
    if (memo) {
      if (memo->verdicts.size() >= Memo::kMaxEntries) memo->verdicts.clear();
      memo->verdicts.emplace(text, verdict);
      return;
    }
    auto fresh = std::make_unique<Memo>();
    fresh->serial = bound->serial;
    fresh->verdicts.emplace(text, verdict);
    // Last: SQLite may free the memo before set_auxdata returns.
    sqlite3_set_auxdata(ctx, 1, fresh.release(), [](void* p) { delete static_cast<Memo*>(p); });
  } catch (const std::bad_alloc&) {
    sqlite3_result_error_nomem(ctx);
  } catch (const std::exception& e) {
    sqlite3_result_error(ctx, e.what(), -1);
  }
}

}  // namespace

SqlFilter compile_filter(const core::Filter& f, const std::string& alias) {
  SqlFilter out;
  if (f.empty()) return out;
  out.sql = "quarry_filter(" + alias + ".metadata, ?)";
  out.filter = &f;
  static std::atomic<std::uint64_t> serials{0};
  out.serial = ++serials;
  return out;
}

int bind_filter(Stmt& st, const SqlFilter& f, int first) {
  if (!f.filter) return first;
  sqlite3_bind_pointer(st.raw(), first, const_cast<SqlFilter*>(&f), kPointerType, nullptr);
  return first + 1;
}

void register_filter_function(sqlite3* db) {
  int rc = sqlite3_create_function_v2(db, "quarry_filter", 2, SQLITE_UTF8 | SQLITE_DIRECTONLY,
                                      nullptr, filter_function, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) throw_sqlite(db, rc, "register quarry_filter");
}

}  // namespace quarry::catalog
