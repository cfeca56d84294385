// quarry completion bash|zsh|fish: a shell completion script written from the command tree
// itself (every command, sub-command and flag CLI11 knows), so it cannot drift from the program.
//   bash:  source <(quarry completion bash)     (or save it under bash-completion's directory)
//   zsh:   source <(quarry completion zsh)      (the bash script, through zsh's bashcompinit)
//   fish:  quarry completion fish > ~/.config/fish/completions/quarry.fish
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"

namespace quarry::cli {
namespace {

// One command of the tree: its path ("kb create"; "" for quarry itself), its sub-commands and
// its long and short flags.
struct Node {
  std::string path;
  std::vector<std::string> commands, flags;
};

void collect(const CLI::App& app, const std::string& path, std::vector<Node>& out) {
  Node n;
  n.path = path;
  for (const CLI::App* sub : app.get_subcommands({})) n.commands.push_back(sub->get_name());
  for (const CLI::Option* o : app.get_options()) {
    for (const auto& l : o->get_lnames()) n.flags.push_back("--" + l);
    for (const auto& s : o->get_snames()) n.flags.push_back("-" + s);
  }
  out.push_back(n);
  for (const CLI::App* sub : app.get_subcommands({}))
    collect(*sub, path.empty() ? sub->get_name() : path + " " + sub->get_name(), out);
}

std::string join(const std::vector<std::string>& words) {
  std::string s;
  for (const auto& w : words) s += (s.empty() ? "" : " ") + w;
  return s;
}

// Bash: the words typed so far that are commands select the node; a word starting with '-'
// completes its flags, any other its sub-commands (files otherwise, through -o default). Keys
// are "_" for the top level, "_ kb create" below it (bash refuses an empty key).
std::string bash_script(const std::vector<Node>& tree, const std::vector<std::string>& globals) {
  std::ostringstream s;
  s << "# quarry completion for bash (quarry completion bash)\n"
    << "declare -gA _quarry_commands=(\n";
  for (const auto& n : tree)
    s << "  [\"_" << (n.path.empty() ? "" : " " + n.path) << "\"]=\"" << join(n.commands) << "\"\n";
  s << ")\ndeclare -gA _quarry_flags=(\n";
  for (const auto& n : tree) {
    std::vector<std::string> flags = n.flags;
    if (!n.path.empty()) flags.insert(flags.end(), globals.begin(), globals.end());
    s << "  [\"_" << (n.path.empty() ? "" : " " + n.path) << "\"]=\"" << join(flags) << "\"\n";
  }
  s << ")\n"
    << "_quarry() {\n"
    << "  local cur=\"${COMP_WORDS[COMP_CWORD]}\" node=_ w i\n"
    << "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
    << "    w=\"${COMP_WORDS[i]}\"\n"
    << "    [[ $w == -* ]] && continue\n"
    << "    [[ \" ${_quarry_commands[$node]} \" == *\" $w \"* ]] && node=\"$node $w\"\n"
    << "  done\n"
    << "  if [[ $cur == -* ]]; then\n"
    << "    COMPREPLY=($(compgen -W \"${_quarry_flags[$node]}\" -- \"$cur\"))\n"
    << "  else\n"
    << "    COMPREPLY=($(compgen -W \"${_quarry_commands[$node]}\" -- \"$cur\"))\n"
    << "  fi\n"
    << "}\n"
    << "complete -o default -F _quarry quarry\n";
  return s.str();
}

// Fish: a command completes its sub-commands while none of them is on the line yet, and its
// flags once it is the deepest command on the line (`__fish_seen_subcommand_from`).
std::string fish_script(const std::vector<Node>& tree) {
  std::ostringstream s;
  s << "# quarry completion for fish (quarry completion fish)\n";
  for (const auto& n : tree) {
    const std::string last =
        n.path.substr(n.path.rfind(' ') == std::string::npos ? 0 : n.path.rfind(' ') + 1);
    std::string when;
    if (n.path.empty()) {
      when = "__fish_use_subcommand";
    } else {
      when = "__fish_seen_subcommand_from " + last;
      if (!n.commands.empty()) when += "; and not __fish_seen_subcommand_from " + join(n.commands);
    }
    if (!n.commands.empty())
      s << "complete -c quarry -n '" << when << "' -f -a '" << join(n.commands) << "'\n";
    for (const auto& f : n.flags) {
      const bool is_long = f.rfind("--", 0) == 0;
      s << "complete -c quarry -n '" << (n.path.empty() ? "true" : when) << "' "
        << (is_long ? "-l " + f.substr(2) : "-s " + f.substr(1)) << "\n";
    }
  }
  return s.str();
}

}  // namespace

void add_completion_command(CLI::App& app, Globals& /*g*/, int& /*exit_code*/) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "completion", "Print a shell completion script: source <(quarry completion bash)");
  cmd->add_option("shell", *shell, "bash | zsh | fish")
      ->required()
      ->check(CLI::IsMember({"bash", "zsh", "fish"}));
  cmd->callback([&app, shell] {
    std::vector<Node> tree;
    collect(app, "", tree);
    std::vector<std::string> globals = tree.front().flags;  // --data-dir, --json, ... anywhere
    if (*shell == "fish") {
      std::cout << fish_script(tree);
    } else if (*shell == "zsh") {
      std::cout << "# quarry completion for zsh (quarry completion zsh): the bash script through "
                   "bashcompinit\n(( $+functions[compdef] )) || { autoload -U +X compinit && "
                   "compinit -u }\nautoload -U +X bashcompinit && bashcompinit\n"
                << bash_script(tree, globals);
    } else {
      std::cout << bash_script(tree, globals);
    }
  });
}

}  // namespace quarry::cli
