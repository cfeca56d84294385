// End-to-end: the real `quarry` binary, its JSON output, error envelope and exit statuses.
#include <sys/file.h>

#include <set>

#include "cli_runner.h"
#include "numbered.h"
#include "quarry/error.h"

namespace quarry::e2e {
using quarry::testing::numbered;
namespace {
using nlohmann::json;
using quarry::testing::TempDir;
using quarry::testing::write_file;

constexpr int kPartialFailure = 20;

// The error envelope {"error": {"code", "message", "details"}} with the given code.
void expect_error(const RunResult& r, Code code) {
  EXPECT_EQ(r.status, exit_status(code)) << r.out << r.err;
  ASSERT_TRUE(r.json.is_object()) << r.out;
  ASSERT_TRUE(r.json.contains("error")) << r.out;
  const json& e = r.json["error"];
  EXPECT_EQ(e["code"], code_name(code)) << r.out;
  EXPECT_TRUE(e["message"].is_string());
  EXPECT_FALSE(e["message"].get<std::string>().empty());
  EXPECT_TRUE(e["details"].is_object()) << r.out;
}

class CliTest : public ::testing::Test {
 protected:
  TempDir dir;
  Cli cli{dir};
  std::filesystem::path src = dir / "src";

  void make_kb(const std::string& name = "k", std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"kb", "create", name};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = cli.json(args);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
  }

  std::string ingest_one(const std::string& name, const std::string& body,
                         const std::string& metadata = "", const std::string& kb = "k") {
    write_file(src / name, body);
    std::vector<std::string> args = {"ingest", (src / name).string(), "--kb", kb};
    if (!metadata.empty()) {
      args.push_back("--metadata");
      args.push_back(metadata);
    }
    auto r = cli.json(args);
    EXPECT_EQ(r.status, 0) << r.out << r.err;
    EXPECT_EQ(r.json["added"], 1) << r.out;
    return r.json["items"][0].value("doc_id", "");
  }
};

TEST_F(CliTest, KbCreateListDescribeSetDelete) {
  auto created =
      cli.json({"kb", "create", "notes", "--description", "Team notes", "--max-tokens", "256"});
  ASSERT_EQ(created.status, 0) << created.out << created.err;
  EXPECT_EQ(created.json["name"], "notes");
  EXPECT_EQ(created.json["description"], "Team notes");
  EXPECT_EQ(created.json["config"]["chunking"]["max_tokens"], 256);
  EXPECT_EQ(created.json["documents"], 0);

  auto list = cli.json({"kb", "list"});
  EXPECT_EQ(list.status, 0);
  ASSERT_EQ(list.json["knowledge_bases"].size(), 1u);
  EXPECT_EQ(list.json["knowledge_bases"][0]["name"], "notes");

  auto desc = cli.json({"kb", "describe", "notes"});
  EXPECT_EQ(desc.status, 0);
  EXPECT_EQ(desc.json["config"]["chunking"]["profile"], "prose");
  EXPECT_EQ(desc.json["index_status"]["keyword"], "not_built");

  auto set =
      cli.json({"kb", "set", "notes", "chunking.max_tokens=128", "description=Renamed notes"});
  ASSERT_EQ(set.status, 0) << set.out;
  EXPECT_EQ(set.json["config"]["chunking"]["max_tokens"], 128);
  EXPECT_EQ(set.json["description"], "Renamed notes");
  EXPECT_EQ(cli.json({"kb", "describe", "notes"}).json["config"]["chunking"]["max_tokens"], 128);

  auto bad = cli.json({"kb", "set", "notes", "chunking.max_tokns=1"});
  expect_error(bad, Code::invalid_argument);
  EXPECT_EQ(bad.json["error"]["details"]["field"], "chunking.max_tokns");
  expect_error(cli.json({"kb", "set", "notes", "novalue"}), Code::invalid_argument);

  // stdin is not a terminal: delete without --yes is refused and deletes nothing.
  auto refused = cli.json({"kb", "delete", "notes"});
  expect_error(refused, Code::invalid_argument);
  EXPECT_EQ(cli.json({"kb", "list"}).json["knowledge_bases"].size(), 1u);

  auto del = cli.json({"kb", "delete", "notes", "--yes"});
  ASSERT_EQ(del.status, 0) << del.out;
  EXPECT_EQ(del.json["deleted"], "notes");
  EXPECT_TRUE(cli.json({"kb", "list"}).json["knowledge_bases"].empty());
  expect_error(cli.json({"kb", "describe", "notes"}), Code::not_found);
}

TEST_F(CliTest, KbCreateErrors) {
  make_kb("k");
  expect_error(cli.json({"kb", "create", "k"}), Code::already_exists);
  expect_error(cli.json({"kb", "create", "Bad Name"}), Code::invalid_argument);
  auto r = cli.json({"kb", "create", "x", "--max-tokens", "8192"});
  expect_error(r, Code::invalid_argument);
  EXPECT_EQ(r.json["error"]["details"]["field"], "chunking.max_tokens");
  expect_error(cli.json({"kb", "create", "y", "--profile", "none", "--max-tokens", "100"}),
               Code::invalid_argument);
  // Zero and negative budgets are refused by the schema, not taken as "not given".
  r = cli.json({"kb", "create", "v", "--max-tokens", "0"});
  expect_error(r, Code::invalid_argument);
  EXPECT_EQ(r.json["error"]["details"]["field"], "chunking.max_tokens");
  r = cli.json({"kb", "create", "u", "--overlap", "-1"});
  expect_error(r, Code::invalid_argument);
  EXPECT_EQ(r.json["error"]["details"]["field"], "chunking.overlap_tokens");
  expect_error(cli.json({"kb", "create", "z", "--config", "{nope"}), Code::invalid_argument);
  // config from stdin
  auto from_stdin =
      cli.json({"kb", "create", "w", "--config", "-"}, R"({"chunking": {"profile": "code"}})");
  ASSERT_EQ(from_stdin.status, 0) << from_stdin.out;
  EXPECT_EQ(from_stdin.json["config"]["chunking"]["profile"], "code");
}

TEST_F(CliTest, UsageErrorsUseTheEnvelope) {
  expect_error(cli.json({"kb", "frobnicate"}), Code::invalid_argument);
  expect_error(cli.json({"search"}), Code::invalid_argument);  // missing query and --kb
  expect_error(cli.json({"search", "x", "--kb", "k", "--mode", "psychic"}), Code::invalid_argument);
  auto human = cli.text({"kb", "frobnicate"});
  EXPECT_EQ(human.status, exit_status(Code::invalid_argument));
  EXPECT_NE(human.err.find("invalid_argument"), std::string::npos) << human.err;
  // The word that is not a command is named with the commands there are, and the help to read
  // is the command's own, not the top level's.
  EXPECT_NE(human.err.find("unknown command 'frobnicate' for `quarry kb`: one of create, list"),
            std::string::npos)
      << human.err;
  EXPECT_NE(human.err.find("(run `quarry kb --help`)"), std::string::npos) << human.err;
  auto missing = cli.json({"kb", "create"});
  expect_error(missing, Code::invalid_argument);
  EXPECT_EQ(missing.json["error"]["details"]["usage"], "quarry kb create --help") << missing.out;
  EXPECT_EQ(cli.json({"search", "x"}).json["error"]["details"]["usage"], "quarry search --help");
  EXPECT_NE(cli.text({"kb"}).err.find("`quarry kb` needs a command: one of create"),
            std::string::npos);
}

TEST_F(CliTest, IngestFolderReportsASummary) {
  make_kb();
  write_file(src / "a.md", "# A\n\nalpha aardvark\n");
  write_file(src / "sub/b.txt", "bravo badger\n");
  write_file(src / "sub/deeper/c.md", "# C\n\ncharlie cheetah\n");
  write_file(src / ".hidden.md", "# H\n\nhidden\n");
  auto r = cli.json({"ingest", src.string(), "--kb", "k"});
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_EQ(r.json["added"], 3);
  EXPECT_EQ(r.json["failed"], 0);
  EXPECT_EQ(r.json["updated"], 0);
  EXPECT_EQ(r.json["unchanged"], 0);
  ASSERT_EQ(r.json["items"].size(), 3u);
  std::set<std::string> paths;
  for (const auto& i : r.json["items"]) {
    paths.insert(i["path"]);
    EXPECT_EQ(i["status"], "added");
    EXPECT_EQ(i["doc_id"].get<std::string>().size(), 26u);
    EXPECT_GE(i["chunks"].get<int>(), 1);
  }
  EXPECT_EQ(paths, (std::set<std::string>{"a.md", "sub/b.txt", "sub/deeper/c.md"}));
  auto again = cli.json({"ingest", src.string(), "--kb", "k"});
  EXPECT_EQ(again.status, 0);
  EXPECT_EQ(again.json["unchanged"], 3);
  // include/exclude globs
  write_file(src / "sub/d.md", "# D\n\ndelta dingo\n");
  write_file(src / "skip/e.md", "# E\n\necho eel\n");
  auto globbed = cli.json(
      {"ingest", src.string(), "--kb", "k", "--include", "**/*.md", "--exclude", "skip/**"});
  EXPECT_EQ(globbed.status, 0) << globbed.out;
  EXPECT_EQ(globbed.json["added"], 1);
  EXPECT_EQ(globbed.json["unchanged"], 2);
}

TEST_F(CliTest, IngestBatchWithAFailureExits20) {
  make_kb();
  write_file(src / "good.md", "# G\n\ngood gnu\n");
  write_file(src / "empty.md", "");
  write_file(src / "other.md", "# O\n\nother okapi\n");
  auto r = cli.json({"ingest", src.string(), "--kb", "k"});
  EXPECT_EQ(r.status, kPartialFailure) << r.out;
  EXPECT_EQ(r.json["added"], 2);
  EXPECT_EQ(r.json["failed"], 1);
  bool found = false;
  for (const auto& i : r.json["items"])
    if (i["path"] == "empty.md") {
      found = true;
      EXPECT_EQ(i["status"], "failed");
      EXPECT_EQ(i["error"]["code"], "no_content");
      EXPECT_FALSE(i["error"]["message"].get<std::string>().empty());
    }
  EXPECT_TRUE(found);
  // The human summary says the same.
  auto human = cli.text({"ingest", src.string(), "--kb", "k"});
  EXPECT_EQ(human.status, kPartialFailure);
  EXPECT_NE(human.out.find("1 failed"), std::string::npos) << human.out;
}

// A path of a batch that does not exist is that path's failure: the other paths are ingested
// and the exit status says some failed. Alone, it is the call's error; a missing KB stops all.
TEST_F(CliTest, AMissingPathInABatchFailsAloneAndTheRestIsIngested) {
  make_kb();
  write_file(src / "good.md", "# G\n\ngood gnu\n");
  const std::string missing = (src / "missing.md").string();
  auto r = cli.json({"ingest", missing, (src / "good.md").string(), "--kb", "k"});
  EXPECT_EQ(r.status, kPartialFailure) << r.out << r.err;
  EXPECT_EQ(r.json["added"], 1) << r.out;
  EXPECT_EQ(r.json["failed"], 1) << r.out;
  ASSERT_EQ(r.json["items"].size(), 2u) << r.out;
  EXPECT_EQ(r.json["items"][0]["path"], missing);
  EXPECT_EQ(r.json["items"][0]["status"], "failed");
  EXPECT_EQ(r.json["items"][0]["error"]["code"], "not_found");
  EXPECT_EQ(r.json["items"][1]["status"], "added");
  expect_error(cli.json({"ingest", missing, "--kb", "k"}), Code::not_found);
  expect_error(cli.json({"ingest", missing, (src / "good.md").string(), "--kb", "nope"}),
               Code::not_found);
}

// Human output says what is not there instead of printing nothing: an empty document list, and
// vectors still pending behind a hybrid answer (with the command that embeds them).
TEST_F(CliTest, HumanOutputSaysWhatIsMissing) {
  make_kb("k", {"--embedder", "hash"});
  auto empty = cli.text({"docs", "list", "--kb", "k"});
  EXPECT_EQ(empty.status, 0);
  EXPECT_EQ(empty.out, "no documents in knowledge base 'k'\n");
  ingest_one("a.md", "# A\n\nthe pelican flies\n");
  auto none = cli.text({"docs", "list", "--kb", "k", "--filter", R"({"lang": "fr"})"});
  EXPECT_EQ(none.out, "no documents match the filter in knowledge base 'k'\n");
  auto pending = cli.text({"search", "pelican", "--kb", "k", "--mode", "hybrid"});
  EXPECT_EQ(pending.status, 0);
  EXPECT_NE(pending.err.find("note: vector index not_built"), std::string::npos) << pending.err;
  EXPECT_NE(pending.err.find("`quarry reindex --kb k`"), std::string::npos) << pending.err;
  ASSERT_EQ(cli.json({"reindex", "--kb", "k"}).status, 0);
  auto ready = cli.text({"search", "pelican", "--kb", "k", "--mode", "hybrid"});
  EXPECT_EQ(ready.err.find("note:"), std::string::npos) << ready.err;
}

// grep's output modes as GNU grep and ripgrep have them: -c, -l, -L, -o, -q, --color, NO_COLOR;
// and search reading its query from stdin with `-`.
TEST_F(CliTest, GrepOutputModesAndSearchFromStdin) {
  make_kb();
  write_file(src / "a.md", "# A\n\nalpha beta alpha\nbeta\nalpha\n");
  write_file(src / "b.md", "# B\n\ngamma\n");
  write_file(src / "c.md", "# C\n\nalphabet\n");
  ASSERT_EQ(cli.json({"ingest", src.string(), "--kb", "k"}).status, 0);
  auto lines = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"grep", "alpha", "--kb", "k"});
    auto r = cli.text(args);
    EXPECT_EQ(r.status, 0) << r.err;
    return r.out;
  };
  EXPECT_EQ(lines({"-c"}), "a.md:2\nc.md:1\n");
  EXPECT_EQ(lines({"--files-with-matches"}), "a.md\nc.md\n");
  EXPECT_EQ(lines({"-L"}), "b.md\n");
  EXPECT_EQ(lines({"-w", "-l"}), "a.md\n");  // "alphabet" is not the word alpha
  // -v: the lines without alpha (front matter skipped), counted per document.
  EXPECT_EQ(lines({"-v", "-c"}), "a.md:4\nb.md:4\nc.md:3\n");
  // -o: one line per match, the two on one line included.
  const std::string o = lines({"-o"});
  EXPECT_EQ(std::count(o.begin(), o.end(), '\n'), 4) << o;
  EXPECT_NE(o.find("a.md:"), std::string::npos);
  EXPECT_EQ(o.find("beta"), std::string::npos) << o;
  // Color only when asked (the test's stdout is no terminal); NO_COLOR does not beat always.
  EXPECT_NE(lines({"--color=always"}).find("\033[1;31malpha\033[0m"), std::string::npos);
  EXPECT_EQ(lines({"--color=auto"}).find('\033'), std::string::npos);
  {
    quarry::testing::ScopedEnv no_color("NO_COLOR", "1");
    EXPECT_EQ(lines({}).find('\033'), std::string::npos);
  }
  // -q: nothing printed, the exit status says whether anything matched.
  auto hit = cli.text({"grep", "gamma", "--kb", "k", "-q"});
  EXPECT_EQ(hit.status, 0);
  EXPECT_EQ(hit.out, "");
  auto miss = cli.text({"grep", "zzz", "--kb", "k", "-q"});
  EXPECT_EQ(miss.status, 1);
  EXPECT_EQ(miss.out, "");
  expect_error(cli.json({"grep", "alpha", "--kb", "k", "-c", "-l"}), Code::invalid_argument);
  // search -: the query comes from stdin.
  auto piped = cli.json({"search", "-", "--kb", "k", "--mode", "keyword"}, "gamma\n");
  ASSERT_EQ(piped.status, 0) << piped.err;
  ASSERT_EQ(piped.json["hits"].size(), 1u) << piped.out;
  EXPECT_EQ(piped.json["hits"][0]["filename"], "b.md");
}

TEST_F(CliTest, SingleFailingFileExitsWithItsCodesStatus) {
  make_kb();
  write_file(src / "empty.md", "");
  write_file(src / "thing.xyz", "what");
  write_file(src / "junk.txt", std::string("\x00\x01\x02\x03", 4) + std::string(100, '\0'));
  auto r = cli.json({"ingest", (src / "empty.md").string(), "--kb", "k"});
  EXPECT_EQ(r.status, exit_status(Code::no_content)) << r.out;
  EXPECT_EQ(r.json["failed"], 1);
  EXPECT_EQ(cli.json({"ingest", (src / "thing.xyz").string(), "--kb", "k"}).status,
            exit_status(Code::unsupported_format));
  EXPECT_EQ(cli.json({"ingest", (src / "junk.txt").string(), "--kb", "k"}).status,
            exit_status(Code::corrupt_input));
  // A changed file without --replace is a conflict; with it, an update.
  write_file(src / "a.md", "# A\n\none\n");
  ASSERT_EQ(cli.json({"ingest", (src / "a.md").string(), "--kb", "k"}).status, 0);
  write_file(src / "a.md", "# A\n\ntwo\n");
  auto conflict = cli.json({"ingest", (src / "a.md").string(), "--kb", "k"});
  EXPECT_EQ(conflict.status, exit_status(Code::conflict));
  EXPECT_EQ(conflict.json["items"][0]["error"]["code"], "conflict");
  auto replaced = cli.json({"ingest", (src / "a.md").string(), "--kb", "k", "--replace"});
  EXPECT_EQ(replaced.status, 0);
  EXPECT_EQ(replaced.json["updated"], 1);
  // A path that does not exist at all.
  expect_error(cli.json({"ingest", (src / "nope.md").string(), "--kb", "k"}), Code::not_found);
}

// `mkfifo f.md; quarry ingest f.md` blocked in open() for ever. A FIFO is a failed item with
// a stable code, alone (its exit status) or in a folder (the partial-failure status).
TEST_F(CliTest, AFifoIsRefusedNotWaitedFor) {
  make_kb();
  quarry::testing::FifoWatchdog fifo(src / "f.md", 20);
  ASSERT_TRUE(fifo.made());
  write_file(src / "a.md", "# A\n\nalpha\n");
  auto alone = cli.json({"ingest", (src / "f.md").string(), "--kb", "k"});
  auto folder = cli.json({"ingest", src.string(), "--kb", "k"});
  fifo.done();
  EXPECT_FALSE(fifo.fired()) << "quarry ingest blocked on the FIFO";
  EXPECT_EQ(alone.status, exit_status(Code::unsupported_format)) << alone.out << alone.err;
  ASSERT_EQ(alone.json["items"].size(), 1u) << alone.out;
  EXPECT_EQ(alone.json["items"][0]["error"]["code"], "unsupported_format");
  EXPECT_NE(
      alone.json["items"][0]["error"]["message"].get<std::string>().find("not a regular file"),
      std::string::npos)
      << alone.out;
  EXPECT_EQ(folder.status, kPartialFailure) << folder.out;
  EXPECT_EQ(folder.json["added"], 1);
  EXPECT_EQ(folder.json["failed"], 1);
  bool reported = false;
  for (const auto& i : folder.json["items"])
    if (i["path"] == "f.md") reported = i["error"]["code"] == "unsupported_format";
  EXPECT_TRUE(reported) << folder.out;
}

// `quarry embed` with an endpoint the SSRF guard refuses exits 22 blocked_address (it exited 7
// engine_unavailable, as if the endpoint were down), naming the address and the setting.
TEST_F(CliTest, EmbedRefusesABlockedEndpointWithItsOwnCode) {
  auto r = cli.json({"embed", "--embedder", "openai:m", "--settings",
                     R"({"base_url": "http://10.0.0.1/v1", "dimensions": 8})", "hello"});
  expect_error(r, Code::blocked_address);
  EXPECT_EQ(r.status, 22);
  const std::string m = r.json["error"]["message"];
  EXPECT_NE(m.find("10.0.0.1"), std::string::npos) << m;
  EXPECT_NE(m.find("settings.allow_private"), std::string::npos) << m;
  auto kb = cli.json({"kb", "create", "k", "--config",
                      R"({"embedder": {"provider": "openai:m", "settings":
                          {"base_url": "http://192.168.1.5/v1", "dimensions": 8}}})"});
  expect_error(kb, Code::blocked_address);
}

TEST_F(CliTest, DocsListPaginatesWithACursor) {
  make_kb();
  std::set<std::string> ids;
  for (int i = 0; i < 5; ++i)
    ids.insert(ingest_one(numbered("d", i) + ".md", numbered("# D\n\ndocument ", i) + "\n"));
  std::vector<std::string> seen;
  std::string cursor;
  int pages = 0;
  while (true) {
    std::vector<std::string> args = {"docs", "list", "--kb", "k", "--limit", "2"};
    if (!cursor.empty()) {
      args.push_back("--cursor");
      args.push_back(cursor);
    }
    auto r = cli.json(args);
    ASSERT_EQ(r.status, 0) << r.out;
    ++pages;
    for (const auto& d : r.json["documents"]) seen.push_back(d["id"]);
    if (r.json["next_cursor"].is_null()) {
      EXPECT_EQ(r.json["documents"].size(), 1u);
      break;
    }
    EXPECT_EQ(r.json["documents"].size(), 2u);
    cursor = r.json["next_cursor"];
    ASSERT_LT(pages, 10);
  }
  EXPECT_EQ(pages, 3);
  EXPECT_EQ(seen.size(), 5u);
  EXPECT_EQ(std::set<std::string>(seen.begin(), seen.end()), ids);  // no duplicates, none lost
  auto filtered = cli.json({"docs", "list", "--kb", "k", "--filter", R"({"nope": 1})"});
  EXPECT_EQ(filtered.status, 0);
  EXPECT_TRUE(filtered.json["documents"].empty());
  expect_error(cli.json({"docs", "list", "--kb", "k", "--limit", "0"}), Code::invalid_argument);
  // Not a cursor this command printed: invalid_argument (exit 2), not a page from nowhere.
  auto bad = cli.json({"docs", "list", "--kb", "k", "--cursor", "garbage"});
  expect_error(bad, Code::invalid_argument);
  EXPECT_EQ(bad.json["error"]["details"]["field"], "cursor") << bad.out;
}

TEST_F(CliTest, DocsGetEditReconvertDelete) {
  make_kb();
  std::string id =
      ingest_one("guide.md", "# Guide\n\nThe wombat digs burrows.\n", R"({"team": "zoo", "n": 3})");
  auto got = cli.json({"docs", "get", id, "--kb", "k"});
  ASSERT_EQ(got.status, 0) << got.out;
  EXPECT_EQ(got.json["id"], id);
  EXPECT_EQ(got.json["filename"], "guide.md");
  EXPECT_EQ(got.json["metadata"], json::parse(R"({"team": "zoo", "n": 3})"));
  EXPECT_NE(got.json["markdown"].get<std::string>().find("The wombat digs burrows."),
            std::string::npos);
  EXPECT_EQ(got.json["markdown"].get<std::string>().find("source_sha256"), std::string::npos)
      << "front matter is stripped";
  auto meta = cli.json({"docs", "get", id, "--kb", "k", "--meta"});
  EXPECT_FALSE(meta.json.contains("markdown"));
  auto human = cli.text({"docs", "get", id, "--kb", "k"});
  EXPECT_EQ(human.out.rfind("# Guide", 0), 0u) << human.out;

  write_file(dir / "edit.md", "# Guide\n\nThe quokka smiles.\n");
  auto edited = cli.json({"docs", "edit", id, "--kb", "k", "--file", (dir / "edit.md").string()});
  ASSERT_EQ(edited.status, 0) << edited.out;
  EXPECT_EQ(edited.json["id"], id);
  auto s1 = cli.json({"search", "quokka", "--kb", "k", "--mode", "keyword"});
  ASSERT_EQ(s1.json["hits"].size(), 1u);
  EXPECT_EQ(s1.json["hits"][0]["doc_id"], id);
  EXPECT_TRUE(
      cli.json({"search", "wombat", "--kb", "k", "--mode", "keyword"}).json["hits"].empty());
  // from stdin, too
  auto edited2 = cli.json({"docs", "edit", id, "--kb", "k"}, "# Guide\n\nThe echidna waddles.\n");
  EXPECT_EQ(edited2.status, 0);
  EXPECT_EQ(cli.json({"search", "echidna", "--kb", "k"}).json["hits"].size(), 1u);

  auto rec = cli.json({"docs", "reconvert", id, "--kb", "k"});
  ASSERT_EQ(rec.status, 0) << rec.out;
  EXPECT_EQ(cli.json({"search", "wombat", "--kb", "k"}).json["hits"].size(), 1u);

  auto del = cli.json({"docs", "delete", id, "--kb", "k"});
  ASSERT_EQ(del.status, 0) << del.out;
  EXPECT_EQ(del.json["deleted"], json::array({id}));
  expect_error(cli.json({"docs", "get", id, "--kb", "k"}), Code::not_found);
  expect_error(cli.json({"docs", "delete", id, "--kb", "k"}), Code::not_found);
  expect_error(cli.json({"docs", "delete", "--kb", "k"}), Code::invalid_argument);
  EXPECT_TRUE(cli.json({"search", "wombat", "--kb", "k"}).json["hits"].empty());
}

TEST_F(CliTest, DocsDeleteWhere) {
  make_kb();
  std::string a1 = ingest_one("a1.md", "# A\n\nshared yak\n", R"({"team": "a"})");
  std::string a2 = ingest_one("a2.md", "# A\n\nshared yak\n", R"({"team": "a"})");
  std::string b1 = ingest_one("b1.md", "# B\n\nshared yak\n", R"({"team": "b"})");
  auto r = cli.json({"docs", "delete", "--kb", "k", "--where", R"({"team": "a"})"});
  ASSERT_EQ(r.status, 0) << r.out;
  std::set<std::string> deleted;
  for (const auto& id : r.json["deleted"]) deleted.insert(id);
  EXPECT_EQ(deleted, (std::set<std::string>{a1, a2}));
  auto hits = cli.json({"search", "yak", "--kb", "k"}).json["hits"];
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0]["doc_id"], b1);
  expect_error(cli.json({"docs", "delete", "--kb", "k", "--where", R"({"team": {"$bad": 1}})"}),
               Code::invalid_argument);
  expect_error(cli.json({"docs", "delete", b1, "--kb", "k", "--where", R"({"team": "b"})"}),
               Code::invalid_argument);
}

TEST_F(CliTest, KeywordSearchWithFilterTopKAndMinScore) {
  make_kb();
  for (int i = 0; i < 6; ++i) {
    std::string body = numbered("# Doc ", i) + "\n\n";
    for (int j = 0; j <= i; ++j) body += "heron ";
    body += numbered("and some other words about lakes number ", i) + "\n";
    ingest_one(numbered("d", i) + ".md", body,
               json{{"group", i % 2 == 0 ? "even" : "odd"}, {"i", i}}.dump());
  }
  auto all = cli.json({"search", "heron", "--kb", "k", "--mode", "keyword"});
  ASSERT_EQ(all.status, 0) << all.out;
  EXPECT_EQ(all.json["mode"], "keyword");
  EXPECT_EQ(all.json["hits"].size(), 6u);
  EXPECT_TRUE(all.json["degraded"].empty());
  EXPECT_EQ(all.json["index_status"]["keyword"], "ready");
  double prev = 2;
  for (const auto& h : all.json["hits"]) {
    EXPECT_EQ(h["kb"], "k");
    EXPECT_EQ(h["metric"], "bm25");
    double s = h["score"];
    EXPECT_GE(s, 0.0);
    EXPECT_LE(s, 1.0);
    EXPECT_LE(s, prev);  // best first
    prev = s;
    EXPECT_NE(h["snippet"].get<std::string>().find("**"), std::string::npos) << h["snippet"];
  }

  auto top2 = cli.json({"search", "heron", "--kb", "k", "--top-k", "2"});
  ASSERT_EQ(top2.json["hits"].size(), 2u);
  EXPECT_EQ(top2.json["hits"][0]["doc_id"], all.json["hits"][0]["doc_id"]);

  auto odd = cli.json({"search", "heron", "--kb", "k", "--filter", R"({"group": "odd"})"});
  ASSERT_EQ(odd.json["hits"].size(), 3u);
  for (const auto& h : odd.json["hits"]) EXPECT_EQ(h["metadata"]["group"], "odd");
  auto odd1 =
      cli.json({"search", "heron", "--kb", "k", "-k", "1", "--filter", R"({"i": {"$gte": 4}})"});
  ASSERT_EQ(odd1.json["hits"].size(), 1u);
  EXPECT_GE(odd1.json["hits"][0]["metadata"]["i"].get<int>(), 4);

  // min-score: a threshold between the best and the worst score keeps exactly the hits above it
  double best = all.json["hits"].front()["score"], worst = all.json["hits"].back()["score"];
  ASSERT_LT(worst, best);
  double mid = (best + worst) / 2;
  std::size_t above = 0;
  for (const auto& h : all.json["hits"]) above += h["score"].get<double>() >= mid;
  auto thresholded = cli.json({"search", "heron", "--kb", "k", "--min-score", std::to_string(mid)});
  EXPECT_EQ(thresholded.json["hits"].size(), above);
  for (const auto& h : thresholded.json["hits"]) EXPECT_GE(h["score"].get<double>(), mid);
  expect_error(cli.json({"search", "heron", "--kb", "k", "--min-score", "1.5"}),
               Code::invalid_argument);
  expect_error(cli.json({"search", "heron", "--kb", "k", "--filter", "{bad"}),
               Code::invalid_argument);
  expect_error(cli.json({"search", "heron", "--kb", "k", "--top-k", "0"}), Code::invalid_argument);
}

TEST_F(CliTest, VectorModeIsUnavailableAndHybridDegrades) {
  make_kb();
  ingest_one("a.md", "# A\n\nthe pelican flies\n");
  auto vec = cli.json({"search", "pelican", "--kb", "k", "--mode", "vector"});
  expect_error(vec, Code::mode_unavailable);
  auto hybrid = cli.json({"search", "pelican", "--kb", "k", "--mode", "hybrid"});
  ASSERT_EQ(hybrid.status, 0) << hybrid.out;
  EXPECT_FALSE(hybrid.json["degraded"].empty());
  EXPECT_EQ(hybrid.json["hits"].size(), 1u);
  auto automatic = cli.json({"search", "pelican", "--kb", "k", "--mode", "auto"});
  EXPECT_EQ(automatic.status, 0);
  EXPECT_FALSE(automatic.json["degraded"].empty());
  EXPECT_EQ(automatic.json["hits"].size(), 1u);
}

TEST_F(CliTest, Grep) {
  make_kb();
  std::string id = ingest_one(
      "log.md", "# Log\n\nline one\nERROR disk full\nline three\nerror again\nline five\n");
  auto plain = cli.json({"grep", "error", "--kb", "k"});
  ASSERT_EQ(plain.status, 0) << plain.out;
  ASSERT_EQ(plain.json["matches"].size(), 1u);
  EXPECT_EQ(plain.json["matches"][0]["text"], "error again");
  EXPECT_EQ(plain.json["matches"][0]["doc_id"], id);
  EXPECT_FALSE(plain.json["truncated"]);

  auto ci = cli.json({"grep", "error", "-i", "--kb", "k"});
  ASSERT_EQ(ci.json["matches"].size(), 2u);
  EXPECT_EQ(ci.json["matches"][0]["text"], "ERROR disk full");
  EXPECT_EQ(ci.json["matches"][0]["ranges"][0], json::array({0, 5}));

  auto ctx = cli.json({"grep", "disk", "-C", "1", "--kb", "k"});
  ASSERT_EQ(ctx.json["matches"].size(), 1u);
  const auto& m = ctx.json["matches"][0];
  ASSERT_EQ(m["before"].size(), 1u);
  ASSERT_EQ(m["after"].size(), 1u);
  EXPECT_EQ(m["before"][0]["text"], "line one");
  EXPECT_EQ(m["after"][0]["text"], "line three");
  EXPECT_EQ(m["before"][0]["line"].get<int>() + 1, m["line"].get<int>());
  EXPECT_EQ(m["after"][0]["line"].get<int>() - 1, m["line"].get<int>());

  auto limited = cli.json({"grep", "line", "--max-matches", "2", "--kb", "k"});
  EXPECT_EQ(limited.status, 0);
  EXPECT_EQ(limited.json["matches"].size(), 2u);
  EXPECT_TRUE(limited.json["truncated"]);

  auto literal = cli.json({"grep", "-F", "(", "--kb", "k"});
  EXPECT_EQ(literal.status, 0);
  EXPECT_TRUE(literal.json["matches"].empty());

  auto bad = cli.json({"grep", "(unclosed", "--kb", "k"});
  expect_error(bad, Code::invalid_argument);
  EXPECT_NE(bad.json["error"]["message"].get<std::string>().find("missing )"), std::string::npos)
      << bad.json["error"]["message"];
}

TEST_F(CliTest, UnknownKbIsNotFoundEverywhere) {
  make_kb();
  for (const auto& args : std::vector<std::vector<std::string>>{
           {"search", "x", "--kb", "nope"},
           {"search", "x", "--kb", "nope", "--mode", "hybrid"},
           {"grep", "x", "--kb", "nope"},
           {"docs", "list", "--kb", "nope"},
           {"docs", "get", "01ABCDEFGHJKMNPQRSTVWXYZ01", "--kb", "nope"},
           {"kb", "describe", "nope"},
           {"kb", "set", "nope", "description=x"},
           {"kb", "delete", "nope", "--yes"},
           {"status", "--kb", "nope"},
           {"ingest", dir.path().string(), "--kb", "nope"}}) {
    SCOPED_TRACE(Cli::join(args));
    expect_error(cli.json(args), Code::not_found);
  }
}

TEST_F(CliTest, StatusAndHumanOutput) {
  make_kb();
  ingest_one("a.md", "# A\n\nthe ibis wades\n");
  auto st = cli.json({"status"});
  ASSERT_EQ(st.status, 0);
  EXPECT_FALSE(st.json["data_dir"].get<std::string>().empty());
  ASSERT_EQ(st.json["knowledge_bases"].size(), 1u);
  EXPECT_EQ(st.json["knowledge_bases"][0]["documents"], 1);
  EXPECT_EQ(st.json["knowledge_bases"][0]["index_status"]["keyword"], "ready");
  auto human = cli.text({"search", "ibis", "--kb", "k"});
  EXPECT_EQ(human.status, 0);
  EXPECT_NE(human.out.find("a.md"), std::string::npos) << human.out;
  auto version = cli.text({"--version"});
  EXPECT_EQ(version.status, 0);
  EXPECT_NE(version.out.find("quarry"), std::string::npos);
}

// The default mode is auto (docs/search.md). On a KB without an embedder that is keyword search;
// the human output does not nag about it on every search, while --json still reports why and a
// mode the user named still prints its note.
TEST_F(CliTest, DefaultModeIsAutoAndQuietWithoutAnEmbedder) {
  make_kb();
  ingest_one("a.md", "# A\n\nthe ibis wades\n");
  auto j = cli.json({"search", "ibis", "--kb", "k"});
  ASSERT_EQ(j.status, 0) << j.out << j.err;
  EXPECT_EQ(j.json["mode"], "keyword");
  ASSERT_EQ(j.json["degraded"].size(), 1u);
  EXPECT_EQ(j.json["degraded"][0].get<std::string>().rfind("no_embedder:", 0), 0u);

  auto quiet = cli.text({"search", "ibis", "--kb", "k"});
  EXPECT_EQ(quiet.status, 0);
  EXPECT_NE(quiet.out.find("a.md"), std::string::npos) << quiet.out;
  EXPECT_EQ(quiet.err.find("no_embedder"), std::string::npos) << quiet.err;
  for (const char* mode : {"auto", "hybrid"}) {
    auto named = cli.text({"search", "ibis", "--kb", "k", "--mode", mode});
    EXPECT_EQ(named.status, 0);
    EXPECT_NE(named.err.find("note: no_embedder"), std::string::npos) << mode << ": " << named.err;
  }
  auto keyword = cli.json({"search", "ibis", "--kb", "k", "--mode", "keyword"});
  EXPECT_TRUE(keyword.json["degraded"].empty());
}

TEST_F(CliTest, SubjectsThroughTheCli) {
  make_kb("crm", {"--subject-keys", "contact_id,company_id"});
  write_file(src / "n.md", "# N\n\nrenewal discussion\n");
  auto none = cli.json({"ingest", (src / "n.md").string(), "--kb", "crm"});
  EXPECT_EQ(none.status, exit_status(Code::invalid_argument)) << none.out;
  auto one = cli.json(
      {"ingest", (src / "n.md").string(), "--kb", "crm", "--metadata", R"({"contact_id": "c7"})"});
  ASSERT_EQ(one.status, 0) << one.out;
  auto hits = cli.json({"search", "renewal", "--kb", "crm"}).json["hits"];
  ASSERT_EQ(hits.size(), 1u);
  EXPECT_EQ(hits[0]["subject"], json::parse(R"({"key": "contact_id", "value": "c7"})"));
  auto del = cli.json({"docs", "delete", "--kb", "crm", "--where", R"({"contact_id": "c7"})"});
  EXPECT_EQ(del.json["deleted"].size(), 1u);
  EXPECT_TRUE(cli.json({"search", "renewal", "--kb", "crm"}).json["hits"].empty());
}

TEST_F(CliTest, BusyWriterExitsWithBusy) {
  make_kb();
  write_file(src / "a.md", "# A\n\nx\n");
  int fd = ::open((cli.data_dir() + "/write.lock").c_str(), O_RDWR | O_CREAT, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(flock(fd, LOCK_EX), 0);
  auto r = cli.run({"--data-dir", cli.data_dir(), "--json", "--lock-timeout", "100", "ingest",
                    (src / "a.md").string(), "--kb", "k"},
                   "");
  ::close(fd);
  // One file that failed with busy is that file's error.
  EXPECT_EQ(r.status, exit_status(Code::busy)) << r.out;
  // readers are not blocked
  auto list = cli.json({"kb", "list"});
  EXPECT_EQ(list.status, 0);
}

}  // namespace
}  // namespace quarry::e2e

namespace quarry::e2e {
namespace {

// Vector and hybrid search from the command line, through the embedded store on disk: each
// command is its own process, so this also checks that vectors written by `ingest` are found
// by a later `search` process.
TEST_F(CliTest, EmbedderKbServesVectorAndHybridAcrossProcesses) {
  auto created = cli.json({"kb", "create", "sem", "--embedder", "hash:128"});
  ASSERT_EQ(created.status, 0) << created.out << created.err;
  EXPECT_EQ(created.json["config"]["embedder"]["provider"], "hash:128");
  EXPECT_EQ(created.json["config"]["modes"].size(), 5u);
  EXPECT_EQ(created.json["revision"].get<std::string>().size(), 16u);

  const std::string docs = (dir / "docs").string();
  quarry::testing::write_file(docs + "/rockets.md",
                              "# Rockets\n\nA launch vehicle burns kerosene to reach orbit.\n");
  quarry::testing::write_file(docs + "/bread.md",
                              "# Bread\n\nSourdough dough proofs overnight with a starter.\n");
  // Without --wait, ingest leaves the vectors pending: vector search has nothing yet and
  // says so, and `status` names the pending documents.
  auto ing = cli.json({"ingest", docs, "--kb", "sem"});
  ASSERT_EQ(ing.status, 0) << ing.out << ing.err;
  for (const auto& item : ing.json["items"]) EXPECT_EQ(item["vector_status"], "not_built") << item;
  auto early = cli.json({"search", "rocket orbit launches", "--kb", "sem", "--mode", "vector"});
  ASSERT_EQ(early.status, 0) << early.err;
  EXPECT_TRUE(early.json["hits"].empty());
  EXPECT_EQ(early.json["index_status"]["vector"], "not_built");
  auto st = cli.json({"status", "--kb", "sem"});
  EXPECT_EQ(st.json["knowledge_bases"][0]["vectors"]["pending"], 2) << st.out;

  // `reindex` embeds them; a second `ingest --wait` of the same files has nothing to do.
  auto re = cli.json({"reindex", "--kb", "sem"});
  ASSERT_EQ(re.status, 0) << re.out << re.err;
  EXPECT_EQ(re.json["reindex"][0]["documents"], 2) << re.out;
  EXPECT_EQ(re.json["reindex"][0]["pending"], 0);
  auto again = cli.json({"ingest", docs, "--kb", "sem", "--wait"});
  ASSERT_EQ(again.status, 0) << again.out << again.err;
  EXPECT_EQ(again.json["vectors"]["documents"], 0) << again.out;
  st = cli.json({"status", "--kb", "sem"});
  EXPECT_EQ(st.json["knowledge_bases"][0]["vectors"]["ready"], 2) << st.out;
  EXPECT_EQ(st.json["knowledge_bases"][0]["vectors"]["stored_vectors"], 2) << st.out;

  auto vec = cli.json({"search", "rocket orbit launches", "--kb", "sem", "--mode", "vector"});
  ASSERT_EQ(vec.status, 0) << vec.err;
  EXPECT_EQ(vec.json["mode"], "vector");
  ASSERT_FALSE(vec.json["hits"].empty());
  EXPECT_EQ(vec.json["hits"][0]["filename"], "rockets.md");
  EXPECT_EQ(vec.json["hits"][0]["metric"], "cosine_distance");
  EXPECT_EQ(vec.json["index_status"]["vector"], "ready");

  auto hyb =
      cli.json({"search", "sourdough", "--kb", "sem", "--mode", "hybrid", "--fusion", "rrf"});
  ASSERT_EQ(hyb.status, 0) << hyb.err;
  EXPECT_EQ(hyb.json["mode"], "hybrid");
  EXPECT_EQ(hyb.json["hits"][0]["filename"], "bread.md");
  EXPECT_EQ(hyb.json["hits"][0]["metric"], "rrf");
  EXPECT_TRUE(hyb.json["per_mode"].contains("keyword"));
  EXPECT_TRUE(hyb.json["per_mode"].contains("vector"));

  // A KB without an embedder: vector is refused with mode_unavailable (exit 12).
  ASSERT_EQ(cli.json({"kb", "create", "plain"}).status, 0);
  auto refused = cli.json({"search", "x", "--kb", "plain", "--mode", "vector"});
  EXPECT_EQ(refused.status, 12);
  EXPECT_EQ(refused.json["error"]["code"], "mode_unavailable");
}

}  // namespace
}  // namespace quarry::e2e
