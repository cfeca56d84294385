// The web UI's files (web/), compiled into the binary by cmake/embed_assets.cmake and served by
// `quarry serve` at / (index.html) and /ui/NAME, so the page needs nothing installed beside the
// binary and no network beyond the server (docs/ui.md).
#pragma once

#include <cstddef>
#include <vector>

namespace quarry::server {

struct UiAsset {
  const char* path;          // "/ui/app.js"
  const char* content_type;  // "text/javascript; charset=utf-8"
  const char* data;
  std::size_t size;
  const char* etag;  // quoted, from the file's SHA-256
};

const std::vector<UiAsset>& ui_assets();

}  // namespace quarry::server
