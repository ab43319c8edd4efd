// Defined (persistent) domains: the XML of each kept as <root>/NAME.xml, as libvirt keeps them in
// /etc/libvirt/qemu/ (`qlaunch define`, `undefine`, `edit`), and the autostart mark of each as a
// symlink <root>/autostart/NAME.xml -> ../NAME.xml (libvirt's layout too). The root is
// $QLAUNCH_CONFIG_DIR, else /etc/qlaunch/domains; it is made root-only (0700), files 0600.
// A definition is written whole or not at all: a temporary file beside it, fsync'd, renamed over
// it, the directory fsync'd; writers take the root's lock.
#pragma once

#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace qlaunch::launcher {

// $QLAUNCH_CONFIG_DIR, else /etc/qlaunch/domains.
std::filesystem::path DefaultConfigRoot();

// "domain 'NAME' is not defined (no <root>/NAME.xml)".
class NotDefinedError : public std::runtime_error {
 public:
  NotDefinedError(const std::string& name, const std::filesystem::path& file);
};

class DefinedDomains {
 public:
  explicit DefinedDomains(std::filesystem::path root = DefaultConfigRoot());
  const std::filesystem::path& root() const { return root_; }

  // <root>/NAME.xml (std::invalid_argument for a name that is no safe file name: CheckDomainName).
  std::filesystem::path FileOf(const std::string& name) const;
  bool IsDefined(const std::string& name) const;
  // The names of the definitions (NAME.xml files; no hidden or temporary ones), sorted; none when
  // the root does not exist.
  std::vector<std::string> Names() const;
  // Throws NotDefinedError.
  std::string Read(const std::string& name) const;

  // Runs fn while holding the exclusive flock on the root (made 0700 if missing).
  void WithLock(const std::function<void()>& fn) const;
  // Writes the definition atomically (call under WithLock).
  void Write(const std::string& name, const std::string& xml) const;
  // Removes the definition and its autostart mark (call under WithLock); throws NotDefinedError.
  void Remove(const std::string& name) const;

  bool Autostart(const std::string& name) const;
  // Sets or clears the mark (call under WithLock); throws NotDefinedError.
  void SetAutostart(const std::string& name, bool on) const;

 private:
  std::filesystem::path AutostartLink(const std::string& name) const;
  std::filesystem::path root_;
};

}  // namespace qlaunch::launcher
