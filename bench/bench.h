// quarry-bench: shared argument parsing and statistics for the benchmark programs.
#pragma once

#include <algorithm>
#include <chrono>
#include <filesystem>
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

// wrk's figures for one run (serve.cpp).
struct Wrk {
  double rps = 0, p50_ms = 0, p99_ms = 0;
  long long requests = 0, errors = 0;
};
// Runs `wrk --latency -t2 -cCONNECTIONS` for `seconds` with a Lua script (written to
// `work`/NAME.lua) that POSTs `bodies` round-robin as JSON to `path`.
Wrk run_wrk(const std::filesystem::path& work, const std::string& name, const std::string& url,
            const std::string& path, const std::vector<std::string>& bodies, int seconds,
            int connections);

int run_eval(const Args& args);
int run_loco(const Args& args);         // loco.cpp: eval --loco, hybrid by leave-one-collection-out
int run_perf(const Args& args);
int run_ann(const Args& args);          // ann.cpp: the embedded store vs its peers
int run_embed_speed(const Args& args);  // embed_speed.cpp: static/hash throughput
int run_lifecycle(const Args& args);    // lifecycle.cpp: reindex sweeps, latency, edit cost
int run_serve(const Args& args);        // serve.cpp: REST latency, wrk throughput, Chroma
int run_pump(const Args& args);         // pump.cpp: the embedding pump draining a SQLite table
int run_bert(const Args& args);         // bert.cpp: the bert encoder against the sgemm ceiling
int run_bert_text(const Args& args);    // bert.cpp: the bert provider on real text
int run_probe(const Args& args);        // probe.cpp: latency under idle, slow and busy peers

}  // namespace quarry::bench
