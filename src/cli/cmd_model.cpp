// Placeholder: `quarry model ...` is being written (owner: the embed work package).
#include "cli/commands.h"

namespace quarry::cli {
void add_model_commands(CLI::App&, Globals&, int&) {}
}  // namespace quarry::cli
