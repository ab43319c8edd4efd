#include "launcher/cli/input_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include <CLI/CLI.hpp>

#include "launcher/cli/arg_kind.h"
#include "launcher/lifecycle/start/definition.h"

namespace qlaunch::launcher {

std::string InputFileProblem(const std::string& path, bool stdin_allowed) {
  if (path == "-" && stdin_allowed) return "";
  // Opened as it will be read (as the user running qlaunch), and looked at through that fd.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return "cannot read " + path + ": " + std::strerror(errno);
  struct stat st {};
  const int rc = ::fstat(fd, &st);
  ::close(fd);
  if (rc != 0) return "cannot read " + path + ": " + std::strerror(errno);
  if (S_ISDIR(st.st_mode)) return "cannot read " + path + ": " + std::strerror(EISDIR);
  return "";
}

std::string InputFilesProblem(const CLI::App& sub) {
  for (const CLI::Option* opt : sub.get_options()) {
    const ArgKind kind = KindOf(*opt);
    const bool or_stdin = kind == ArgKind::kInputOrStdin || kind == ArgKind::kInputOrDefined;  // a NAME is a file by now
    if ((kind != ArgKind::kInputFile && !or_stdin) || opt->count() == 0) continue;
    for (const std::string& path : opt->results())
      if (std::string why = InputFileProblem(path, or_stdin); !why.empty()) return why;
  }
  return "";
}

std::string ReadStdinXml() {
  std::ostringstream ss;
  ss << std::cin.rdbuf();
  if (ss.str().empty()) throw std::runtime_error("<stdin>: no domain XML on standard input");
  return ss.str();
}

void AddDomainInput(CLI::App* sub, std::string* domain_xml) {
  SetKind(sub->add_option("DOMAIN.xml", *domain_xml,
                          "libvirt domain XML, or the NAME of a defined domain (`define`; a file of that name\n"
                          "comes first); - reads it from standard input"),
          ArgKind::kInputOrDefined)
      ->required()
      ->transform([](const std::string& arg) { return DefinitionOrFile(arg); });
}

}  // namespace qlaunch::launcher
