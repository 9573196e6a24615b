// --targets FILE (docs/raw-format.md, "Targets"): the requests every worker cycles through instead of --url's,
// one per line, `METHOD URL` or `METHOD URL @BODYFILE`; bodies are read once per distinct file, at start. The
// counterpart of rust-reqwest/harness/src/targets.rs.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace harness {

struct Target {
    std::string method;                       // GET, POST or PUT
    std::string url;                          // checked as --url is
    std::shared_ptr<const std::string> body;  // null: the line named none
};

/// Reads a body file (an absolute path); throws std::runtime_error with one line saying why it cannot.
using ReadBody = std::function<std::string(const std::string& path)>;

/// The targets of a file's `text`, bodies read by `read` (once per distinct path: the runner repeats a body over
/// its hosts). Throws UsageError naming `file` and the line: `--targets FILE, line N: why`.
std::vector<Target> parse_targets(const std::string& file, const std::string& text, const ReadBody& read);

/// The targets of `file`, their bodies read from disk (at most 1 GiB each). Throws UsageError.
std::vector<Target> read_targets(const std::string& file);

}  // namespace harness
