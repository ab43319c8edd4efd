// qlaunch edit: edit a defined domain's XML in $EDITOR, like `virsh edit`: only an XML that
// validates is kept; otherwise the reasons, and (on a terminal) the edit offered again.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>

#include <CLI/CLI.hpp>

#include "common/unique_fd.h"
#include "launcher/cli/arg_kind.h"
#include "launcher/cli/command.h"
#include "launcher/host/state_dir.h"
#include "launcher/lifecycle/start/definition.h"

namespace qlaunch::launcher {

namespace {

namespace fs = std::filesystem;

struct Options {
  std::string name;
};

// $VISUAL, else $EDITOR, else vi: run by the shell as virsh does, so "emacs -nw" works.
std::string Editor() {
  for (const char* var : {"VISUAL", "EDITOR"})
    if (const char* v = std::getenv(var); v && *v) return v;
  return "vi";
}

// The editor's exit status (128 + signal when killed).
int RunEditor(const std::string& editor, const fs::path& file) {
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("edit: cannot run the editor: fork failed");
  if (pid == 0) {
    const std::string script = editor + " \"$1\"";
    ::execl("/bin/sh", "sh", "-c", script.c_str(), "sh", file.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// The copy the editor works on: $TMPDIR (else /tmp)/qlaunch-edit-NAME-XXXXXX.xml, mode 0600.
fs::path MakeCopy(const std::string& name, const std::string& xml) {
  const char* tmpdir = std::getenv("TMPDIR");
  std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/qlaunch-edit-" + name + "-XXXXXX.xml";
  UniqueFd fd(::mkstemps(path.data(), 4));
  if (fd.get() < 0) throw std::runtime_error("edit: cannot create a copy to edit in " + fs::path(path).parent_path().string());
  AtomicWrite(path, xml);
  return path;
}

// On a terminal: "Edit again? [y/n]" until answered; without one there is nobody to ask.
bool OfferAgain() {
  if (!::isatty(STDIN_FILENO) || !::isatty(STDERR_FILENO)) return false;
  for (;;) {
    std::fprintf(stderr, "Failed. Edit again? [y/n]: ");
    std::string answer;
    if (!std::getline(std::cin, answer)) return false;
    if (answer == "y" || answer == "Y") return true;
    if (answer == "n" || answer == "N") return false;
  }
}

int Run(const Options& o) {
  DefinedDomains defined;
  const std::string original = defined.Read(o.name);
  const fs::path copy = MakeCopy(o.name, original);
  const std::string editor = Editor();
  for (;;) {
    if (int rc = RunEditor(editor, copy); rc != 0) {
      fs::remove(copy);
      throw std::runtime_error("edit: the editor '" + editor + "' failed (status " + std::to_string(rc) +
                               "): domain '" + o.name + "' is unchanged");
    }
    const std::string edited = ReadSmallFile(copy).value_or("");
    if (edited == original) {
      fs::remove(copy);
      std::printf("Domain '%s' XML configuration not changed.\n", o.name.c_str());
      return 0;
    }
    domain::DomainDef def;
    std::vector<Diagnostic> problems = CheckDefinition(edited, copy.string(), &def);
    if (!HasErrors(problems) && def.name != o.name) {
      Diagnostic d;
      d.file = copy.string();
      d.line = def.name_line;
      d.element = "name";
      d.message = "the edit renames domain '" + o.name + "' to '" + def.name +
                  "': edit does not rename (define the copy under its new name, then undefine the old one)";
      problems.push_back(d);
    }
    for (const Diagnostic& d : problems) std::fprintf(stderr, "%s\n", d.ToString().c_str());
    if (!HasErrors(problems)) {
      try {
        DefineDomain(defined, def, edited, &original);
      } catch (const std::exception& e) {
        throw std::runtime_error(std::string(e.what()) + "; the edit is kept in " + copy.string());
      }
      fs::remove(copy);
      std::printf("Domain '%s' XML configuration edited.\n", o.name.c_str());
      return 0;
    }
    std::fprintf(stderr, "qlaunch: error: edit: the edited XML does not validate: domain '%s' is unchanged (%s)\n",
                 o.name.c_str(), defined.FileOf(o.name).c_str());
    if (OfferAgain()) continue;
    if (::isatty(STDIN_FILENO) && ::isatty(STDERR_FILENO)) {
      fs::remove(copy);
    } else {
      std::fprintf(stderr,
                   "qlaunch: edit: no terminal to offer the edit again; the edit is kept in %s (fix it and "
                   "`qlaunch define %s`, or run `qlaunch edit %s` again)\n",
                   copy.c_str(), copy.c_str(), o.name.c_str());
    }
    return 1;
  }
}

}  // namespace

void AddEditCommand(CLI::App& app, CommandAction* action) {
  auto o = std::make_shared<Options>();
  CLI::App* sub = app.add_subcommand(
      "edit",
      "Edit a defined domain's XML, like `virsh edit`: $VISUAL, else $EDITOR, else vi (run by /bin/sh)\n"
      "opens a copy ($TMPDIR/qlaunch-edit-NAME-*.xml); once it exits, the copy is checked as `define`\n"
      "checks an XML and replaces the definition only when it validates and keeps the domain's name.\n"
      "Otherwise the reasons are printed (file and line of the copy) and the definition stays as it\n"
      "was: on a terminal, the edit is offered again ([y/n]); without one, the command fails (exit 1)\n"
      "and the copy is kept, named. A running domain runs on as it was started; the next start uses\n"
      "the new definition.\n"
      "Example: EDITOR=nano qlaunch edit vm1");
  SetKind(sub->add_option("NAME", o->name, "the domain's <name>"), ArgKind::kDefined)->required();
  sub->callback([o, action] { *action = [o] { return Run(*o); }; });
}

}  // namespace qlaunch::launcher
