// HTTP/1.1 message syntax for `quarry serve` (RFC 9110/9112), free of sockets: an incremental
// request parser that a readiness-based loop (http_loop.h) feeds whatever bytes arrived, the
// response serializer, and the multipart/form-data and query-string decoders.
//
// The parser is strict where leniency lets two parties disagree on where a message ends
// (request smuggling, desync): one Host, at most one Content-Length of digits only, no
// Content-Length beside Transfer-Encoding, only `chunked` as a transfer coding, no obsolete line
// folding, CRLF line ends. A parse error is final for the connection: the loop answers it and
// closes, so no byte after an error is ever read as a request.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace quarry::server::http {

struct Header {
  std::string name;  // lower case
  std::string value;
};

struct Request {
  std::string method;
  std::string target;  // as sent: path and query
  std::string path;    // percent-decoded, without the query
  std::string query;   // raw, after '?'
  int minor_version = 1;
  std::vector<Header> headers;
  std::string body;  // de-chunked
  bool keep_alive = true;

  // The first value of a header (name in lower case), or null.
  const std::string* header(std::string_view name) const;
  bool has_header(std::string_view name) const { return header(name) != nullptr; }
};

struct Response {
  int status = 200;
  std::string content_type = "application/json";
  std::vector<Header> headers;  // besides Content-Type, Content-Length and Connection
  std::string body;
  bool close = false;  // close the connection after this response
};

struct Limits {
  std::size_t max_request_line = 64 * 1024;  // 414 beyond (GET filters ride in the query)
  std::size_t max_head = 96 * 1024;          // request line + headers; 431 beyond
  std::size_t max_headers = 100;             // 431 beyond
  std::size_t max_body = 64u << 20;          // 413 beyond
};

// A malformed or refused request: the status to answer with and what to tell the client.
struct ParseError {
  int status = 400;
  std::string message;
};

class RequestParser {
 public:
  explicit RequestParser(Limits limits = {}) : limits_(limits) {}

  // Consumes bytes of the current request from `data` and returns how many it used. It stops
  // at the end of the request (done(): bytes left over belong to the next request) or at an
  // error (failed()); either is final until reset().
  std::size_t feed(std::string_view data);

  bool started() const { return state_ != State::start; }  // a byte of this request came
  bool head_complete() const { return state_ > State::head; }
  bool done() const { return state_ == State::done; }
  bool failed() const { return state_ == State::error; }
  const ParseError& error() const { return error_; }
  // After head_complete(): the client sent `Expect: 100-continue` and waits for it.
  bool expects_continue() const { return expect_continue_; }
  // The request parsed so far (complete when done()).
  Request& request() { return req_; }

  void reset();

 private:
  enum class State { start, head, body, chunk_size, chunk_data, chunk_end, trailers, done, error };
  std::size_t fail(int status, std::string message);
  bool parse_head();  // on head_ ending in CRLF CRLF; false after fail()
  std::size_t feed_head(std::string_view data);
  std::size_t feed_chunked(std::string_view data);
  std::size_t take_body(std::string_view data);  // up to remaining_ bytes into the body

  Limits limits_;
  State state_ = State::start;
  ParseError error_;
  Request req_;
  std::string head_;             // request line and headers while they arrive (also chunk lines)
  std::uint64_t remaining_ = 0;  // body bytes (or bytes of the current chunk) still to come
  bool expect_continue_ = false;
};

// The response as bytes: status line, headers (Content-Length always; `Connection: close` when
// the connection ends after it), and the body unless `head_only`.
std::string serialize(const Response& r, bool keep_alive, bool head_only);

const char* reason_phrase(int status);

// Percent-decoding; `plus_is_space` for query strings. Malformed escapes are kept as they are.
std::string percent_decode(std::string_view s, bool plus_is_space);
// "a=1&b=x%20y&a=2" -> {a:1, a:2, b:"x y"}.
std::multimap<std::string, std::string> parse_query(std::string_view query);

struct Part {
  std::string name;
  std::string filename;
  bool has_filename = false;  // a `filename` parameter was present (possibly empty): a file
  std::string content_type;
  std::string content;
};

constexpr std::size_t kMaxMultipartParts = 1024;

// Parses a multipart/form-data body. Throws quarry::Error(invalid_argument) naming what is
// wrong: no or over-long boundary (RFC 2046 allows 1 to 70 characters), a missing closing
// delimiter, a part without a Content-Disposition name, more than `max_parts` parts.
std::vector<Part> parse_multipart(std::string_view body, std::string_view content_type,
                                  std::size_t max_parts = kMaxMultipartParts);

// True for a media type of `type` (case-insensitive, parameters ignored): "application/json".
bool media_type_is(std::string_view content_type, std::string_view type);

}  // namespace quarry::server::http
