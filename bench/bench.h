// quarry-bench: shared argument parsing and statistics for the benchmark programs.
#pragma once

#include <algorithm>
#include <chrono>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

namespace quarry::bench {

// --key value / --flag arguments after the sub-command name.
struct Args {
  std::map<std::string, std::string> kv;
  std::string get(const std::string& k) const {
    auto it = kv.find(k);
    if (it == kv.end()) throw std::runtime_error("missing --" + k);
    return it->second;
  }
  std::string get(const std::string& k, const std::string& def) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : it->second;
  }
  double num(const std::string& k, double def) const {
    auto it = kv.find(k);
    return it == kv.end() ? def : std::stod(it->second);
  }
};

inline double elapsed_ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

inline double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  auto i = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

int run_eval(const Args& args);
int run_perf(const Args& args);
int run_ann(const Args& args);          // ann.cpp: the embedded store vs its peers
int run_embed_speed(const Args& args);  // embed_speed.cpp: static/hash throughput
int run_lifecycle(const Args& args);    // lifecycle.cpp: reindex sweeps, latency, edit cost
int run_serve(const Args& args);        // serve.cpp: REST latency, wrk throughput, Chroma
int run_pump(const Args& args);         // pump.cpp: the embedding pump draining a SQLite table
int run_bert(const Args& args);         // bert.cpp: the bert encoder against the sgemm ceiling
int run_bert_text(const Args& args);    // bert.cpp: the bert provider on real text

}  // namespace quarry::bench
