// The facade's answer to search's VectorPort (search/retrieval.h): the serving revision's
// embedder, store and scope of one KB, resolved by the vector lifecycle on first use.
#pragma once

#include <optional>
#include <string>

#include "lifecycle/vectors.h"
#include "search/retrieval.h"

namespace quarry::engine {

class ServingVectors final : public search::VectorPort {
 public:
  ServingVectors(lifecycle::Vectors& vectors, const catalog::KbRef& kb, const KbConfig& config)
      : vectors_(vectors), kb_(kb), config_(config) {}

  const search::ServingVectors& serving() override {
    if (!serving_) {
      // During a blue-green build this is the previous revision's embedder and vectors.
      lifecycle::KbVectors& v = vectors_.serving(kb_, config_);
      search::ServingVectors s;
      s.source = {v.provider.get(), v.store, &v.scope};
      s.has_embedder = v.provider != nullptr;
      s.unavailable = v.unavailable;
      s.blocked = v.unavailable_code == Code::blocked_address;
      serving_ = std::move(s);
    }
    return *serving_;
  }

  std::string status(const core::Filter& filter) override {
    return vectors_.kb_status(kb_, config_, filter);
  }

 private:
  lifecycle::Vectors& vectors_;
  const catalog::KbRef& kb_;
  const KbConfig& config_;
  std::optional<search::ServingVectors> serving_;
};

}  // namespace quarry::engine
