// Placeholder: `quarry secret ...` is being written (owner: the net work package).
#include "cli/commands.h"

namespace quarry::cli {
void add_secret_commands(CLI::App&, Globals&, int&) {}
}  // namespace quarry::cli
