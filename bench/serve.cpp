// quarry-bench serve --dataset DIR [--chroma-url URL] [--wrk-seconds 10] [--connections 50]
//
// The REST server under load, in one run (docs/benchmarks.md, "Serving"):
//   1. latency: a 50-document KB (the first 50 documents of the dataset), one keep-alive
//      client, p50/p99 of keyword search (the dataset's queries) and grep (a word of each query);
//   2. throughput: `wrk` (50 connections, loopback) on keyword and vector search over the whole
//      dataset, one chunk per document (chunking none), static:glove-100d vectors;
//   3. the same vector queries (embedded by the same model here) against a Chroma server holding
//      the same document vectors (`--chroma-url`, started by bench/serve.sh), with the same wrk
//      settings. Quarry embeds each query itself inside the request; Chroma is sent the vector.
#include <httplib.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "beir.h"
#include "bench.h"
#include "embed/provider.h"
#include "quarry/engine.h"
#include "server/serve.h"

namespace quarry::bench {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct RunningServer {
  std::unique_ptr<server::HttpServer> srv;
  std::thread thread;
  RunningServer(const std::string& data, int threads) {
    server::ServeOptions o;
    o.port = 0;
    o.indexer = false;
    o.threads = threads;
    srv = server::HttpServer::bind(EngineOptions{data, "bench", "library", 60000}, o);
    thread = std::thread([this] { srv->run(); });
  }
  ~RunningServer() {
    srv->stop();
    thread.join();
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(srv->port()); }
};

std::string doc_text(const CorpusDoc& d) {
  return "# " + d.title + "\n\n" + d.text + "\n";
}

// A word of the query for grep: its longest alphabetic word.
std::string grep_word(const std::string& q) {
  std::string best, cur;
  for (char c : q + " ") {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      cur.push_back(c);
    } else {
      if (cur.size() > best.size()) best = cur;
      cur.clear();
    }
  }
  return best;
}

struct Latency {
  std::vector<double> keyword, grep;
};

Latency small_kb_latency(const fs::path& work, const Dataset& ds) {
  fs::path data = work / "small";
  fs::remove_all(data);
  {
    auto e = Engine::open({data.string(), "bench", "library", 60000});
    e->create_kb("small", "{}");
    for (std::size_t i = 0; i < ds.corpus.size() && i < 50; ++i)
      e->ingest_bytes("small", ds.corpus[i].id + ".md", doc_text(ds.corpus[i]), {});
  }
  RunningServer s(data.string(), 0);
  httplib::Client c("127.0.0.1", s.srv->port());
  c.set_keep_alive(true);
  c.set_tcp_nodelay(true);  // else Nagle + delayed ACK add ~40 ms to each request
  Latency L;
  for (int round = 0; round < 2; ++round) {  // round 0 warms up
    for (const auto& q : ds.queries) {
      auto t0 = Clock::now();
      auto r = c.Post("/api/v1/kbs/small/search",
                      json{{"query", q.text}, {"mode", "keyword"}}.dump(), "application/json");
      double ms = elapsed_ms(t0);
      if (!r || r->status != 200) throw std::runtime_error("keyword search failed");
      if (round) L.keyword.push_back(ms);
      std::string w = grep_word(q.text);
      if (w.empty()) continue;
      t0 = Clock::now();
      r = c.Post("/api/v1/kbs/small/grep",
                 json{{"pattern", w}, {"literal", true}, {"ignore_case", true}}.dump(),
                 "application/json");
      ms = elapsed_ms(t0);
      if (!r || r->status != 200) throw std::runtime_error("grep failed");
      if (round) L.grep.push_back(ms);
    }
  }
  return L;
}

json chroma_call(httplib::Client& c, const std::string& method, const std::string& path,
                 const json& body) {
  auto r = method == "DELETE" ? c.Delete(path.c_str())
           : method == "GET"  ? c.Get(path.c_str())
                              : c.Post(path.c_str(), body.dump(), "application/json");
  if (!r) throw std::runtime_error("chroma: no answer to " + path);
  if (method != "DELETE" && r->status / 100 != 2)
    throw std::runtime_error("chroma: " + path + " -> " + std::to_string(r->status) + " " +
                             r->body.substr(0, 300));
  return json::parse(r->body, nullptr, false);
}

}  // namespace

static double to_ms(const std::string& v, const std::string& unit) {
  double x = std::stod(v);
  if (unit == "us") return x / 1000;
  if (unit == "s") return x * 1000;
  return x;
}

// Runs wrk with a Lua script that POSTs `bodies` round-robin to `path`.
Wrk run_wrk(const fs::path& work, const std::string& name, const std::string& url,
            const std::string& path, const std::vector<std::string>& bodies, int seconds,
            int connections) {
  fs::path lua = work / (name + ".lua");
  {
    std::ofstream f(lua);
    f << "local bodies = {\n";
    for (const auto& b : bodies) f << "  " << json(b).dump() << ",\n";
    f << "}\nlocal i = 0\nlocal errors = 0\n"
         "request = function()\n  i = i % #bodies + 1\n"
         "  return wrk.format('POST', '"
      << path
      << "', {['Content-Type'] = 'application/json'}, bodies[i])\nend\n"
         "response = function(status, headers, body)\n  if status ~= 200 then errors = errors + 1 "
         "end\nend\n";
  }
  fs::path out = work / (name + ".out");
  std::string cmd = "wrk --latency -t2 -c" + std::to_string(connections) + " -d" +
                    std::to_string(seconds) + "s -s " + lua.string() + " " + url + " > " +
                    out.string() + " 2>&1";
  if (std::system(cmd.c_str()) != 0) throw std::runtime_error("wrk failed: see " + out.string());
  std::ifstream in(out);
  std::string text((std::istreambuf_iterator<char>(in)), {});
  Wrk w;
  std::smatch m;
  if (std::regex_search(text, m, std::regex(R"(Requests/sec:\s+([0-9.]+))")))
    w.rps = std::stod(m[1]);
  if (std::regex_search(text, m, std::regex(R"(\s50%\s+([0-9.]+)(us|ms|s))")))
    w.p50_ms = to_ms(m[1], m[2]);
  if (std::regex_search(text, m, std::regex(R"(\s99%\s+([0-9.]+)(us|ms|s))")))
    w.p99_ms = to_ms(m[1], m[2]);
  if (std::regex_search(text, m, std::regex(R"((\d+) requests in)"))) w.requests = std::stoll(m[1]);
  if (std::regex_search(text, m, std::regex(R"(Non-2xx or 3xx responses:\s+(\d+))")))
    w.errors = std::stoll(m[1]);
  std::fprintf(stderr, "%s: %.0f req/s, p50 %.2f ms, p99 %.2f ms, %lld non-2xx\n", name.c_str(),
               w.rps, w.p50_ms, w.p99_ms, w.errors);
  return w;
}

int run_serve(const Args& args) {
  const std::string dataset = args.get("dataset");
  const int seconds = static_cast<int>(args.num("wrk-seconds", 10));
  const int connections = static_cast<int>(args.num("connections", 50));
  const std::string chroma = args.get("chroma-url", "");
  const std::string model_dir = args.get("model-dir", ".deps/models/glove-100d");
  Dataset ds = load_dataset(dataset);
  fs::path work = fs::temp_directory_path() / "quarry-bench-serve";
  fs::remove_all(work);
  fs::create_directories(work);

  // 1. Latency on a 50-document KB.
  Latency L = small_kb_latency(work, ds);

  // 2. Throughput on the whole dataset.
  fs::path data = work / "full";
  {
    auto e = Engine::open({data.string(), "bench", "library", 60000});
    e->create_kb("kb", json{{"embedder", {{"provider", "static:glove-100d"}}},
                            {"chunking", {{"profile", "none"}}}}
                           .dump());
    for (const auto& d : ds.corpus) {
      try {
        e->ingest_bytes("kb", d.id + ".md", doc_text(d), {});
      } catch (const Error&) {
      }
    }
    auto rep = e->reindex("kb", {});
    if (rep.pending) throw std::runtime_error("vectors incomplete: " + rep.error_message);
  }
  std::vector<std::string> kw_bodies, vec_bodies;
  for (const auto& q : ds.queries) {
    kw_bodies.push_back(json{{"query", q.text}, {"mode", "keyword"}, {"top_k", 10}}.dump());
    vec_bodies.push_back(json{{"query", q.text}, {"mode", "vector"}, {"top_k", 10}}.dump());
  }
  Wrk kw, vec, chroma_vec;
  {
    RunningServer s(data.string(), 0);
    run_wrk(work, "warm", s.url(), "/api/v1/kbs/kb/search", vec_bodies, 2, connections);
    kw =
        run_wrk(work, "keyword", s.url(), "/api/v1/kbs/kb/search", kw_bodies, seconds, connections);
    vec =
        run_wrk(work, "vector", s.url(), "/api/v1/kbs/kb/search", vec_bodies, seconds, connections);
  }

  // 3. Chroma with the same document vectors and the same queries (as vectors).
  if (!chroma.empty()) {
    auto& reg = embed::ProviderRegistry::builtin();
    auto p = reg.create(embed::parse_spec("static:glove-100d", {{"model_dir", model_dir}}), {});
    std::smatch m;
    if (!std::regex_match(chroma, m, std::regex(R"(http://([^:/]+):(\d+)/?)")))
      throw std::runtime_error("--chroma-url must be http://HOST:PORT");
    httplib::Client c(m[1].str(), std::stoi(m[2]));
    c.set_read_timeout(300, 0);
    const std::string cols =
        "/api/v2/tenants/default_tenant/databases/default_database/collections";
    chroma_call(c, "DELETE", cols + "/quarry_bench", {});
    json hnsw = {
        {"space", "cosine"}, {"max_neighbors", 16}, {"ef_construction", 200}, {"ef_search", 64}};
    json create = {{"name", "quarry_bench"}, {"configuration", {{"hnsw", hnsw}}}};
    json col = chroma_call(c, "POST", cols, create);
    const std::string id = col["id"];
    const std::size_t batch = 1000;
    for (std::size_t s = 0; s < ds.corpus.size(); s += batch) {
      std::vector<std::string> texts, ids;
      for (std::size_t i = s; i < std::min(ds.corpus.size(), s + batch); ++i) {
        texts.push_back(doc_text(ds.corpus[i]));
        ids.push_back(ds.corpus[i].id);
      }
      auto vecs = p->embed_documents(texts);
      chroma_call(c, "POST", cols + "/" + id + "/add", {{"ids", ids}, {"embeddings", vecs}});
    }
    std::vector<std::string> bodies;
    for (const auto& q : ds.queries)
      bodies.push_back(json{
          {"query_embeddings", {p->embed_query(q.text)}},
          {"n_results", 10},
          {"include",
           {"distances"}}}.dump());
    run_wrk(work, "chroma-warm", chroma, cols + "/" + id + "/query", bodies, 2, connections);
    chroma_vec = run_wrk(work, "chroma-vector", chroma, cols + "/" + id + "/query", bodies, seconds,
                         connections);
    chroma_call(c, "DELETE", cols + "/quarry_bench", {});
  }

  std::printf("serve: %s (%zu docs, %zu queries)\n\n", ds.name.c_str(), ds.corpus.size(),
              ds.queries.size());
  std::printf("| REST, 50-document KB, one keep-alive client | requests | p50 ms | p99 ms |\n");
  std::printf("|---|---:|---:|---:|\n");
  std::printf("| keyword search | %zu | %.3f | %.3f |\n", L.keyword.size(),
              percentile(L.keyword, 50), percentile(L.keyword, 99));
  std::printf("| grep (literal, ignore case) | %zu | %.3f | %.3f |\n\n", L.grep.size(),
              percentile(L.grep, 50), percentile(L.grep, 99));
  std::printf("| wrk -t2 -c%d -d%ds, whole dataset | req/s | p50 ms | p99 ms | non-2xx |\n",
              connections, seconds);
  std::printf("|---|---:|---:|---:|---:|\n");
  auto row = [](const char* name, const Wrk& w) {
    std::printf("| %s | %.0f | %.2f | %.2f | %lld |\n", name, w.rps, w.p50_ms, w.p99_ms, w.errors);
  };
  row("Quarry keyword", kw);
  row("Quarry vector (embeds the query)", vec);
  if (!chroma.empty()) {
    row("Chroma vector (query vector sent)", chroma_vec);
    std::printf("\nQuarry/Chroma vector throughput ratio: %.2f\n", vec.rps / chroma_vec.rps);
  }
  json out = {{"bench", "serve"},
              {"dataset", ds.name},
              {"keyword_p50_ms", percentile(L.keyword, 50)},
              {"grep_p50_ms", percentile(L.grep, 50)},
              {"wrk_keyword_rps", kw.rps},
              {"wrk_vector_rps", vec.rps},
              {"wrk_chroma_vector_rps", chroma_vec.rps}};
  std::printf("\n%s\n", out.dump().c_str());
  fs::remove_all(work);
  return 0;
}

}  // namespace quarry::bench
