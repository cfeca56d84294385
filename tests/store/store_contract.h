// The vector-store contract suite (SPEC §6): every store runs the same value-parameterised
// tests. To run it against a new store, add a file in tests/store/ with a factory and
//
//   INSTANTIATE_TEST_SUITE_P(MyStore, StoreContract,
//                            ::testing::Values(StoreUnderTest{"mystore", make_my_store}),
//                            StoreUnderTest::name_of);
//
// The factory gets a fresh empty directory per test (ignore it if the store is remote, but
// then give each test its own collection/database so tests do not see each other).
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "store/vector_store.h"
#include "test_util.h"

namespace quarry::store::contract {

struct StoreUnderTest {
  std::string name;
  std::function<std::unique_ptr<VectorStore>(const std::filesystem::path& dir)> make;

  static std::string name_of(const ::testing::TestParamInfo<StoreUnderTest>& info) {
    return info.param.name;
  }
};

inline void PrintTo(const StoreUnderTest& s, std::ostream* os) {
  *os << s.name;
}

class StoreContract : public ::testing::TestWithParam<StoreUnderTest> {
 protected:
  void SetUp() override { store_ = GetParam().make(dir_.path()); }
  void TearDown() override { store_.reset(); }

  quarry::testing::TempDir dir_;
  std::unique_ptr<VectorStore> store_;
};

}  // namespace quarry::store::contract
