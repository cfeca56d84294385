// Request deadlines (quarry/deadline.h): per thread, scoped, the earliest one wins.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "quarry/deadline.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry {
namespace {
using namespace std::chrono_literals;
using quarry::testing::code_of;

TEST(Deadline, AThreadWithoutAScopeHasNone) {
  EXPECT_FALSE(current_deadline().active);
  EXPECT_FALSE(deadline_passed());
  EXPECT_EQ(code_of([] { check_deadline(); }), Code::ok);
}

TEST(Deadline, APassedDeadlineThrowsTimeoutSayingWhatToDo) {
  ScopedDeadline d(0ms, "this search");
  EXPECT_TRUE(deadline_passed());
  std::string message;
  std::map<std::string, std::string> details;
  EXPECT_EQ(code_of([] { check_deadline(); }, &details, &message), Code::timeout);
  EXPECT_EQ(message.rfind("this search took longer than its limit of 0 ms; ", 0), 0u) << message;
  EXPECT_NE(message.find("narrow the query or the filter"), std::string::npos) << message;
  EXPECT_NE(message.find("--deadline"), std::string::npos) << message;
  EXPECT_EQ(details["limit_ms"], "0");
}

TEST(Deadline, ADeadlineNotYetPassedLetsWorkGoOnAndEndsWithItsScope) {
  {
    ScopedDeadline d(60s, "this search");
    EXPECT_TRUE(current_deadline().active);
    EXPECT_EQ(current_deadline().budget, 60s);
    EXPECT_EQ(code_of([] { check_deadline(); }), Code::ok);
  }
  EXPECT_FALSE(current_deadline().active);
}

TEST(Deadline, NestedScopesKeepTheEarliestDeadline) {
  ScopedDeadline outer(0ms, "the outer request");
  {
    ScopedDeadline inner(60s, "an inner step");  // cannot extend the outer one
    EXPECT_TRUE(deadline_passed());
    std::string message;
    code_of([] { check_deadline(); }, nullptr, &message);
    EXPECT_EQ(message.rfind("the outer request took longer", 0), 0u) << message;
  }
  EXPECT_TRUE(deadline_passed());
}

TEST(Deadline, AnInnerScopeMayShortenTheDeadlineUntilItEnds) {
  ScopedDeadline outer(60s, "the outer request");
  {
    ScopedDeadline inner(0ms, "an inner step");
    EXPECT_TRUE(deadline_passed());
    std::string message;
    code_of([] { check_deadline(); }, nullptr, &message);
    EXPECT_EQ(message.rfind("an inner step took longer than its limit of 0 ms", 0), 0u) << message;
  }
  EXPECT_FALSE(deadline_passed());
  EXPECT_EQ(current_deadline().what, "the outer request");
}

TEST(Deadline, OtherThreadsDoNotSeeItUnlessTheyAdoptIt) {
  ScopedDeadline d(0ms, "this grep");
  const Deadline handed = current_deadline();
  bool plain_passed = true, adopted_passed = false;
  std::thread([&] { plain_passed = deadline_passed(); }).join();
  std::thread([&] {
    ScopedDeadline inherited(handed);
    adopted_passed = deadline_passed();
  }).join();
  EXPECT_FALSE(plain_passed);
  EXPECT_TRUE(adopted_passed);
}

}  // namespace
}  // namespace quarry
