// The HTTP/1.1 request parser and the multipart decoder (server/http1.h), byte by byte: framing
// the way RFC 9112 wants it, refusals where two parties could disagree on a message's end.
#include "server/http1.h"

#include <gtest/gtest.h>

#include "quarry/error.h"

namespace quarry::testing {
namespace {
using server::http::Limits;
using server::http::RequestParser;

// Feeds `bytes` in pieces of `step` and returns the parser (done or failed or waiting).
RequestParser parse(const std::string& bytes, std::size_t step = 1 << 20, Limits l = {},
                    std::string* rest = nullptr) {
  RequestParser p(l);
  std::size_t at = 0;
  while (at < bytes.size() && !p.done() && !p.failed()) {
    const std::string_view piece = std::string_view(bytes).substr(at, step);
    const std::size_t used = p.feed(piece);
    at += used;
    if (used < piece.size()) break;
  }
  if (rest) *rest = bytes.substr(at);
  return p;
}

TEST(Http1, ParsesARequestDeliveredOneByteAtATime) {
  const std::string req =
      "POST /api/v1/kbs/k%20x/search?q=a+b&x=%41 HTTP/1.1\r\nHost: 127.0.0.1\r\n"
      "Content-Type: application/json\r\nContent-Length: 5\r\n\r\nhello";
  for (std::size_t step : {std::size_t{1}, std::size_t{7}, req.size()}) {
    auto p = parse(req, step);
    ASSERT_TRUE(p.done()) << step;
    auto& r = p.request();
    EXPECT_EQ(r.method, "POST");
    EXPECT_EQ(r.path, "/api/v1/kbs/k x/search");
    EXPECT_EQ(r.query, "q=a+b&x=%41");
    EXPECT_EQ(r.body, "hello");
    EXPECT_EQ(*r.header("content-type"), "application/json");
    EXPECT_TRUE(r.keep_alive);
  }
  auto q = server::http::parse_query("q=a+b&x=%41&x=2&flag");
  EXPECT_EQ(q.find("q")->second, "a b");
  EXPECT_EQ(q.count("x"), 2u);
  EXPECT_EQ(q.find("flag")->second, "");
}

TEST(Http1, LeavesAPipelinedRequestForTheNextParse) {
  std::string rest;
  auto p = parse("GET /a HTTP/1.1\r\nHost: h\r\n\r\nGET /b HTTP/1.1\r\nHost: h\r\n\r\n", 1 << 20,
                 {}, &rest);
  ASSERT_TRUE(p.done());
  EXPECT_EQ(p.request().path, "/a");
  EXPECT_EQ(rest, "GET /b HTTP/1.1\r\nHost: h\r\n\r\n");
}

TEST(Http1, DecodesChunkedBodies) {
  const std::string req =
      "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
      "5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nTrailer: x\r\n\r\n";
  for (std::size_t step : {std::size_t{1}, std::size_t{3}, req.size()}) {
    std::string rest;
    auto p = parse(req + "NEXT", step, {}, &rest);
    ASSERT_TRUE(p.done()) << step;
    EXPECT_EQ(p.request().body, "hello world");
    EXPECT_EQ(rest, "NEXT");
  }
}

struct Refusal {
  const char* name;
  std::string request;
  int status;
};

TEST(Http1, RefusesWhatCouldDesyncFraming) {
  const std::vector<Refusal> cases = {
      {"two hosts", "GET / HTTP/1.1\r\nHost: a\r\nHost: evil.example\r\n\r\n", 400},
      {"no host", "GET / HTTP/1.1\r\n\r\n", 400},
      {"negative length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: -5\r\n\r\n", 400},
      {"signed length", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: +5\r\n\r\n", 400},
      {"two lengths",
       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n", 400},
      {"length list", "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 1, 1\r\n\r\n", 400},
      {"length and chunked",
       "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
       400},
      {"gzip coding", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"chunked twice", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, chunked\r\n\r\n",
       501},
      {"space before colon", "GET / HTTP/1.1\r\nHost : a\r\n\r\n", 400},
      {"folded header", "GET / HTTP/1.1\r\nHost: a\r\nX-A: 1\r\n  2\r\n\r\n", 400},
      {"bare LF chunk", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\nhello",
       400},
      {"bad chunk size", "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
       400},
      {"version", "GET / HTTP/2.0\r\nHost: a\r\n\r\n", 505},
      {"absolute garbage", "GET nothing HTTP/1.1\r\nHost: a\r\n\r\n", 400},
      {"control char", "GET / HTTP/1.1\r\nHost: a\r\nX: a\x01z\r\n\r\n", 400},
      {"expect other", "POST / HTTP/1.1\r\nHost: a\r\nExpect: 200-ok\r\n\r\n", 417},
  };
  for (const auto& c : cases) {
    auto p = parse(c.request);
    EXPECT_TRUE(p.failed()) << c.name;
    EXPECT_EQ(p.error().status, c.status) << c.name << ": " << p.error().message;
    EXPECT_FALSE(p.error().message.empty()) << c.name;
  }
}

TEST(Http1, BoundsHeadAndBody) {
  Limits l;
  l.max_request_line = 100;
  l.max_head = 300;
  l.max_body = 10;
  EXPECT_EQ(parse("GET /" + std::string(200, 'a'), 1 << 20, l).error().status, 414);
  EXPECT_EQ(parse("GET / HTTP/1.1\r\nX: " + std::string(400, 'a'), 1 << 20, l).error().status, 431);
  EXPECT_EQ(
      parse("POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\n", 1 << 20, l).error().status,
      413);
  EXPECT_EQ(parse("POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "8\r\n12345678\r\n8\r\n",
                  1 << 20, l)
                .error()
                .status,
            413);
  // Waiting for more is not an error: a partial head is neither done nor failed.
  auto partial = parse("GET / HTTP/1.1\r\nHost: a\r\n");
  EXPECT_TRUE(partial.started());
  EXPECT_FALSE(partial.done());
  EXPECT_FALSE(partial.failed());
}

TEST(Http1, KeepAliveFollowsTheVersionAndConnectionHeader) {
  EXPECT_FALSE(
      parse("GET / HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n").request().keep_alive);
  EXPECT_FALSE(parse("GET / HTTP/1.0\r\n\r\n").request().keep_alive);
  EXPECT_TRUE(parse("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").request().keep_alive);
  auto p = parse("POST / HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\n");
  EXPECT_TRUE(p.head_complete());
  EXPECT_TRUE(p.expects_continue());
}

TEST(Http1, ParsesMultipartFormData) {
  const std::string body =
      "preamble\r\n--XyZ\r\nContent-Disposition: form-data; name=\"metadata\"\r\n\r\n{\"a\":1}"
      "\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a \\\"b\\\".md\"\r\n"
      "Content-Type: text/markdown\r\n\r\n# T\r\na--XyZ is not a delimiter\r\n"
      "\r\n--XyZ\r\nContent-Disposition: form-data; name=\"file\"; filename=\"\"\r\n\r\n"
      "\r\n--XyZ--\r\n";
  auto parts = server::http::parse_multipart(body, "multipart/form-data; boundary=XyZ");
  ASSERT_EQ(parts.size(), 3u);
  EXPECT_EQ(parts[0].name, "metadata");
  EXPECT_FALSE(parts[0].has_filename);
  EXPECT_EQ(parts[0].content, "{\"a\":1}");
  EXPECT_EQ(parts[1].filename, "a \"b\".md");
  EXPECT_EQ(parts[1].content, "# T\r\na--XyZ is not a delimiter\r\n");
  EXPECT_TRUE(parts[2].has_filename);
  EXPECT_EQ(parts[2].filename, "");
}

TEST(Http1, RefusesMalformedMultipartNamingTheProblem) {
  auto message = [](const std::string& body, const std::string& type) {
    try {
      server::http::parse_multipart(body, type, 3);
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Code::invalid_argument);
      return e.message();
    }
    return std::string("(accepted)");
  };
  EXPECT_NE(message("", "multipart/form-data").find("no boundary"), std::string::npos);
  EXPECT_NE(message("--b", "multipart/form-data; boundary=" + std::string(71, 'b')).find("70"),
            std::string::npos);
  EXPECT_NE(message("--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\nx",
                    "multipart/form-data; boundary=b")
                .find("closing boundary"),
            std::string::npos);
  std::string body = "--b";
  for (int i = 0; i < 4; ++i)
    body += "\r\nContent-Disposition: form-data; name=\"f\"\r\n\r\nx\r\n--b";
  body += "--\r\n";
  EXPECT_NE(message(body, "multipart/form-data; boundary=b").find("more than 3 parts"),
            std::string::npos);
}

// Mutated and re-split requests never crash the parser, and whatever it accepts it accepts the
// same way whichever pieces the bytes came in (the loop feeds whatever a read returned).
TEST(Http1, AnySplitOfAnyMutationParsesTheSameWay) {
  const std::vector<std::string> seeds = {
      "POST /api/v1/kbs/k/search?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 13\r\n\r\n"
      "{\"query\":\"a\"}",
      "POST /x HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nabcd\r\n0\r\n\r\n",
      "GET /api/v1/health HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
  };
  std::uint64_t state = 88172645463325252ull;
  auto next = [&state] {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  };
  const std::string alphabet("\r\n :;,-0123456789aAfF\t\x00\x7f/?%", 27);
  for (int round = 0; round < 3000; ++round) {
    std::string req = seeds[next() % seeds.size()];
    for (int m = 0, n = static_cast<int>(next() % 4); m < n; ++m) {
      const std::size_t at = next() % req.size();
      switch (next() % 3) {
        case 0:
          req[at] = alphabet[next() % alphabet.size()];
          break;
        case 1:
          req.insert(at, 1, alphabet[next() % alphabet.size()]);
          break;
        default:
          req.erase(at, 1);
          break;
      }
    }
    std::string rest_whole, rest_split;
    auto whole = parse(req, 1 << 20, {}, &rest_whole);
    auto split = parse(req, 1 + next() % 5, {}, &rest_split);
    ASSERT_EQ(whole.done(), split.done()) << req;
    ASSERT_EQ(whole.failed(), split.failed()) << req;
    if (whole.failed()) {
      EXPECT_EQ(whole.error().status, split.error().status) << req;
    }
    if (whole.done()) {
      EXPECT_EQ(whole.request().body, split.request().body) << req;
      EXPECT_EQ(whole.request().path, split.request().path) << req;
      EXPECT_EQ(rest_whole, rest_split) << req;
    }
  }
}

}  // namespace
}  // namespace quarry::testing
