// The SSRF guard of SPEC §10: every outbound URL is parsed, its host resolved here (not by
// curl), and each resolved address classified. Link-local and cloud-metadata addresses are
// always refused; private and loopback ones only when the endpoint allows them. The caller then
// pins the addresses it was given (CURLOPT_RESOLVE) so a second DNS answer (rebinding) cannot
// send the request somewhere the guard never saw.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace quarry::net {

struct Url {
  std::string scheme;  // "http" | "https" (lower-case)
  std::string host;    // lower-case; IPv6 without brackets
  int port = 0;        // explicit or the scheme's default
  std::string path;    // from the first '/' on, query included ("/" when absent)
  bool host_is_ip = false;
};

// Parses an absolute http(s) URL. Throws Error(blocked_address) for another scheme and
// Error(invalid_argument) for a malformed URL or one carrying user:password@.
Url parse_url(const std::string& url);

enum class AddressClass {
  global,       // an ordinary public address
  private_net,  // 10/8, 172.16/12, 192.168/16, 100.64/10, fc00::/7
  loopback,     // 127/8, ::1
  link_local,   // 169.254/16, fe80::/10
  metadata,     // 169.254.169.254, fd00:ec2::254, 100.100.100.200
  unspecified,  // 0.0.0.0/8, ::
  multicast,    // 224/4, ff00::/8, 255.255.255.255
  invalid,      // not a numeric address
};
const char* address_class_name(AddressClass c);

// Classifies a numeric IPv4/IPv6 address (IPv4-mapped IPv6 is classified as its IPv4 address).
AddressClass classify_address(const std::string& ip);

// The guard's verdict on one numeric address (false for a non-address).
bool address_permitted(const std::string& ip, bool allow_private);

// Host name -> numeric addresses. Injectable so tests can make a name resolve anywhere.
using Resolver = std::function<std::vector<std::string>(const std::string& host, int port)>;
// getaddrinfo(); throws Error(engine_unavailable) when the name does not resolve.
std::vector<std::string> system_resolve(const std::string& host, int port);

// What the guard refuses without DNS: the URL's host, its class and the guard's message.
struct StaticRefusal {
  std::string host;
  AddressClass address_class = AddressClass::invalid;
  std::string message;
};

struct GuardedTarget {
  Url url;
  std::vector<std::string> addresses;  // every resolved address; all passed the guard
};

class SsrfGuard {
 public:
  explicit SsrfGuard(Resolver resolver = system_resolve) : resolver_(std::move(resolver)) {}

  // Parses, resolves and checks; throws Error(blocked_address) naming the host, the address
  // and what to do (e.g. "set allow_private: true") when any resolved address is refused.
  // One refused address refuses the whole host: curl could pick any of them.
  GuardedTarget check(const std::string& url, bool allow_private) const;

  // The same decision without DNS (for is_available(), which must not touch the network):
  // scheme, blocked names, numeric hosts and "localhost". Returns "" when nothing is refused.
  static std::string check_static(const std::string& url, bool allow_private);
  // The refusal check_static() describes, as values (nullopt when nothing is refused); throws
  // parse_url()'s errors for a URL that is not one.
  static std::optional<StaticRefusal> refusal_static(const std::string& url, bool allow_private);

 private:
  Resolver resolver_;
};

}  // namespace quarry::net
