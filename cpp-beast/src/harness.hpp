// The clientbench driver harness for C++ clients (docs/raw-format.md): command line, W worker threads,
// start gate, timing, failure accounting and the clientbench.raw/1 JSON document. A driver supplies only
// how to open a session (one keep-alive connection) and how to do one GET on it.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace harness {

/// What one GET returned: the status and the body bytes read (the whole body).
struct Fetch {
    int status = 0;
    std::uint64_t bytes = 0;
};

/// One worker's client. `get` throws (preferably a beast_client::Error subclass, whose type name ends up
/// in the failure reason) on any transport or protocol error; non-2xx statuses are returned.
class Session {
public:
    virtual ~Session();
    virtual Fetch get(const std::string& url) = 0;
};

struct Driver {
    const char* prog;             // program name for messages
    std::string language;         // client.language
    std::string library;          // client.library
    std::string library_version;  // client.library_version
    std::string notes;            // client.notes
    std::string help;             // extra --help text (what the driver measures)
    std::function<std::unique_ptr<Session>(double timeout_s)> open;
};

/// Parses the contract's flags, runs the workload, prints the document; returns the exit status.
int main(int argc, char** argv, const Driver& driver);

}  // namespace harness
