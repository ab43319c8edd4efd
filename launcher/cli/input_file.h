// The files a verb reads, checked before it runs (RunCli): a file that is missing, a directory or
// unreadable is an error naming it (exit status 1, as any error), not a usage error. What is in
// it (nothing at all, blanks, something else than expected) is for the verb's parser to say,
// with file and line ("x.xml: error: file is empty; expected a libvirt <domain> XML document").
// "-" (where the verb takes it) is standard input, read once by the verb.
#pragma once

#include <string>

namespace CLI {
class App;
}

namespace qlaunch::launcher {

// "" when `path` can be read as an input file, else what is wrong ("cannot read x.xml: No such
// file or directory", "cannot read /tmp: Is a directory").
std::string InputFileProblem(const std::string& path, bool stdin_allowed);

// The first problem of the input files given to the parsed subcommand `sub` (its options of
// kind kInputFile and kInputOrStdin), or "".
std::string InputFilesProblem(const CLI::App& sub);

// The DOMAIN.xml argument of start and run: a libvirt domain XML file, the NAME of a defined
// domain (read as its definition's path; a file of that name comes first) or - (standard input).
void AddDomainInput(CLI::App* sub, std::string* domain_xml);

// The whole of standard input; an error saying so when it is empty.
std::string ReadStdinXml();

}  // namespace qlaunch::launcher
