#include "secrets/secret_store.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "quarry/error.h"
#include "quarry/secrets.h"
#include "test_util.h"

namespace quarry::secrets {
namespace {

using quarry::testing::read_file;
using quarry::testing::TempDir;

using quarry::testing::ScopedEnv;

using quarry::testing::code_of;

TEST(SecretStore, RoundTripsAndListsNamesOnly) {
  ScopedEnv no_env_key("QUARRY_SECRET_KEY", nullptr);
  TempDir dir;
  SecretStore s((dir / "data").string());
  EXPECT_EQ(s.get("OPENAI_API_KEY"), std::nullopt);
  EXPECT_TRUE(s.names().empty());
  s.set("OPENAI_API_KEY", "sk-plaintext-value-42");
  s.set("b_other", "two");
  EXPECT_EQ(s.get("OPENAI_API_KEY"), "sk-plaintext-value-42");
  EXPECT_EQ(SecretStore((dir / "data").string()).get("b_other"), "two");  // a fresh instance
  EXPECT_EQ(s.names(), (std::vector<std::string>{"OPENAI_API_KEY", "b_other"}));
  s.set("b_other", "three");
  EXPECT_EQ(s.get("b_other"), "three");
  EXPECT_TRUE(s.remove("b_other"));
  EXPECT_FALSE(s.remove("b_other"));
  EXPECT_EQ(s.get("b_other"), std::nullopt);
}

TEST(SecretStore, FileHoldsNoPlaintextAndKeyFileIsPrivate) {
  ScopedEnv no_env_key("QUARRY_SECRET_KEY", nullptr);
  TempDir dir;
  SecretStore s(dir.path().string());
  s.set("API", "sk-plaintext-value-42");
  std::string file = read_file(dir / "secrets.json");
  EXPECT_EQ(file.find("sk-plaintext-value-42"), std::string::npos);
  EXPECT_NE(file.find("ciphertext"), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "secret.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 32);
  ASSERT_EQ(::stat((dir / "secrets.json").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
}

TEST(SecretStore, RefusesAKeyFileOthersCanRead) {
  ScopedEnv no_env_key("QUARRY_SECRET_KEY", nullptr);
  TempDir dir;
  SecretStore s(dir.path().string());
  s.set("API", "v");
  ::chmod((dir / "secret.key").c_str(), 0644);
  EXPECT_EQ(code_of([&] { s.get("API"); }), Code::forbidden);
  EXPECT_EQ(code_of([&] { s.set("API", "w"); }), Code::forbidden);
}

TEST(SecretStore, WrongMasterKeyFailsCleanly) {
  TempDir dir;
  {
    ScopedEnv key("QUARRY_SECRET_KEY", std::string(64, 'a').c_str());
    SecretStore(dir.path().string()).set("API", "v1");
    EXPECT_FALSE(std::filesystem::exists(dir / "secret.key"));  // the env key was used
    EXPECT_EQ(SecretStore(dir.path().string()).get("API"), "v1");
  }
  ScopedEnv other("QUARRY_SECRET_KEY", std::string(64, 'b').c_str());
  try {
    SecretStore(dir.path().string()).get("API");
    FAIL() << "decrypted under the wrong key";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::unauthorized);
    EXPECT_NE(e.message().find("quarry secret set API"), std::string::npos) << e.message();
  }
  ScopedEnv bad("QUARRY_SECRET_KEY", "too-short");
  EXPECT_EQ(code_of([&] { SecretStore(dir.path().string()).get("API"); }), Code::invalid_argument);
}

TEST(SecretStore, AcceptsABase64EnvKey) {
  TempDir dir;
  ScopedEnv key("QUARRY_SECRET_KEY", "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=");
  SecretStore s(dir.path().string());
  s.set("K", "value");
  EXPECT_EQ(s.get("K"), "value");
}

TEST(SecretStore, ValuesAreBoundToTheirNames) {
  ScopedEnv no_env_key("QUARRY_SECRET_KEY", nullptr);
  TempDir dir;
  SecretStore s(dir.path().string());
  s.set("A", "alpha");
  s.set("B", "beta");
  auto j = nlohmann::json::parse(read_file(dir / "secrets.json"));
  std::swap(j["secrets"]["A"], j["secrets"]["B"]);
  quarry::testing::write_file(dir / "secrets.json", j.dump());
  EXPECT_EQ(code_of([&] { s.get("A"); }), Code::unauthorized);
}

TEST(SecretStore, ValidatesNamesAndValues) {
  ScopedEnv no_env_key("QUARRY_SECRET_KEY", nullptr);
  TempDir dir;
  SecretStore s(dir.path().string());
  for (const char* bad : {"", "1ABC", "has-dash", "sp ace", "../x"})
    EXPECT_EQ(code_of([&] { s.set(bad, "v"); }), Code::invalid_argument) << bad;
  EXPECT_EQ(code_of([&] { s.set(std::string(65, 'A'), "v"); }), Code::invalid_argument);
  EXPECT_TRUE(SecretStore::valid_name("_x9"));
  EXPECT_EQ(code_of([&] { s.set("EMPTY", ""); }), Code::invalid_argument);
}

TEST(SecretStore, DamagedFileIsReportedNotIgnored) {
  ScopedEnv no_env_key("QUARRY_SECRET_KEY", nullptr);
  TempDir dir;
  quarry::testing::write_file(dir / "secrets.json", "{not json");
  EXPECT_EQ(code_of([&] { SecretStore(dir.path().string()).get("A"); }), Code::corrupt_input);
}

TEST(SecretLookup, StoreFirstThenEnvironment) {
  ScopedEnv no_env_key("QUARRY_SECRET_KEY", nullptr);
  ScopedEnv env("QUARRY_TEST_LOOKUP", "from-env");
  ScopedEnv env2("QUARRY_TEST_ONLY_ENV", "env-only");
  TempDir dir;
  auto lookup = secret_lookup(dir.path().string());
  EXPECT_EQ(lookup("QUARRY_TEST_LOOKUP"), "from-env");
  SecretStore(dir.path().string()).set("QUARRY_TEST_LOOKUP", "from-store");
  EXPECT_EQ(lookup("QUARRY_TEST_LOOKUP"), "from-store");
  EXPECT_EQ(lookup("QUARRY_TEST_ONLY_ENV"), "env-only");
  EXPECT_EQ(lookup("QUARRY_TEST_NOWHERE"), "");
}

// The public API (quarry/secrets.h) the CLI uses: what it writes, the engine's lookup reads;
// names are listed, values never.
TEST(PublicSecrets, SetListDeleteRoundTrip) {
  ScopedEnv no_env_key("QUARRY_SECRET_KEY", nullptr);
  TempDir dir;
  const std::string data = (dir / "data").string();  // created by the first set
  EXPECT_TRUE(quarry::secret_names(data).empty());
  quarry::set_secret(data, "B_KEY", "two");
  quarry::set_secret(data, "A_KEY", "one");
  EXPECT_EQ(quarry::secret_names(data), (std::vector<std::string>{"A_KEY", "B_KEY"}));
  EXPECT_EQ(secret_lookup(data)("A_KEY"), "one");
  EXPECT_TRUE(quarry::delete_secret(data, "A_KEY"));
  EXPECT_FALSE(quarry::delete_secret(data, "A_KEY"));
  EXPECT_EQ(quarry::secret_names(data), std::vector<std::string>{"B_KEY"});
  EXPECT_FALSE(quarry::valid_secret_name("9LIVES"));
  EXPECT_TRUE(quarry::valid_secret_name("OPENAI_API_KEY"));
  EXPECT_EQ(code_of([&] { quarry::set_secret(data, "bad-name", "v"); }), Code::invalid_argument);
}

}  // namespace
}  // namespace quarry::secrets
