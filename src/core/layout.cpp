#include "core/layout.h"

#include <filesystem>

namespace quarry::core {

std::string Layout::staged_path(const std::string& final_path) const {
  const std::filesystem::path p(final_path);
  const std::string sub = p.parent_path().filename().string();
  const std::string kb = p.parent_path().parent_path().filename().string();
  return staging_dir() + "/" + kb + "." + sub + "." + p.filename().string() + ".tmp";
}

}  // namespace quarry::core
