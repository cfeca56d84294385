// The token-counting port (quarry/tokenizer.h, SPEC §3) under its internal name. Both chunk
// (the approximation) and embed (the bert provider's WordPiece) implement it, and neither may
// see the other, so it is spelled in core.
#pragma once

#include "quarry/tokenizer.h"

namespace quarry::core {

using Tokenizer = quarry::Tokenizer;

}  // namespace quarry::core
