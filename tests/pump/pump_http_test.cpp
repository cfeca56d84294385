// The pump's `http` source against a webhook app on 127.0.0.1 (cpp-httplib): the GET/POST
// contract, ids echoed as the app sent them, failures on the first slice, the SSRF guard, and
// how the app's answers map onto the failure policy.
#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <map>
#include <mutex>
#include <optional>
#include <thread>

#include "catalog/catalog.h"
#include "pump/pump.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::pump {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

// An app with rows in memory: GET answers rows not stored under the asked revision.
class WebhookApp {
 public:
  WebhookApp() {
    srv_.Get("/embeddings/notes", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      ++gets_;
      last_query_ = req.params;
      auth_ = req.get_header_value("Authorization");
      if (get_status_ != 200) {
        res.status = get_status_;
        return;
      }
      if (raw_get_) {
        res.set_content(*raw_get_, "application/json");
        return;
      }
      const int limit = std::stoi(req.get_param_value("limit"));
      const std::string rev = req.get_param_value("revision");
      json rows = json::array();
      for (const auto& [id, body] : rows_) {
        if (stored_.count(id) && stored_[id] == rev) continue;
        if (failed_.count(id)) continue;
        if (static_cast<int>(rows.size()) == limit + extra_) break;
        rows.push_back({{"id", id}, {"content", body}, {"metadata", {{"n", id}}}});
      }
      res.set_content(rows.dump(), "application/json");
    });
    srv_.Post("/embeddings/notes", [this](const httplib::Request& req, httplib::Response& res) {
      std::lock_guard lock(mu_);
      ++posts_;
      if (post_status_ != 200) {
        res.status = post_status_;
        res.set_content("nope", "text/plain");
        return;
      }
      json b = json::parse(req.body);
      bodies_.push_back(b);
      for (const auto& d : b["docs"]) stored_[d["id"].get<int>()] = b["revision"];
      for (const auto& f : b["failures"]) failed_[f["id"].get<int>()] = f["code"];
      res.set_content(R"({"stored": true})", "application/json");
    });
    port_ = srv_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { srv_.listen_after_bind(); });
    while (!srv_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  ~WebhookApp() {
    srv_.stop();
    thread_.join();
  }
  std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/embeddings/notes";
  }

  httplib::Server srv_;
  int port_ = 0;
  std::thread thread_;
  std::mutex mu_;
  std::map<int, std::string> rows_, stored_, failed_;
  std::vector<json> bodies_;
  httplib::Params last_query_;
  std::string auth_;
  int gets_ = 0, posts_ = 0, get_status_ = 200, post_status_ = 200, extra_ = 0;
  std::optional<std::string> raw_get_;
};

class PumpHttp : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directories(apps());
    cat_ = catalog::Catalog::open((data_.path() / "catalog.db").string());
    pump_ = std::make_unique<Pump>(data_.path().string(), *cat_, [](const std::string& n) {
      return n == "HOOK_TOKEN" ? std::string("s3cret") : std::string();
    });
    for (int i = 1; i <= 25; ++i) app_.rows_[i] = "note " + std::to_string(i) + " about pumps";
  }
  fs::path apps() const { return data_.path() / "apps"; }
  void deploy(json source_extra = json::object(), int batch = 10) {
    json src = {{"type", "http"}, {"url", app_.url()}, {"allow_private", true}};
    src.update(source_extra);
    quarry::testing::write_file(apps() / "notes.json",
                                json{{"batch_size", batch}, {"source", src}}.dump());
    pump_->deploy(apps().string(), "hash:32", catalog::AuditEntry{});
  }
  Code run_error() {
    try {
      pump_->run("notes");
    } catch (const Error& e) {
      return e.code();
    }
    return Code::ok;
  }
  catalog::PumpUseCaseRow row() { return *cat_->pump().find("notes"); }

  WebhookApp app_;
  quarry::testing::TempDir data_;
  std::unique_ptr<catalog::Catalog> cat_;
  std::unique_ptr<Pump> pump_;
};

TEST_F(PumpHttp, DrainsTheWebhookAndEchoesIdsAsSent) {
  app_.rows_[26] = "   ";  // no_content: reported in the first slice's failures
  deploy({{"api_key_secret", "HOOK_TOKEN"}});
  auto r = pump_->run("notes");
  EXPECT_EQ(r.processed, 25);
  EXPECT_EQ(r.failed, 1);
  EXPECT_EQ(r.batches, 3);
  EXPECT_EQ(app_.stored_.size(), 25u);
  for (const auto& [id, rev] : app_.stored_) EXPECT_EQ(rev, r.revision);
  EXPECT_EQ(app_.failed_[26], "no_content");
  EXPECT_EQ(app_.auth_, "Bearer s3cret");
  EXPECT_EQ(app_.last_query_.find("limit")->second, "10");
  EXPECT_EQ(app_.last_query_.find("revision")->second, r.revision);
  ASSERT_FALSE(app_.bodies_.empty());
  const json& first = app_.bodies_[0];
  EXPECT_TRUE(first["docs"][0]["id"].is_number_integer());  // as the app sent it
  EXPECT_EQ(first["docs"][0]["metadata"]["n"], 1);
  const json& chunk = first["docs"][0]["chunks"][0];
  EXPECT_EQ(chunk["seq"], 0);
  EXPECT_EQ(chunk["content"], "note 1 about pumps");
  EXPECT_EQ(chunk["embedding"].size(), 32u);
  EXPECT_TRUE(chunk["metadata"].is_object());
  EXPECT_EQ(pump_->run("notes").processed, 0);  // the webhook is the ledger
}

TEST_F(PumpHttp, ContractBreachesPark) {
  deploy();
  app_.extra_ = 3;  // more rows than the limit
  EXPECT_EQ(run_error(), Code::contract_violation);
  EXPECT_TRUE(row().parked);
  EXPECT_EQ(app_.posts_, 0);
  app_.extra_ = 0;
  app_.raw_get_ = "";  // nothing at all: an authoring error, not an empty corpus
  deploy();
  EXPECT_EQ(run_error(), Code::contract_violation);
  EXPECT_NE(row().last_error.find("no result set"), std::string::npos) << row().last_error;
  app_.raw_get_ = R"({"rows": []})";
  deploy();
  EXPECT_EQ(run_error(), Code::contract_violation);
  app_.raw_get_.reset();
  app_.post_status_ = 400;  // the app's handler refused the POST
  deploy();
  EXPECT_EQ(run_error(), Code::contract_violation);
  EXPECT_TRUE(row().parked);
  EXPECT_NE(row().last_error.find("400"), std::string::npos);
}

TEST_F(PumpHttp, ServerErrorsAreRetriedAndPrivateAddressesNeedConsent) {
  deploy();
  app_.post_status_ = 503;
  EXPECT_EQ(run_error(), Code::upstream_error);
  EXPECT_FALSE(row().parked);
  EXPECT_TRUE(row().pending);
  EXPECT_EQ(row().attempts, 1);
  app_.post_status_ = 200;
  EXPECT_EQ(pump_->run("notes").processed, 25);
  EXPECT_EQ(row().attempts, 0);

  deploy({{"allow_private", false}});  // 127.0.0.1 without consent: the SSRF guard says no
  const int gets = app_.gets_;
  EXPECT_EQ(run_error(), Code::blocked_address);
  EXPECT_EQ(app_.gets_, gets);  // never reached the app
  EXPECT_TRUE(row().parked);
}

TEST_F(PumpHttp, AMissingTokenSecretFailsTheDeploy) {
  try {
    deploy({{"api_key_secret", "NO_SUCH_SECRET"}});
    FAIL() << "deployed without the webhook's token";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::invalid_argument);
    EXPECT_NE(e.message().find("NO_SUCH_SECRET"), std::string::npos);
  }
}

}  // namespace
}  // namespace quarry::pump
