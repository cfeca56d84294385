// `quarry mcp` behind server/serve.h: the MCP protocol core over stdio, with a small pool of
// Engines and (unless another process builds them) an in-process indexer for the vectors of
// what the agent writes.
#include <memory>

#include "quarry/indexer.h"
#include "server/mcp.h"
#include "server/serve.h"

namespace quarry::server {
namespace {

class McpStdioImpl final : public McpStdio {
 public:
  McpStdioImpl(const EngineOptions& engine, const McpStdioOptions& o)
      : base_(engine), opts_(o), pool_(base_, 2) {
    auto e = pool_.acquire("local", "mcp");
    if (!o.kb.empty()) e->describe_kb(o.kb);
  }

  int run(std::istream& in, std::ostream& out) override {
    std::unique_ptr<Indexer> indexer;
    if (opts_.indexer) {
      IndexerOptions io;
      io.engine = base_;
      indexer = Indexer::start(io);
    }
    McpOptions mo;
    mo.kb = opts_.kb;
    mo.read_only = opts_.read_only;
    if (indexer) mo.on_write = [&indexer](const std::string& kb) { indexer->poke(kb); };
    McpServer mcp(pool_, mo);
    Principal who{"local", Scope::admin, {}};
    if (!opts_.kb.empty()) who.kbs = {opts_.kb};
    const int rc = run_stdio(mcp, in, out, who);
    if (indexer) indexer->stop();  // cancels a running sweep; its work stays pending
    return rc;
  }

 private:
  EngineOptions base_;
  McpStdioOptions opts_;
  EnginePool pool_;
};

}  // namespace

std::unique_ptr<McpStdio> McpStdio::open(const EngineOptions& engine, const McpStdioOptions& opts) {
  EngineOptions base = engine;
  base.surface = "mcp";
  if (base.actor.empty()) base.actor = "local";
  return std::make_unique<McpStdioImpl>(base, opts);
}

}  // namespace quarry::server
