// An advanced (FTS5) query that FTS5 would refuse with "syntax error near ..." is refused first,
// saying at which character and what is wrong (issue 26: the message once read "catalog error:
// step: unterminated string").
#include <gtest/gtest.h>

#include <string>

#include "quarry/error.h"
#include "search/keyword.h"

namespace quarry::search {
namespace {

struct Refusal {
  std::string message, position;
};

Refusal refusal_of(const std::string& query) {
  try {
    check_advanced_query(query);
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument) << query;
    EXPECT_EQ(e.details().at("field"), "query");
    return {e.message(), e.details().at("position")};
  }
  ADD_FAILURE() << query << " was accepted";
  return {};
}

TEST(AdvancedQuery, SaysWhereAndWhatIsWrong) {
  struct Case {
    const char* query;
    const char* position;
    const char* what;
  };
  for (const Case& c : {Case{"\"unclosed", "1", "the phrase opened here has no closing \""},
                        Case{"sea AND", "5", "'AND' has nothing after it"},
                        Case{"OR sea", "1", "'OR' has nothing before it"},
                        Case{"sea AND NOT tides", "9", "'NOT' has nothing before it"},
                        Case{"(sea OR tides", "1", "the group opened here has no closing ')'"},
                        Case{"sea)", "4", "')' closes no '('"},
                        Case{"sea ()", "5", "the group opened here is empty"},
                        Case{"(sea OR)", "6", "'OR' has nothing after it"},
                        // Positions count characters, not bytes.
                        Case{"天気 AND", "4", "'AND' has nothing after it"}}) {
    Refusal r = refusal_of(c.query);
    EXPECT_EQ(r.position, c.position) << c.query << ": " << r.message;
    EXPECT_NE(r.message.find(std::string("at character ") + c.position + ": " + c.what),
              std::string::npos)
        << c.query << ": " << r.message;
    EXPECT_NE(r.message.find("leave out --advanced"), std::string::npos) << r.message;
  }
}

TEST(AdvancedQuery, ValidSyntaxPasses) {
  for (const char* q :
       {"alpha", "alpha AND (beta OR gamma*)", "\"a phrase\" NOT beta", "\"say \"\"hi\"\" twice\"",
        "NEAR(alpha beta, 5)", "title:alpha", "(alpha) (beta)", "  spaced   out  "})
    EXPECT_NO_THROW(check_advanced_query(q)) << q;
}

}  // namespace
}  // namespace quarry::search
