// quarry secret set|list|delete — API keys and DSNs, encrypted at rest (quarry/secrets.h).
// A value is only ever read from stdin (never argv, which `ps` and shell history show) and is
// never printed.
#include <termios.h>
#include <unistd.h>

#include <iostream>
#include <sstream>

#include "cli/commands.h"
#include "quarry/secrets.h"

namespace quarry::cli {
namespace {

// Turns terminal echo off for its lifetime (and back on even when reading throws).
class NoEcho {
 public:
  NoEcho() {
    if (::tcgetattr(STDIN_FILENO, &saved_) == 0) {
      termios quiet = saved_;
      quiet.c_lflag &= ~static_cast<tcflag_t>(ECHO);
      active_ = ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &quiet) == 0;
    }
  }
  ~NoEcho() {
    if (active_) ::tcsetattr(STDIN_FILENO, TCSAFLUSH, &saved_);
  }

 private:
  termios saved_{};
  bool active_ = false;
};

std::string read_secret_value(const std::string& name) {
  std::string value;
  if (::isatty(STDIN_FILENO)) {
    std::cerr << "Value for " << name << " (input hidden): " << std::flush;
    {
      NoEcho quiet;
      std::getline(std::cin, value);
    }
    std::cerr << "\n";
  } else {
    std::ostringstream ss;
    ss << std::cin.rdbuf();
    value = ss.str();
    // `echo KEY | quarry secret set` adds a newline that is not part of the key.
    if (!value.empty() && value.back() == '\n') value.pop_back();
  }
  if (!value.empty() && value.back() == '\r') value.pop_back();
  return value;
}

}  // namespace

void add_secret_commands(CLI::App& app, Globals& g, int& /*exit_code*/) {
  auto* secret = app.add_subcommand(
      "secret", "Store API keys and other secrets, encrypted at rest in the data directory");
  secret->require_subcommand(1);

  auto name = std::make_shared<std::string>();
  auto* set = secret->add_subcommand(
      "set", "Store a secret; the value is read from stdin (prompted without echo on a terminal)");
  set->add_option("name", *name, "Secret name, e.g. OPENAI_API_KEY")->required();
  set->callback([&g, name] {
    // Refuse a bad name before prompting, not after the user has pasted the key.
    if (!valid_secret_name(*name))
      throw Error(Code::invalid_argument,
                  "invalid secret name '" + *name +
                      "': use letters, digits and '_', not starting with a digit (e.g. "
                      "OPENAI_API_KEY)",
                  {{"field", "name"}});
    set_secret(g.data_dir, *name, read_secret_value(*name));
    if (g.json)
      print_json({{"name", *name}, {"stored", true}});
    else
      std::cout << "secret " << *name << " stored (encrypted) in " << g.data_dir << "\n";
  });

  auto* list = secret->add_subcommand("list", "List secret names (never values)");
  list->callback([&g] {
    auto names = secret_names(g.data_dir);
    if (g.json) {
      print_json({{"secrets", names}});
      return;
    }
    if (names.empty()) std::cout << "no secrets (add one with `quarry secret set NAME`)\n";
    for (const auto& n : names) std::cout << n << "\n";
  });

  auto del_name = std::make_shared<std::string>();
  auto* del = secret->add_subcommand("delete", "Delete a secret");
  del->add_option("name", *del_name, "Secret name")->required();
  del->callback([&g, del_name] {
    if (!delete_secret(g.data_dir, *del_name))
      throw Error(Code::not_found, "no secret named " + *del_name + " (see `quarry secret list`)",
                  {{"name", *del_name}});
    if (g.json)
      print_json({{"name", *del_name}, {"deleted", true}});
    else
      std::cout << "secret " << *del_name << " deleted\n";
  });
}

}  // namespace quarry::cli
