// quarry-bench eval --dataset DIR [--split train] [--profile prose|none] [--k1 --b --w-title
// --w-headings]; quarry-bench eval --loco DATASETS_DIR [--embedder E] [--sets a,b,...] [--top-k N];
// quarry-bench perf --dataset DIR [--docs-dir DIR]
#include <cstring>
#include <iostream>

#include "bench.h"

int main(int argc, char** argv) {
  using namespace quarry::bench;
  if (argc < 2) {
    std::cerr << "usage: quarry-bench "
                 "eval|perf|ann|embed-speed|lifecycle|serve|probe|pump|bert|bert-text [options]\n";
    return 2;
  }
  Args args;
  for (int i = 2; i < argc; ++i) {
    if (std::strncmp(argv[i], "--", 2) != 0) continue;
    std::string k = argv[i] + 2;
    if (i + 1 < argc && std::strncmp(argv[i + 1], "--", 2) != 0)
      args.kv[k] = argv[++i];
    else
      args.kv[k].assign(1, '1');  // not = "1": g++ 12 -O3's false -Wrestrict (PR 105651)
  }
  try {
    std::string cmd = argv[1];
    if (cmd == "eval") return run_eval(args);
    if (cmd == "perf") return run_perf(args);
    if (cmd == "ann") return run_ann(args);
    if (cmd == "embed-speed") return run_embed_speed(args);
    if (cmd == "lifecycle") return run_lifecycle(args);
    if (cmd == "serve") return run_serve(args);
    if (cmd == "pump") return run_pump(args);
    if (cmd == "bert") return run_bert(args);
    if (cmd == "bert-text") return run_bert_text(args);
    if (cmd == "probe") return run_probe(args);
    std::cerr << "unknown sub-command " << cmd << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
