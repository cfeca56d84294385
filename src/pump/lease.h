// Who holds a use case's run lease: "<host>:<pid>:<random>", so that a run whose process died on
// this machine is reclaimed at once instead of after 30 minutes.
#pragma once

#include <string>

namespace quarry::pump {

std::string new_lease_owner();
// True when `owner` names a process of this machine that no longer exists.
bool lease_owner_is_dead(const std::string& owner);

}  // namespace quarry::pump
