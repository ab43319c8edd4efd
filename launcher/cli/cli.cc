#include "launcher/cli/cli.h"

#include <cstdio>
#include <cstring>
#include <exception>
#include <set>
#include <sstream>
#include <string_view>

#include <CLI/CLI.hpp>

#include "common/diagnostic.h"
#include "launcher/cli/command.h"
#include "launcher/cli/input_file.h"
#include "launcher/cli/reference.h"
#include "launcher/cli/top_help.h"
#include "launcher/cli/usage_error.h"
#include "launcher/cli/verb_table.h"
#include "launcher/cli/version.h"

namespace qlaunch::launcher {

namespace {

// "qlaunch: error: VERB: message", the style of every error qlaunch prints itself.
void PrintError(const std::string& verb, const std::string& message) {
  std::fprintf(stderr, "qlaunch: error: %s%s\n", verb.empty() ? "" : (verb + ": ").c_str(), message.c_str());
}

// A usage error, with where to look (an unknown command says where already).
int UsageFailure(const std::string& verb, const std::string& message) {
  const std::string hint = verb.empty() ? " (see 'qlaunch --help')" : " (see 'qlaunch " + verb + " --help')";
  PrintError(verb, message + (message.starts_with("unknown command:") ? "" : hint));
  return 2;
}

// CLI11's words for what was wrong, said as a user reads them. (By type: CLI11 names some
// errors after the subcommand that raised them.)
std::string ParseErrorMessage(const CLI::ParseError& e) {
  const std::string what = e.what();
  if (dynamic_cast<const CLI::ExtrasError*>(&e) && what.find(": ") != std::string::npos) {
    std::istringstream words(what.substr(what.find(": ") + 2));
    std::string first;
    words >> first;
    return first.starts_with("-") && first.size() > 1 ? "unknown option '" + first + "'"
                                                      : "unexpected argument '" + first + "'";
  }
  if (dynamic_cast<const CLI::RequiredError*>(&e)) {
    if (what.starts_with("A subcommand")) return "no command given";
    if (what.ends_with(" is required")) return "missing " + what.substr(0, what.size() - std::strlen(" is required"));
  }
  if (dynamic_cast<const CLI::ArgumentMismatch*>(&e) && what.ends_with(" missing") && what.find(": ") != std::string::npos)
    return what.substr(0, what.find(": ")) + " needs a value";
  if (dynamic_cast<const CLI::ExcludesError*>(&e)) {
    const size_t at = what.find(" excludes ");
    if (at != std::string::npos) return what.substr(0, at) + " and " + what.substr(at + 10) + " exclude each other";
  }
  return what;
}

const CLI::App* ParsedVerb(const CLI::App& app) {
  const std::vector<CLI::App*> parsed = app.get_subcommands();
  return parsed.empty() ? nullptr : parsed.front();
}

}  // namespace

std::string UnknownVerbMessage(std::string_view word) {
  const std::string closest = ClosestVerb(word);
  const std::string hint = closest.empty() ? "'qlaunch --help' lists the commands" : "did you mean '" + closest + "'?";
  return "unknown command: '" + std::string(word) + "' (" + hint + ")";
}

void BuildCli(CLI::App& app, CommandAction* action, std::string_view only) {
  app.name("qlaunch");
  app.description("qlaunch: start large hugepage QEMU VMs fast and NUMA-correctly, from libvirt domain XML.");
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("qlaunch ") + VersionString());
  const VerbInfo* alone = only == "completion" ? nullptr : FindVerb(only);  // completion walks the whole tree
  std::set<void (*)(CLI::App&, CommandAction*)> added;  // the lifecycle verbs share one function
  for (const VerbInfo& v : AllVerbs())
    if ((!alone || alone->add == v.add) && added.insert(v.add).second) v.add(app, action);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
    sub->footer(VerbExitStatusHelp(sub->get_name()));
}

int RunCli(int argc, char** argv) {
  const std::string first = argc > 1 ? argv[1] : "";
  if (argc < 2) return UsageFailure("", "no command given");
  if (first == "--help" || first == "-h") {
    std::fputs(TopHelp().c_str(), stdout);
    return 0;
  }
  // An unknown verb is named as such, also before --help (which must not answer 0 for it).
  if (!first.starts_with("-") && !FindVerb(first)) return UsageFailure("", UnknownVerbMessage(first));
  CLI::App app;
  CommandAction action;
  // `qlaunch VERB ...` builds VERB alone: the whole tree took 0.5 ms of every start.
  BuildCli(app, &action, first);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    const CLI::App* sub = ParsedVerb(app);
    std::fputs(sub ? sub->help("qlaunch").c_str() : TopHelp().c_str(), stdout);
    return 0;
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const CLI::App* sub = ParsedVerb(app);
    return UsageFailure(sub ? sub->get_name() : (FindVerb(first) ? first : ""), ParseErrorMessage(e));
  }
  const CLI::App* sub = ParsedVerb(app);
  const std::string verb = sub ? sub->get_name() : "";
  if (!action) return UsageFailure(verb, "nothing to do");
  // The files the verb reads: a missing, empty or unreadable one is an error, before it runs.
  if (sub)
    if (std::string why = InputFilesProblem(*sub); !why.empty()) {
      PrintError(verb, why);
      return 1;
    }
  try {
    return action();
  } catch (const UsageError& e) {
    return UsageFailure(verb, e.what());
  } catch (const DiagnosticError& e) {
    for (const auto& d : e.diagnostics()) std::fprintf(stderr, "%s\n", d.ToString().c_str());
  } catch (const std::exception& e) {
    PrintError("", e.what());
  }
  return 1;
}

}  // namespace qlaunch::launcher
