#include "store/remote_call.h"

#include "quarry/error.h"

namespace quarry::store {

net::RetryOutcome call_remote(const net::RetryPolicy& retry, net::HttpClient& http,
                              const net::HttpRequest& req, const RemoteTarget& t,
                              const std::string& what) {
  try {
    return retry.run([&] { return http.send(req); });
  } catch (const Error& e) {
    auto d = e.details();
    d["store"] = t.store;
    d["url"] = t.url;
    const std::string at = t.server + " at " + t.url;
    if (e.code() == Code::timeout)
      throw Error(Code::timeout,
                  at + " did not answer " + what + " within " + std::to_string(t.timeout_ms) +
                      " ms (" + e.message() + "); check the server, or raise the " + t.store +
                      " store's timeout_ms",
                  d);
    if (e.code() == Code::blocked_address)
      throw Error(e.code(),
                  at + ": " + e.message() + " (for a local server set the " + t.store +
                      " store's allow_private: true)",
                  d);
    if (d.count("transport"))
      throw Error(Code::upstream_error,
                  at + " is unreachable (" + e.message() + "); start the server or fix the " +
                      t.store + " store's url",
                  d);
    throw;
  }
}

}  // namespace quarry::store
