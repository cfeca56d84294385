#include "beir.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <stdexcept>

namespace quarry::bench {
using nlohmann::json;

namespace {

std::vector<json> read_jsonl(const std::string& path) {
  std::ifstream f(path);
  if (!f) throw std::runtime_error("cannot read " + path);
  std::vector<json> out;
  for (std::string line; std::getline(f, line);)
    if (!line.empty()) out.push_back(json::parse(line));
  return out;
}

}  // namespace

Dataset load_dataset(const std::string& dir, const std::string& split) {
  Dataset ds;
  ds.name = dir.substr(dir.find_last_of('/') + 1);
  for (const auto& j : read_jsonl(dir + "/corpus.jsonl"))
    ds.corpus.push_back(
        {j.at("_id").get<std::string>(), j.value("title", ""), j.value("text", "")});
  std::string suffix = split.empty() ? "" : "_" + split;
  std::ifstream q(dir + "/qrels" + suffix + ".tsv");
  if (!q) throw std::runtime_error("cannot read qrels in " + dir);
  std::string line;
  std::getline(q, line);  // header
  while (std::getline(q, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream ss(line);
    std::string qid, did;
    int grade = 0;
    if (ss >> qid >> did >> grade && grade > 0) ds.qrels[qid][did] = grade;
  }
  for (const auto& j : read_jsonl(dir + "/queries" + suffix + ".jsonl")) {
    std::string id = j.at("_id").is_string() ? j.at("_id").get<std::string>() : j.at("_id").dump();
    if (ds.qrels.count(id)) ds.queries.push_back({id, j.value("text", "")});
  }
  return ds;
}

Metrics evaluate(const Dataset& ds, const std::map<std::string, std::vector<std::string>>& ranked) {
  Metrics m;
  for (const auto& q : ds.queries) {
    const auto& rel = ds.qrels.at(q.id);
    auto it = ranked.find(q.id);
    static const std::vector<std::string> kEmpty;
    const auto& list = it == ranked.end() ? kEmpty : it->second;
    double dcg = 0, idcg = 0, rr = 0;
    int found = 0;
    for (std::size_t i = 0; i < list.size() && i < 100; ++i) {
      auto r = rel.find(list[i]);
      if (r == rel.end()) continue;
      ++found;
      if (i < 10) {
        dcg += r->second / std::log2(static_cast<double>(i) + 2);
        if (rr == 0) rr = 1.0 / static_cast<double>(i + 1);
      }
    }
    std::vector<int> grades;
    for (const auto& [d, g] : rel) grades.push_back(g);
    std::sort(grades.rbegin(), grades.rend());
    for (std::size_t i = 0; i < grades.size() && i < 10; ++i)
      idcg += grades[i] / std::log2(static_cast<double>(i) + 2);
    m.ndcg10 += idcg > 0 ? dcg / idcg : 0;
    m.recall100 += static_cast<double>(found) / static_cast<double>(rel.size());
    m.mrr10 += rr;
    ++m.queries;
  }
  if (m.queries) {
    m.ndcg10 /= m.queries;
    m.recall100 /= m.queries;
    m.mrr10 /= m.queries;
  }
  return m;
}

}  // namespace quarry::bench
