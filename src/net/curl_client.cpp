// The libcurl adapter of HttpClient. Easy handles are pooled (curl_easy_reset keeps their
// connection and TLS-session caches, so a batch of embedding calls reuses one connection);
// each request takes a handle exclusively, which is what makes the client thread-safe.
#include <arpa/inet.h>
#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cctype>
#include <mutex>

#include "net/http_client.h"
#include "quarry/error.h"

namespace quarry::net {
namespace {

void global_init_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
}

struct Sink {
  HttpResponse* resp;
  std::size_t limit;
  bool overflow = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t n, void* user) {
  auto* s = static_cast<Sink*>(user);
  std::size_t len = size * n;
  if (s->resp->body.size() + len > s->limit) {
    s->overflow = true;
    return 0;  // makes curl abort with CURLE_WRITE_ERROR
  }
  s->resp->body.append(data, len);
  return len;
}

std::size_t on_header(char* data, std::size_t size, std::size_t n, void* user) {
  auto* resp = static_cast<HttpResponse*>(user);
  std::string line(data, size * n);
  // A new status line (after a 100 Continue, say) starts a new header block.
  if (line.rfind("HTTP/", 0) == 0) {
    resp->headers.clear();
    return size * n;
  }
  auto colon = line.find(':');
  if (colon == std::string::npos) return size * n;
  std::string name = line.substr(0, colon);
  for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::string value = line.substr(colon + 1);
  auto not_space = [](unsigned char c) { return !std::isspace(c); };
  value.erase(value.begin(), std::find_if(value.begin(), value.end(), not_space));
  value.erase(std::find_if(value.rbegin(), value.rend(), not_space).base(), value.end());
  resp->headers[name] = value;
  return size * n;
}

// Last line of defence: every socket curl opens is checked against the guard, whatever name
// resolution happened (a pin that did not match, a happy-eyeballs fallback, a future option).
struct SocketCheck {
  bool allow_private = false;
  std::string refused;  // the address refused, if any
};

curl_socket_t open_checked_socket(void* user, curlsocktype, curl_sockaddr* a) {
  auto* check = static_cast<SocketCheck*>(user);
  char buf[INET6_ADDRSTRLEN] = {};
  const void* src = nullptr;
  if (a->family == AF_INET)
    src = &reinterpret_cast<const sockaddr_in*>(&a->addr)->sin_addr;
  else if (a->family == AF_INET6)
    src = &reinterpret_cast<const sockaddr_in6*>(&a->addr)->sin6_addr;
  if (!src || !inet_ntop(a->family, src, buf, sizeof buf) ||
      !address_permitted(buf, check->allow_private)) {
    check->refused = buf[0] ? buf : "(non-IP socket)";
    return CURL_SOCKET_BAD;
  }
  return ::socket(a->family, a->socktype, a->protocol);
}

struct SlistDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};
using Slist = std::unique_ptr<curl_slist, SlistDeleter>;

void append(Slist& list, const std::string& s) {
  curl_slist* next = curl_slist_append(list.get(), s.c_str());
  if (!next) throw Error(Code::internal, "out of memory building an HTTP request");
  (void)list.release();
  list.reset(next);
}

// Asks curl's own URL parser which host and port it will connect to, and refuses the request
// unless that is what the guard judged: a parser differential must not become a bypass.
void check_curl_agrees(const std::string& url, const Url& judged) {
  CURLU* u = curl_url();
  if (!u) throw Error(Code::internal, "out of memory parsing a URL");
  char* host = nullptr;
  char* port = nullptr;
  bool same = curl_url_set(u, CURLUPART_URL, url.c_str(), 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_HOST, &host, 0) == CURLUE_OK &&
              curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT) == CURLUE_OK;
  if (same) {
    std::string h = host;
    if (h.size() > 1 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
    for (auto& c : h) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    while (!h.empty() && h.back() == '.') h.pop_back();
    same = h == judged.host && std::string(port) == std::to_string(judged.port);
  }
  curl_free(host);
  curl_free(port);
  curl_url_cleanup(u);
  if (!same)
    throw Error(Code::blocked_address,
                "the URL is ambiguous (its host reads differently to different parsers); "
                "write it plainly as scheme://host:port/path",
                {{"host", judged.host}});
}

class CurlClient final : public HttpClient {
 public:
  CurlClient(CurlClientOptions opts, SsrfGuard guard)
      : opts_(std::move(opts)), guard_(std::move(guard)) {
    global_init_once();
  }
  ~CurlClient() override {
    for (CURL* h : pool_) curl_easy_cleanup(h);
  }

  HttpResponse send(const HttpRequest& req) override {
    // The guard runs before any socket is opened; its refusal is never retried.
    GuardedTarget target = guard_.check(req.url, req.allow_private);
    check_curl_agrees(req.url, target.url);
    CURL* h = take();
    try {
      HttpResponse r = perform(h, req, target);
      give_back(h);
      return r;
    } catch (...) {
      curl_easy_cleanup(h);  // a handle in an unknown state is not pooled
      throw;
    }
  }

 private:
  CURL* take() {
    {
      std::lock_guard<std::mutex> lk(mu_);
      if (!pool_.empty()) {
        CURL* h = pool_.back();
        pool_.pop_back();
        return h;
      }
    }
    CURL* h = curl_easy_init();
    if (!h) throw Error(Code::internal, "curl_easy_init failed");
    return h;
  }

  void give_back(CURL* h) {
    curl_easy_reset(h);
    std::lock_guard<std::mutex> lk(mu_);
    if (pool_.size() < 16) {
      pool_.push_back(h);
      return;
    }
    curl_easy_cleanup(h);
  }

  HttpResponse perform(CURL* h, const HttpRequest& req, const GuardedTarget& target) {
    HttpResponse resp;
    Sink sink{&resp, opts_.max_response_bytes};
    char errbuf[CURL_ERROR_SIZE] = {};

    // Pin the approved addresses: curl connects to exactly these, whatever DNS says now.
    Slist resolve;
    if (!target.url.host_is_ip) {
      std::string pin = target.url.host + ":" + std::to_string(target.url.port) + ":";
      for (std::size_t i = 0; i < target.addresses.size(); ++i) {
        const auto& a = target.addresses[i];
        pin += (i ? "," : "") + (a.find(':') != std::string::npos ? "[" + a + "]" : a);
      }
      append(resolve, pin);
    }
    Slist headers;
    append(headers, "Expect:");  // no 100-continue round trip on large POST bodies
    for (const auto& [k, v] : req.headers) append(headers, k + ": " + v);

    curl_easy_setopt(h, CURLOPT_URL, req.url.c_str());
    curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);  // required for multi-threaded use
    curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(h, CURLOPT_PROXY, opts_.proxy.c_str());  // "" disables env proxies
    if (resolve) curl_easy_setopt(h, CURLOPT_RESOLVE, resolve.get());
    SocketCheck socket_check{req.allow_private, {}};
    if (opts_.proxy.empty()) {  // through a proxy the socket goes to the operator's proxy
      curl_easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, open_checked_socket);
      curl_easy_setopt(h, CURLOPT_OPENSOCKETDATA, &socket_check);
    }
    curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
    curl_easy_setopt(h, CURLOPT_USERAGENT, opts_.user_agent.c_str());
    curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever curl can decode
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, static_cast<long>(std::max(1, req.timeout_ms)));
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS,
                     static_cast<long>(std::max(1, req.connect_timeout_ms)));
    curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf);
    curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
    curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(h, CURLOPT_HEADERDATA, &resp);
    if (req.method == "POST") {
      curl_easy_setopt(h, CURLOPT_POST, 1L);
      curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
      curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
    } else if (req.method == "GET") {
      curl_easy_setopt(h, CURLOPT_HTTPGET, 1L);
    } else if (req.method == "DELETE" || req.method == "PUT") {  // remote stores (Qdrant: PUT)
      curl_easy_setopt(h, CURLOPT_CUSTOMREQUEST, req.method.c_str());
      if (!req.body.empty()) {
        curl_easy_setopt(h, CURLOPT_POSTFIELDS, req.body.data());
        curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(req.body.size()));
      }
    } else {
      throw Error(Code::invalid_argument, "HTTP method " + req.method + " is not supported");
    }

    CURLcode rc = curl_easy_perform(h);
    if (rc != CURLE_OK) {
      std::string where = target.url.host + ":" + std::to_string(target.url.port);
      std::string what = errbuf[0] ? errbuf : curl_easy_strerror(rc);
      if (!socket_check.refused.empty())
        throw Error(Code::blocked_address,
                    "outbound connection to " + socket_check.refused + " for " + target.url.host +
                        " refused by the SSRF guard",
                    {{"host", target.url.host}, {"address", socket_check.refused}});
      if (sink.overflow)
        throw Error(Code::upstream_error,
                    where + " sent a response larger than " +
                        std::to_string(opts_.max_response_bytes) + " bytes; refused",
                    {{"host", target.url.host}});
      if (rc == CURLE_OPERATION_TIMEDOUT)
        throw Error(Code::timeout,
                    "request to " + where + " timed out (" + what +
                        "); raise timeout_ms or check the endpoint",
                    {{"host", target.url.host}, {"transport", "1"}});
      throw Error(Code::engine_unavailable,
                  "cannot reach " + where + ": " + what +
                      "; check base_url and that the "
                      "endpoint is running",
                  {{"host", target.url.host}, {"transport", "1"}});
    }
    curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &resp.status);
    return resp;
  }

  CurlClientOptions opts_;
  SsrfGuard guard_;
  std::mutex mu_;
  std::vector<CURL*> pool_;
};

}  // namespace

std::shared_ptr<HttpClient> make_curl_client(CurlClientOptions opts, SsrfGuard guard) {
  return std::make_shared<CurlClient>(std::move(opts), std::move(guard));
}

}  // namespace quarry::net
