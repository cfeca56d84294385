// HTTP/1.1 request parsing and response serialization (http1.h).
#include "server/http1.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "quarry/error.h"

namespace quarry::server::http {

namespace {

char lower(char c) {
  return static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

// RFC 9110 tchar.
bool is_tchar(char c) {
  if (std::isalnum(static_cast<unsigned char>(c))) return true;
  return std::strchr("!#$%&'*+-.^_`|~", c) != nullptr && c != '\0';
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), is_tchar);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Comma-separated list members of a header value, trimmed, lower case.
std::vector<std::string> list_tokens(std::string_view v) {
  std::vector<std::string> out;
  while (true) {
    auto comma = v.find(',');
    std::string_view item = trim(v.substr(0, comma));
    if (!item.empty()) {
      std::string s(item);
      for (auto& c : s) c = lower(c);
      out.push_back(std::move(s));
    }
    if (comma == std::string_view::npos) break;
    v.remove_prefix(comma + 1);
  }
  return out;
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

constexpr std::size_t kMaxChunkLine = 4096;
constexpr std::size_t kMaxTrailers = 16 * 1024;

}  // namespace

const std::string* Request::header(std::string_view name) const {
  for (const auto& h : headers)
    if (h.name == name) return &h.value;
  return nullptr;
}

void RequestParser::reset() {
  state_ = State::start;
  error_ = {};
  req_ = {};
  head_.clear();
  if (head_.capacity() > limits_.max_head) head_.shrink_to_fit();
  remaining_ = 0;
  expect_continue_ = false;
}

std::size_t RequestParser::fail(int status, std::string message) {
  state_ = State::error;
  error_ = {status, std::move(message)};
  return 0;
}

std::size_t RequestParser::feed(std::string_view data) {
  std::size_t used = 0;
  while (used < data.size() && state_ != State::done && state_ != State::error) {
    std::string_view rest = data.substr(used);
    switch (state_) {
      case State::start:
        // RFC 9112 2.2: ignore empty lines before a request line.
        if (rest[0] == '\r' || rest[0] == '\n') {
          ++used;
          continue;
        }
        state_ = State::head;
        [[fallthrough]];
      case State::head:
        used += feed_head(rest);
        break;
      case State::body:
        used += take_body(rest);
        if (remaining_ == 0) state_ = State::done;
        break;
      default:
        used += feed_chunked(rest);
        break;
    }
  }
  return used;
}

std::size_t RequestParser::take_body(std::string_view data) {
  const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(remaining_, data.size()));
  req_.body.append(data.data(), n);
  remaining_ -= n;
  return n;
}

std::size_t RequestParser::feed_head(std::string_view data) {
  const std::size_t before = head_.size();
  const std::size_t room = limits_.max_head + 4 - std::min(before, limits_.max_head + 4);
  head_.append(data.data(), std::min(room, data.size()));
  const std::size_t from = before >= 3 ? before - 3 : 0;
  const auto end = head_.find("\r\n\r\n", from);
  if (end == std::string::npos) {
    const auto line_end = head_.find("\r\n");
    if ((line_end == std::string::npos ? head_.size() : line_end) > limits_.max_request_line)
      return fail(414, "the request line is longer than " +
                           std::to_string(limits_.max_request_line) + " bytes");
    if (head_.size() > limits_.max_head)
      return fail(431, "the request headers are larger than " + std::to_string(limits_.max_head) +
                           " bytes");
    return head_.size() - before;
  }
  const std::size_t used = end + 4 - before;
  head_.resize(end + 2);  // keep the last header's CRLF
  parse_head();           // on failure the state is `error`: nothing more is read
  return used;
}

bool RequestParser::parse_head() {
  std::string_view h = head_;
  // Request line: method SP request-target SP HTTP-version CRLF.
  const auto eol = h.find("\r\n");
  std::string_view line = h.substr(0, eol);
  if (line.size() > limits_.max_request_line)
    return fail(414, "the request line is longer than " + std::to_string(limits_.max_request_line) +
                         " bytes"),
           false;
  const auto sp1 = line.find(' ');
  const auto sp2 = sp1 == std::string_view::npos ? sp1 : line.find(' ', sp1 + 1);
  if (sp2 == std::string_view::npos || line.find(' ', sp2 + 1) != std::string_view::npos)
    return fail(400, "malformed request line"), false;
  std::string_view method = line.substr(0, sp1);
  std::string_view target = line.substr(sp1 + 1, sp2 - sp1 - 1);
  std::string_view version = line.substr(sp2 + 1);
  if (!is_token(method)) return fail(400, "malformed request method"), false;
  if (version == "HTTP/1.1")
    req_.minor_version = 1;
  else if (version == "HTTP/1.0")
    req_.minor_version = 0;
  else if (version.substr(0, 5) == "HTTP/")
    return fail(505, "HTTP version not supported (use HTTP/1.1)"), false;
  else
    return fail(400, "malformed request line"), false;
  if (target.empty() || (target[0] != '/' && !(target == "*" && method == "OPTIONS")))
    return fail(400, "the request target must be a path starting with '/'"), false;
  for (char c : target)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      return fail(400, "the request target holds a control character or space"), false;
  req_.method = std::string(method);
  req_.target = std::string(target);
  const auto q = target.find('?');
  req_.path = percent_decode(target.substr(0, q), false);
  if (q != std::string_view::npos) req_.query = std::string(target.substr(q + 1));

  // Header fields.
  std::string_view rest = h.substr(eol + 2);
  while (!rest.empty()) {
    const auto e = rest.find("\r\n");
    std::string_view field = rest.substr(0, e);
    rest.remove_prefix(e + 2);
    if (field.empty()) continue;
    if (field[0] == ' ' || field[0] == '\t')
      return fail(400, "obsolete header line folding is not accepted"), false;
    const auto colon = field.find(':');
    if (colon == std::string_view::npos) return fail(400, "malformed header line"), false;
    std::string_view name = field.substr(0, colon);
    if (!is_token(name))  // also refuses whitespace before the colon (RFC 9112 5.1)
      return fail(400, "malformed header name"), false;
    std::string_view value = trim(field.substr(colon + 1));
    for (char c : value)
      if ((static_cast<unsigned char>(c) < 0x20 && c != '\t') || c == 0x7f)
        return fail(400, "a header value holds a control character"), false;
    if (req_.headers.size() >= limits_.max_headers)
      return fail(431, "more than " + std::to_string(limits_.max_headers) + " header fields"),
             false;
    Header hd;
    hd.name.resize(name.size());
    std::transform(name.begin(), name.end(), hd.name.begin(), lower);
    hd.value = std::string(value);
    req_.headers.push_back(std::move(hd));
  }

  // Host: exactly one in HTTP/1.1 (RFC 9112 3.2), at most one in 1.0.
  std::size_t hosts = 0, lengths = 0, encodings = 0;
  const std::string* length = nullptr;
  std::string coding;
  bool close = false, keep_alive = false;
  for (const auto& hd : req_.headers) {
    if (hd.name == "host") {
      ++hosts;
    } else if (hd.name == "content-length") {
      ++lengths;
      length = &hd.value;
    } else if (hd.name == "transfer-encoding") {
      ++encodings;
      for (auto& t : list_tokens(hd.value)) coding += (coding.empty() ? "" : ",") + t;
    } else if (hd.name == "connection") {
      for (const auto& t : list_tokens(hd.value)) {
        if (t == "close") close = true;
        if (t == "keep-alive") keep_alive = true;
      }
    } else if (hd.name == "expect") {
      if (!iequals(hd.value, "100-continue"))
        return fail(417, "unsupported Expect header (only 100-continue)"), false;
      expect_continue_ = req_.minor_version == 1;
    }
  }
  if (hosts > 1) return fail(400, "more than one Host header"), false;
  if (hosts == 0 && req_.minor_version == 1)
    return fail(400, "an HTTP/1.1 request needs a Host header"), false;
  if (req_.minor_version == 0) close = !keep_alive || close;
  req_.keep_alive = !close;

  if (encodings > 0) {
    if (lengths > 0)
      return fail(400, "a request may not carry both Content-Length and Transfer-Encoding"), false;
    if (req_.minor_version == 0)
      return fail(400, "Transfer-Encoding is not allowed in HTTP/1.0"), false;
    if (coding != "chunked")
      return fail(501, "unsupported Transfer-Encoding '" + coding + "' (only chunked)"), false;
    state_ = State::chunk_size;
    head_.clear();
    return true;
  }
  if (lengths > 1) return fail(400, "more than one Content-Length header"), false;
  std::uint64_t n = 0;
  if (length) {
    if (length->empty() || length->size() > 19 ||
        !std::all_of(length->begin(), length->end(), [](char c) { return c >= '0' && c <= '9'; }))
      return fail(400, "Content-Length must be a non-negative decimal number"), false;
    n = std::stoull(*length);
    if (n > limits_.max_body)
      return fail(413, "the request body is larger than this server accepts (" +
                           std::to_string(limits_.max_body) + " bytes; --max-body-mb)"),
             false;
  }
  head_.clear();
  remaining_ = n;
  state_ = n == 0 ? State::done : State::body;
  if (n == 0) expect_continue_ = false;
  return true;
}

// chunk = chunk-size [ chunk-ext ] CRLF chunk-data CRLF; last-chunk; trailer section; CRLF.
std::size_t RequestParser::feed_chunked(std::string_view data) {
  std::size_t used = 0;
  while (used < data.size() && state_ != State::done && state_ != State::error) {
    std::string_view rest = data.substr(used);
    if (state_ == State::chunk_data) {
      used += take_body(rest);
      if (remaining_ == 0) state_ = State::chunk_end;
      continue;
    }
    // Line-oriented states: chunk size line, the CRLF after data, trailer lines.
    const auto nl = rest.find('\n');
    const std::size_t take = nl == std::string_view::npos ? rest.size() : nl + 1;
    head_.append(rest.data(), take);
    used += take;
    const std::size_t cap = state_ == State::trailers ? kMaxTrailers : kMaxChunkLine;
    if (head_.size() > cap) return fail(400, "malformed chunked body (line too long)"), used;
    if (nl == std::string_view::npos) continue;
    if (head_.size() < 2 || head_[head_.size() - 2] != '\r')
      return fail(400, "malformed chunked body (bare LF)"), used;
    std::string_view line(head_.data(), head_.size() - 2);
    if (state_ == State::chunk_end) {
      if (!line.empty()) return fail(400, "malformed chunked body (no CRLF after data)"), used;
      head_.clear();
      state_ = State::chunk_size;
    } else if (state_ == State::chunk_size) {
      line = line.substr(0, line.find(';'));
      line = trim(line);
      if (line.empty() || line.size() > 15) return fail(400, "malformed chunk size"), used;
      std::uint64_t n = 0;
      for (char c : line) {
        const int v = hex_value(c);
        if (v < 0) return fail(400, "malformed chunk size"), used;
        n = n * 16 + static_cast<unsigned>(v);
      }
      if (req_.body.size() + n > limits_.max_body)
        return fail(413, "the request body is larger than this server accepts (" +
                             std::to_string(limits_.max_body) + " bytes; --max-body-mb)"),
               used;
      head_.clear();
      remaining_ = n;
      state_ = n == 0 ? State::trailers : State::chunk_data;
    } else if (line.empty() ||
               (head_.size() >= 4 && head_.compare(head_.size() - 4, 4, "\r\n\r\n") == 0)) {
      head_.clear();  // trailers end with an empty line; their fields are dropped
      state_ = State::done;
    }  // else: another trailer line, kept (bounded by kMaxTrailers) until the empty one
  }
  return used;
}

const char* reason_phrase(int status) {
  switch (status) {
    case 100:
      return "Continue";
    case 200:
      return "OK";
    case 201:
      return "Created";
    case 202:
      return "Accepted";
    case 204:
      return "No Content";
    case 304:
      return "Not Modified";
    case 400:
      return "Bad Request";
    case 401:
      return "Unauthorized";
    case 402:
      return "Payment Required";
    case 403:
      return "Forbidden";
    case 404:
      return "Not Found";
    case 405:
      return "Method Not Allowed";
    case 406:
      return "Not Acceptable";
    case 408:
      return "Request Timeout";
    case 409:
      return "Conflict";
    case 411:
      return "Length Required";
    case 413:
      return "Content Too Large";
    case 414:
      return "URI Too Long";
    case 415:
      return "Unsupported Media Type";
    case 417:
      return "Expectation Failed";
    case 422:
      return "Unprocessable Content";
    case 429:
      return "Too Many Requests";
    case 431:
      return "Request Header Fields Too Large";
    case 500:
      return "Internal Server Error";
    case 501:
      return "Not Implemented";
    case 502:
      return "Bad Gateway";
    case 503:
      return "Service Unavailable";
    case 504:
      return "Gateway Timeout";
    case 505:
      return "HTTP Version Not Supported";
    default:
      return "Status";
  }
}

std::string serialize(const Response& r, bool keep_alive, bool head_only) {
  std::string out;
  out.reserve(160 + r.body.size());
  out += "HTTP/1.1 ";
  out += std::to_string(r.status);
  out += ' ';
  out += reason_phrase(r.status);
  out += "\r\n";
  if (!r.content_type.empty()) out += "Content-Type: " + r.content_type + "\r\n";
  // A 304 has no body, and a Content-Length there would claim the representation's size.
  if (r.status != 304) out += "Content-Length: " + std::to_string(r.body.size()) + "\r\n";
  out += "X-Content-Type-Options: nosniff\r\n";
  for (const auto& h : r.headers) out += h.name + ": " + h.value + "\r\n";
  if (!keep_alive || r.close) out += "Connection: close\r\n";
  out += "\r\n";
  if (!head_only) out += r.body;
  return out;
}

std::string percent_decode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    const char c = s[i];
    if (c == '%' && i + 2 < s.size()) {
      const int hi = hex_value(s[i + 1]);
      const int lo = hex_value(s[i + 2]);
      if (hi >= 0 && lo >= 0) {
        out.push_back(static_cast<char>(hi * 16 + lo));
        i += 2;
        continue;
      }
    }
    out.push_back(plus_is_space && c == '+' ? ' ' : c);
  }
  return out;
}

std::multimap<std::string, std::string> parse_query(std::string_view query) {
  std::multimap<std::string, std::string> out;
  while (!query.empty()) {
    const auto amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    if (!pair.empty()) {
      const auto eq = pair.find('=');
      out.emplace(percent_decode(pair.substr(0, eq), true),
                  eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1), true));
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

bool media_type_is(std::string_view content_type, std::string_view type) {
  return iequals(trim(content_type.substr(0, content_type.find(';'))), type);
}

namespace {

Error bad_form(const std::string& message) {
  return Error(Code::invalid_argument, "malformed multipart/form-data: " + message);
}

// The value of parameter `name` in a header value like `form-data; name="a"; filename="b"`
// (or `multipart/form-data; boundary=x`). `found` tells an empty value from a missing one.
std::string header_param(std::string_view v, std::string_view name, bool& found) {
  found = false;
  std::size_t i = v.find(';');
  while (i != std::string_view::npos && i < v.size()) {
    ++i;
    while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
    const std::size_t key_start = i;
    while (i < v.size() && v[i] != '=' && v[i] != ';') ++i;
    std::string_view key = trim(v.substr(key_start, i - key_start));
    std::string value;
    if (i < v.size() && v[i] == '=') {
      ++i;
      while (i < v.size() && (v[i] == ' ' || v[i] == '\t')) ++i;
      if (i < v.size() && v[i] == '"') {
        for (++i; i < v.size() && v[i] != '"'; ++i) {
          if (v[i] == '\\' && i + 1 < v.size()) ++i;
          value.push_back(v[i]);
        }
        if (i < v.size()) ++i;  // closing quote
        while (i < v.size() && v[i] != ';') ++i;
      } else {
        const std::size_t start = i;
        while (i < v.size() && v[i] != ';') ++i;
        value = std::string(trim(v.substr(start, i - start)));
      }
    }
    if (iequals(key, name)) {
      found = true;
      return value;
    }
    if (i < v.size() && v[i] != ';') i = v.find(';', i);
  }
  return "";
}

// RFC 8187 ext-value: UTF-8''percent%20encoded.
std::string ext_value(std::string_view v) {
  const auto q = v.find("''");
  if (q == std::string_view::npos) return std::string(v);
  return percent_decode(v.substr(q + 2), false);
}

}  // namespace

std::vector<Part> parse_multipart(std::string_view body, std::string_view content_type,
                                  std::size_t max_parts) {
  bool found = false;
  const std::string boundary = header_param(content_type, "boundary", found);
  if (!found || boundary.empty()) throw bad_form("the Content-Type has no boundary parameter");
  if (boundary.size() > 70)
    throw bad_form("the boundary is " + std::to_string(boundary.size()) +
                   " characters long; RFC 2046 allows at most 70");
  const std::string dash = "--" + boundary;
  const std::string delimiter = "\r\n" + dash;
  // The first delimiter may come at the very start (no preamble) or after a preamble line.
  std::size_t pos;
  if (body.substr(0, dash.size()) == dash)
    pos = dash.size();
  else if (auto at = body.find(delimiter); at != std::string_view::npos)
    pos = at + delimiter.size();
  else
    throw bad_form("the body holds no boundary delimiter");

  std::vector<Part> parts;
  while (true) {
    if (body.substr(pos, 2) == "--") return parts;  // close delimiter
    while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;
    if (body.substr(pos, 2) != "\r\n") throw bad_form("a boundary line does not end with CRLF");
    pos += 2;
    const auto head_end = body.find("\r\n\r\n", pos);
    const auto next = body.find(delimiter, pos);
    if (next == std::string_view::npos) throw bad_form("the body ends before its closing boundary");
    if (parts.size() >= max_parts)
      throw Error(Code::invalid_argument,
                  "the form has more than " + std::to_string(max_parts) + " parts; send at most " +
                      std::to_string(max_parts) + " files per request",
                  {{"field", "file"}, {"limit", std::to_string(max_parts)}});
    Part p;
    std::string_view headers, content;
    if (body.substr(pos, 2) == "\r\n") {  // no part headers
      if (next < pos + 2) throw bad_form("a part's headers do not end with an empty line");
      content = body.substr(pos + 2, next - pos - 2);
    } else {
      if (head_end == std::string_view::npos || head_end > next)
        throw bad_form("a part's headers do not end with an empty line");
      headers = body.substr(pos, head_end + 2 - pos);
      content = body.substr(head_end + 4, next - head_end - 4);
    }
    bool disposition = false;
    while (!headers.empty()) {
      const auto e = headers.find("\r\n");
      std::string_view line = headers.substr(0, e);
      headers.remove_prefix(e == std::string_view::npos ? headers.size() : e + 2);
      const auto colon = line.find(':');
      if (colon == std::string_view::npos) throw bad_form("malformed part header");
      std::string_view name = trim(line.substr(0, colon));
      std::string_view value = trim(line.substr(colon + 1));
      if (iequals(name, "content-disposition")) {
        disposition = true;
        bool has = false;
        p.name = header_param(value, "name", has);
        bool star = false;
        std::string ext = header_param(value, "filename*", star);
        p.filename = header_param(value, "filename", p.has_filename);
        if (star) {
          p.filename = ext_value(ext);
          p.has_filename = true;
        }
      } else if (iequals(name, "content-type")) {
        p.content_type = std::string(value);
      }
    }
    if (!disposition || p.name.empty())
      throw bad_form("part " + std::to_string(parts.size() + 1) +
                     " has no Content-Disposition with a name");
    p.content = std::string(content);
    parts.push_back(std::move(p));
    pos = next + delimiter.size();
  }
}

}  // namespace quarry::server::http
