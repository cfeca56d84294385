#include "net/ssrf_guard.h"

#include <gtest/gtest.h>

#include "fake_embed_server.h"
#include "net/http_client.h"
#include "quarry/error.h"
#include "test_util.h"

namespace quarry::net {
namespace {

using quarry::testing::code_of;

// A resolver that knows a few made-up names, so tests control what a host resolves to.
std::vector<std::string> fake_dns(const std::string& host, int) {
  if (host == "loop.example") return {"127.0.0.1"};
  if (host == "public.example") return {"93.184.216.34"};
  if (host == "mixed.example") return {"93.184.216.34", "169.254.169.254"};
  if (host == "lan.example") return {"192.168.1.20"};
  if (host == "v6meta.example") return {"fd00:ec2::254"};
  throw Error(Code::engine_unavailable, "no such host");
}

TEST(AddressClass, ClassifiesTheRangesTheGuardCaresAbout) {
  EXPECT_EQ(classify_address("169.254.169.254"), AddressClass::metadata);
  EXPECT_EQ(classify_address("100.100.100.200"), AddressClass::metadata);
  EXPECT_EQ(classify_address("fd00:ec2::254"), AddressClass::metadata);
  EXPECT_EQ(classify_address("169.254.1.1"), AddressClass::link_local);
  EXPECT_EQ(classify_address("fe80::1"), AddressClass::link_local);
  EXPECT_EQ(classify_address("127.0.0.1"), AddressClass::loopback);
  EXPECT_EQ(classify_address("127.8.9.10"), AddressClass::loopback);
  EXPECT_EQ(classify_address("::1"), AddressClass::loopback);
  EXPECT_EQ(classify_address("10.1.2.3"), AddressClass::private_net);
  EXPECT_EQ(classify_address("172.16.0.1"), AddressClass::private_net);
  EXPECT_EQ(classify_address("172.31.255.255"), AddressClass::private_net);
  EXPECT_EQ(classify_address("172.32.0.1"), AddressClass::global);
  EXPECT_EQ(classify_address("192.168.0.1"), AddressClass::private_net);
  EXPECT_EQ(classify_address("fc00::1"), AddressClass::private_net);
  EXPECT_EQ(classify_address("fd12:3456::1"), AddressClass::private_net);
  EXPECT_EQ(classify_address("0.0.0.0"), AddressClass::unspecified);
  EXPECT_EQ(classify_address("::"), AddressClass::unspecified);
  EXPECT_EQ(classify_address("224.0.0.1"), AddressClass::multicast);
  EXPECT_EQ(classify_address("ff02::1"), AddressClass::multicast);
  EXPECT_EQ(classify_address("8.8.8.8"), AddressClass::global);
  EXPECT_EQ(classify_address("2606:4700::1111"), AddressClass::global);
  EXPECT_EQ(classify_address("not-an-ip"), AddressClass::invalid);
}

TEST(AddressClass, JudgesIpv4InsideIpv6ByTheIpv4Address) {
  EXPECT_EQ(classify_address("::ffff:169.254.169.254"), AddressClass::metadata);
  EXPECT_EQ(classify_address("::ffff:127.0.0.1"), AddressClass::loopback);
  EXPECT_EQ(classify_address("64:ff9b::a9fe:a9fe"), AddressClass::metadata);  // NAT64
  EXPECT_EQ(classify_address("::ffff:8.8.8.8"), AddressClass::global);
}

TEST(SsrfGuard, RefusesCloudMetadataEvenWhenPrivateIsAllowed) {
  SsrfGuard g(fake_dns);
  for (bool allow : {false, true}) {
    EXPECT_EQ(code_of([&] { g.check("http://169.254.169.254/latest/meta-data", allow); }),
              Code::blocked_address);
    EXPECT_EQ(code_of([&] { g.check("http://metadata.google.internal/x", allow); }),
              Code::blocked_address);
    EXPECT_EQ(code_of([&] { g.check("http://[fd00:ec2::254]/", allow); }), Code::blocked_address);
    EXPECT_EQ(code_of([&] { g.check("http://v6meta.example/", allow); }), Code::blocked_address);
    EXPECT_EQ(code_of([&] { g.check("http://0.0.0.0:8080/", allow); }), Code::blocked_address);
    EXPECT_EQ(code_of([&] { g.check("http://[fe80::1]/", allow); }), Code::blocked_address);
  }
}

TEST(SsrfGuard, LoopbackAndPrivateOnlyWhenAllowed) {
  SsrfGuard g(fake_dns);
  EXPECT_EQ(code_of([&] { g.check("http://127.0.0.1:11434/api", false); }), Code::blocked_address);
  EXPECT_EQ(code_of([&] { g.check("http://127.0.0.1:11434/api", true); }), Code::ok);
  EXPECT_EQ(code_of([&] { g.check("http://[::1]:8080/", false); }), Code::blocked_address);
  EXPECT_EQ(code_of([&] { g.check("http://lan.example/", false); }), Code::blocked_address);
  EXPECT_EQ(code_of([&] { g.check("http://lan.example/", true); }), Code::ok);
  EXPECT_EQ(code_of([&] { g.check("https://public.example/v1", false); }), Code::ok);
}

TEST(SsrfGuard, HostnameResolvingToLoopbackIsRefused) {
  SsrfGuard fake(fake_dns);
  EXPECT_EQ(code_of([&] { fake.check("http://loop.example/v1", false); }), Code::blocked_address);
  SsrfGuard real;  // "localhost" through the real resolver
  try {
    real.check("http://localhost:9/v1", false);
    FAIL() << "localhost was allowed";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::blocked_address);
    EXPECT_NE(e.message().find("allow_private"), std::string::npos) << e.message();
  }
  // Numeric spellings that getaddrinfo turns into 127.0.0.1.
  EXPECT_EQ(code_of([&] { real.check("http://2130706433/", false); }), Code::blocked_address);
}

TEST(SsrfGuard, OneRefusedAddressRefusesTheHost) {
  SsrfGuard g(fake_dns);
  EXPECT_EQ(code_of([&] { g.check("http://mixed.example/", true); }), Code::blocked_address);
}

TEST(SsrfGuard, OnlyHttpAndHttpsSchemes) {
  SsrfGuard g(fake_dns);
  for (const char* url : {"file:///etc/passwd", "ftp://public.example/", "gopher://x/",
                          "dict://public.example:11211/"})
    EXPECT_EQ(code_of([&] { g.check(url, true); }), Code::blocked_address) << url;
  EXPECT_EQ(code_of([&] { g.check("HTTPS://public.example/", false); }), Code::ok);
  EXPECT_EQ(code_of([&] { g.check("public.example/v1", false); }), Code::invalid_argument);
  EXPECT_EQ(code_of([&] { g.check("http://user:pw@public.example/", false); }),
            Code::invalid_argument);
  // Spellings URL parsers disagree on are refused rather than interpreted.
  for (const char* url : {"http://public.example\\@127.0.0.1/", "http://metadata.goog./",
                          "http://public .example/", "http://pub%6cic.example/"})
    EXPECT_EQ(code_of([&] { g.check(url, true); }), Code::invalid_argument) << url;
}

TEST(SsrfGuard, StaticCheckNeedsNoDns) {
  EXPECT_EQ(SsrfGuard::check_static("https://api.openai.com/v1", false), "");
  EXPECT_NE(SsrfGuard::check_static("http://localhost:11434", false), "");
  EXPECT_EQ(SsrfGuard::check_static("http://localhost:11434", true), "");
  EXPECT_NE(SsrfGuard::check_static("http://169.254.169.254/", true), "");
  EXPECT_NE(SsrfGuard::check_static("http://0x7f.1/", false), "");
  EXPECT_NE(SsrfGuard::check_static("ftp://api.openai.com/", true), "");
}

TEST(ParseUrl, SplitsHostPortAndPath) {
  Url u = parse_url("https://API.example.com:8443/v1/embeddings?x=1#frag");
  EXPECT_EQ(u.scheme, "https");
  EXPECT_EQ(u.host, "api.example.com");
  EXPECT_EQ(u.port, 8443);
  EXPECT_EQ(u.path, "/v1/embeddings?x=1");
  Url v6 = parse_url("http://[::1]/");
  EXPECT_EQ(v6.host, "::1");
  EXPECT_EQ(v6.port, 80);
  EXPECT_TRUE(v6.host_is_ip);
}

TEST(CurlClient, PinsTheGuardsAddressSoCurlNeverResolvesTheName) {
  testing::FakeEmbedServer server(4);
  // "pinned.test" exists in no DNS: the request can only arrive through CURLOPT_RESOLVE.
  auto client = make_curl_client({}, SsrfGuard([](const std::string& host, int) {
                                   if (host == "pinned.test")
                                     return std::vector<std::string>{"127.0.0.1"};
                                   throw Error(Code::engine_unavailable, "unknown " + host);
                                 }));
  HttpRequest req;
  req.method = "POST";
  req.url = "http://pinned.test:" + std::to_string(server.port()) + "/v1/embeddings";
  req.body = R"({"model":"m","input":["a"]})";
  req.allow_private = true;
  HttpResponse r = client->send(req);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(server.requests(), 1);
  EXPECT_EQ(r.header("content-type"), "application/json");

  req.allow_private = false;  // the same name, now refused before any connection
  EXPECT_EQ(code_of([&] { client->send(req); }), Code::blocked_address);
  EXPECT_EQ(server.requests(), 1);
}

TEST(CurlClient, DoesNotFollowRedirects) {
  testing::FakeEmbedServer server(4);
  server.push(testing::Reply::status_body(302, "", {{"Location", "http://169.254.169.254/"}}));
  auto client = make_curl_client();
  HttpRequest req;
  req.method = "POST";
  req.url = server.base_url() + "/embeddings";
  req.allow_private = true;
  EXPECT_EQ(client->send(req).status, 302);
  EXPECT_EQ(server.requests(), 1);
}

TEST(CurlClient, ConnectionRefusedIsATransportError) {
  // Bind a port, then free it, so nothing listens there.
  int port;
  {
    testing::FakeEmbedServer server(4);
    port = server.port();
  }
  HttpRequest req;
  req.url = "http://127.0.0.1:" + std::to_string(port) + "/";
  req.allow_private = true;
  try {
    make_curl_client()->send(req);
    FAIL();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Code::engine_unavailable);
    EXPECT_EQ(e.details().count("transport"), 1u);
  }
}

}  // namespace
}  // namespace quarry::net
