#include "net/ssrf_guard.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>

#include "quarry/error.h"

namespace quarry::net {
namespace {

std::string lower(std::string s) {
  for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

bool in_v4(std::uint32_t a, std::uint32_t net, int bits) {
  const std::uint32_t mask = bits == 0 ? 0 : ~std::uint32_t{0} << (32 - bits);
  return (a & mask) == (net & mask);
}

constexpr std::uint32_t v4(unsigned a, unsigned b, unsigned c, unsigned d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

AddressClass classify_v4(std::uint32_t a) {
  // Exact metadata addresses first: they sit inside ranges that are otherwise "only private".
  if (a == v4(169, 254, 169, 254) || a == v4(100, 100, 100, 200)) return AddressClass::metadata;
  if (in_v4(a, v4(0, 0, 0, 0), 8)) return AddressClass::unspecified;
  if (in_v4(a, v4(127, 0, 0, 0), 8)) return AddressClass::loopback;
  if (in_v4(a, v4(169, 254, 0, 0), 16)) return AddressClass::link_local;
  if (in_v4(a, v4(10, 0, 0, 0), 8) || in_v4(a, v4(172, 16, 0, 0), 12) ||
      in_v4(a, v4(192, 168, 0, 0), 16) || in_v4(a, v4(100, 64, 0, 0), 10))
    return AddressClass::private_net;
  if (in_v4(a, v4(224, 0, 0, 0), 4) || a == v4(255, 255, 255, 255)) return AddressClass::multicast;
  // 240/4 is reserved: nothing legitimate lives there, so it is refused like 0.0.0.0.
  if (in_v4(a, v4(240, 0, 0, 0), 4)) return AddressClass::unspecified;
  return AddressClass::global;
}

std::uint32_t v4_from_bytes(const unsigned char* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) |
         std::uint32_t{p[3]};
}

AddressClass classify_v6(const unsigned char* b) {
  // fd00:ec2::254 (AWS IMDS over IPv6).
  static const std::array<unsigned char, 16> ec2 = {0xfd, 0x00, 0x0e, 0xc2, 0, 0, 0,    0,
                                                    0,    0,    0,    0,    0, 0, 0x02, 0x54};
  if (std::memcmp(b, ec2.data(), 16) == 0) return AddressClass::metadata;
  bool zero12 = std::all_of(b, b + 12, [](unsigned char c) { return c == 0; });
  if (zero12) {
    std::uint32_t tail = v4_from_bytes(b + 12);
    if (tail == 0) return AddressClass::unspecified;
    if (tail == 1) return AddressClass::loopback;
    return classify_v4(tail);  // deprecated IPv4-compatible form: judge the IPv4 inside
  }
  bool mapped = std::all_of(b, b + 10, [](unsigned char c) { return c == 0; }) && b[10] == 0xff &&
                b[11] == 0xff;
  // NAT64 (64:ff9b::/96) reaches the IPv4 address it embeds, so it is judged as that address.
  static const unsigned char nat64[12] = {0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0};
  if (mapped || std::memcmp(b, nat64, 12) == 0) return classify_v4(v4_from_bytes(b + 12));
  if (b[0] == 0xff) return AddressClass::multicast;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80) return AddressClass::link_local;
  if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0) return AddressClass::private_net;  // site-local
  if ((b[0] & 0xfe) == 0xfc) return AddressClass::private_net;
  return AddressClass::global;
}

bool permitted(AddressClass c, bool allow_private) {
  if (c == AddressClass::global) return true;
  if (c == AddressClass::private_net || c == AddressClass::loopback) return allow_private;
  return false;
}

std::string refusal(const std::string& host, const std::string& ip, AddressClass c) {
  std::string why = c == AddressClass::private_net || c == AddressClass::loopback
                        ? "private and loopback addresses are allowed only when the endpoint "
                          "sets allow_private: true"
                        : "link-local, cloud-metadata, unspecified and multicast addresses are "
                          "always refused; use another endpoint";
  std::string where = host == ip ? ip : host + " (" + ip + ")";
  return "outbound request to " + where + " refused: " + address_class_name(c) + " address; " + why;
}

[[noreturn]] void refuse(const std::string& host, const std::string& ip, AddressClass c) {
  throw Error(Code::blocked_address, refusal(host, ip, c),
              {{"host", host}, {"address", ip}, {"class", address_class_name(c)}});
}

bool blocked_name(const std::string& host) {
  return host == "metadata.google.internal" || host == "metadata.goog" || host == "metadata";
}

bool is_localhost_name(const std::string& host) {
  return host == "localhost" ||
         (host.size() > 10 && host.compare(host.size() - 10, 10, ".localhost") == 0);
}

}  // namespace

const char* address_class_name(AddressClass c) {
  switch (c) {
    case AddressClass::global:
      return "public";
    case AddressClass::private_net:
      return "private";
    case AddressClass::loopback:
      return "loopback";
    case AddressClass::link_local:
      return "link-local";
    case AddressClass::metadata:
      return "cloud-metadata";
    case AddressClass::unspecified:
      return "unspecified";
    case AddressClass::multicast:
      return "multicast";
    case AddressClass::invalid:
      return "invalid";
  }
  return "invalid";
}

bool address_permitted(const std::string& ip, bool allow_private) {
  return permitted(classify_address(ip), allow_private);
}

AddressClass classify_address(const std::string& ip) {
  in_addr a4{};
  if (inet_pton(AF_INET, ip.c_str(), &a4) == 1) return classify_v4(ntohl(a4.s_addr));
  in6_addr a6{};
  if (inet_pton(AF_INET6, ip.c_str(), &a6) == 1) return classify_v6(a6.s6_addr);
  return AddressClass::invalid;
}

Url parse_url(const std::string& url) {
  auto bad = [&](const std::string& why) {
    return Error(Code::invalid_argument, "malformed URL '" + url + "': " + why, {{"url", url}});
  };
  for (char c : url)
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
      throw bad("spaces and control characters are not allowed");
  auto sep = url.find("://");
  if (sep == std::string::npos) throw bad("expected http://host/... or https://host/...");
  Url u;
  u.scheme = lower(url.substr(0, sep));
  if (u.scheme != "http" && u.scheme != "https")
    throw Error(Code::blocked_address,
                "scheme '" + u.scheme + "' refused: only http and https URLs are fetched",
                {{"url", url}});
  auto rest = url.substr(sep + 3);
  auto path_at = rest.find_first_of("/?#");
  std::string authority = rest.substr(0, path_at);
  u.path = path_at == std::string::npos ? "/" : rest.substr(path_at);
  if (!u.path.empty() && u.path[0] != '/') u.path = "/" + u.path;
  if (auto hash = u.path.find('#'); hash != std::string::npos) u.path.resize(hash);
  // Credentials in a URL end up in logs and error messages; keys belong in the secret store.
  if (authority.find('@') != std::string::npos)
    throw bad("credentials in the URL are not accepted; put the key in the secret store");
  std::string port_text;
  if (!authority.empty() && authority[0] == '[') {
    auto close = authority.find(']');
    if (close == std::string::npos) throw bad("unclosed '[' in the host");
    u.host = lower(authority.substr(1, close - 1));
    auto after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after[0] != ':') throw bad("unexpected text after ']'");
      port_text = after.substr(1);
    }
  } else {
    auto colon = authority.rfind(':');
    u.host = lower(authority.substr(0, colon));
    if (colon != std::string::npos) port_text = authority.substr(colon + 1);
  }
  if (u.host.empty()) throw bad("no host");
  // A trailing dot names the same host under a different spelling, which DNS pinning and the
  // blocked-name list would have to match exactly: refuse it rather than get it subtly wrong.
  if (u.host.back() == '.') throw bad("drop the trailing '.' from the host");
  // Only plain host characters: anything else ('\\', '%', spaces) is where URL parsers
  // disagree, and the guard must judge the host curl will actually connect to.
  bool bracketed = !authority.empty() && authority[0] == '[';
  for (char c : u.host) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
              (bracketed && (c == ':' || c == '%'));
    if (!ok) throw bad("unexpected character in the host");
  }
  u.port = u.scheme == "https" ? 443 : 80;
  if (!port_text.empty()) {
    if (port_text.size() > 5 || !std::all_of(port_text.begin(), port_text.end(), ::isdigit))
      throw bad("port must be a number");
    u.port = std::stoi(port_text);
    if (u.port < 1 || u.port > 65535) throw bad("port out of range");
  }
  u.host_is_ip = classify_address(u.host) != AddressClass::invalid;
  return u;
}

std::vector<std::string> system_resolve(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &res);
  if (rc != 0)
    throw Error(Code::engine_unavailable,
                "cannot resolve host " + host + ": " + gai_strerror(rc) +
                    "; check base_url and the network",
                {{"host", host}});
  std::vector<std::string> out;
  for (auto* p = res; p; p = p->ai_next) {
    char buf[INET6_ADDRSTRLEN] = {};
    const void* src =
        p->ai_family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<sockaddr_in*>(p->ai_addr)->sin_addr)
            : static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(p->ai_addr)->sin6_addr);
    if ((p->ai_family == AF_INET || p->ai_family == AF_INET6) &&
        inet_ntop(p->ai_family, src, buf, sizeof buf))
      if (std::find(out.begin(), out.end(), buf) == out.end()) out.emplace_back(buf);
  }
  freeaddrinfo(res);
  return out;
}

GuardedTarget SsrfGuard::check(const std::string& url, bool allow_private) const {
  GuardedTarget t{parse_url(url), {}};
  const auto& host = t.url.host;
  if (blocked_name(host)) refuse(host, host, AddressClass::metadata);
  t.addresses = t.url.host_is_ip ? std::vector<std::string>{host} : resolver_(host, t.url.port);
  if (t.addresses.empty())
    throw Error(Code::engine_unavailable, "host " + host + " has no address; check base_url",
                {{"host", host}});
  for (const auto& ip : t.addresses) {
    auto c = classify_address(ip);
    if (!permitted(c, allow_private)) refuse(host, ip, c);
  }
  return t;
}

std::optional<StaticRefusal> SsrfGuard::refusal_static(const std::string& url, bool allow_private) {
  Url u = parse_url(url);
  AddressClass c = AddressClass::invalid;
  if (blocked_name(u.host)) {
    c = AddressClass::metadata;
  } else if (u.host_is_ip) {
    c = classify_address(u.host);
  } else if (is_localhost_name(u.host)) {
    c = AddressClass::loopback;
  } else {
    // inet_aton also accepts the odd numeric spellings ("2130706433", "0x7f.1") that
    // getaddrinfo would turn into an address without any DNS.
    in_addr a{};
    if (inet_aton(u.host.c_str(), &a) != 0) c = classify_v4(ntohl(a.s_addr));
  }
  if (c == AddressClass::invalid || permitted(c, allow_private)) return std::nullopt;
  return StaticRefusal{u.host, c, refusal(u.host, u.host, c)};
}

std::string SsrfGuard::check_static(const std::string& url, bool allow_private) {
  try {
    auto r = refusal_static(url, allow_private);
    return r ? r->message : "";
  } catch (const Error& e) {
    return e.message();
  }
}

}  // namespace quarry::net
