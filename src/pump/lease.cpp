#include "pump/lease.h"

#include <signal.h>
#include <unistd.h>

#include <cerrno>

#include "core/util.h"

namespace quarry::pump {

namespace {

std::string host_name() {
  char buf[256] = {0};
  if (gethostname(buf, sizeof buf - 1) != 0) return "localhost";
  return buf;
}

}  // namespace

std::string new_lease_owner() {
  return host_name() + ":" + std::to_string(::getpid()) + ":" + core::random_hex(4);
}

bool lease_owner_is_dead(const std::string& owner) {
  const auto a = owner.find(':');
  const auto b = a == std::string::npos ? a : owner.find(':', a + 1);
  if (b == std::string::npos || owner.substr(0, a) != host_name()) return false;
  const std::string pid = owner.substr(a + 1, b - a - 1);
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) return false;
  return ::kill(static_cast<pid_t>(std::stol(pid)), 0) != 0 && errno == ESRCH;
}

}  // namespace quarry::pump
