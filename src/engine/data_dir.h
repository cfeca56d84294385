// How the facade opens a data directory, shared by Engine and Pump.
#pragma once

#include <string>

namespace quarry::engine {

// Creates the data directory if needed and returns its canonical path (how every Engine and
// Pump names it, so they open the same catalog). invalid_argument when empty, io_error when it
// cannot be created.
std::string open_data_dir(const std::string& dir);

}  // namespace quarry::engine
