#include "launcher/cli/arg_kind.h"

#include <CLI/CLI.hpp>

namespace qlaunch::launcher {

namespace {

struct KindName {
  ArgKind kind;
  const char* type_name;  // what --help shows
};
constexpr KindName kNames[] = {
    {ArgKind::kInputFile, "FILE"}, {ArgKind::kInputOrStdin, "FILE|-"}, {ArgKind::kPath, "PATH"},
    {ArgKind::kDir, "DIR"},        {ArgKind::kDomain, "DOMAIN"},       {ArgKind::kUser, "USER[:GROUP]"},
    {ArgKind::kVerb, "COMMAND"},   {ArgKind::kInputOrDefined, "FILE|NAME|-"}, {ArgKind::kDefined, "DEFINED"},
};

}  // namespace

CLI::Option* SetKind(CLI::Option* opt, ArgKind kind) {
  for (const KindName& k : kNames)
    if (k.kind == kind) opt->type_name(k.type_name);
  return opt;
}

ArgKind KindOf(const CLI::Option& opt) {
  std::string type = opt.get_type_name();
  type = type.substr(0, type.find(':', type.find(']') == std::string::npos ? 0 : type.find(']')));
  for (const KindName& k : kNames)
    if (type == k.type_name) return k.kind;
  return ArgKind::kText;
}

}  // namespace qlaunch::launcher
