// The clientbench driver harness for C++ clients (docs/raw-format.md): command line, W worker threads,
// start gate, the closed or open loop, timing, failure accounting and the clientbench.raw/4 JSON document. A
// driver supplies only how to create a worker's client (one keep-alive connection) and how to do one GET, and
// any other request (an upload, whole or streamed; a streamed download; a target), with it.
#pragma once

#include "beast_client/client.hpp"  // TlsInfo
#include "body.hpp"                 // Outgoing, Answer

#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace harness {

/// What a GET of Client::get returned: the status and the body bytes read (the whole body, not kept).
struct Fetch {
    int status = 0;
    std::uint64_t bytes = 0;
};

/// --phases: where one request's time went (durations of the monotonic clock; a phase that did not happen is 0).
using Phases = beast_client::Phases;

/// One worker's client (owning its keep-alive connection). `get` and `send` throw (preferably a
/// beast_client::Error subclass, whose type name is the failure class) on any transport or protocol error;
/// non-2xx statuses are returned.
class Client {
public:
    virtual ~Client();
    /// GET `url`, the body read whole and counted: the benchmark's hot loop (--url, --download whole).
    virtual Fetch get(const std::string& url) = 0;
    /// Every other request: `method` `url` with `body` (none, one buffer, or Chunks to take as the client sends
    /// them: --upload stream), giving the response body to `answer` as the client reads it (in pieces of at most
    /// answer.piece() bytes when that is not 0: --download stream), never keeping it. Returns the status once the
    /// whole body has been read.
    virtual int send(const std::string& url, const std::string& method, Outgoing& body, Answer& answer) = 0;
    /// --phases (with a Driver::phases): get() and send() that also write the request's phases into `phases`
    /// (zeroed by the caller): the ones Driver::phases names, and `dns` with `resolved` set when a host name was
    /// resolved. The defaults record none.
    virtual Fetch get_phases(const std::string& url, Phases& phases) {
        (void)phases;
        return get(url);
    }
    virtual int send_phases(const std::string& url, const std::string& method, Outgoing& body, Answer& answer,
                            Phases& phases) {
        (void)phases;
        return send(url, method, body, answer);
    }
    /// The negotiated TLS version and cipher of the client's (last) connection; nullopt for plain http or
    /// when the client cannot tell. Worker 0's ends up in the document's client section ("tls").
    virtual std::optional<beast_client::TlsInfo> tls_info() const { return std::nullopt; }
    /// The HTTP version of the client's responses ("HTTP/1.1"), nullopt when it cannot tell. Worker 0's ends
    /// up in the document (client.protocol) once it had a successful response.
    virtual std::optional<std::string> protocol() const { return std::nullopt; }
};

/// What a worker's client is created with: the contract's --timeout, --ca-file and --insecure.
struct ClientOptions {
    double timeout_s = 30.0;
    std::string ca_file;    // https: trust the CA certificates in this PEM file instead of the system's
    bool insecure = false;  // https: do not verify the server's certificate (unsafe)
    /// --client-scope shared: the client serves all W workers at once, with at most this many (W)
    /// connections; 0 for a worker's own client.
    std::size_t max_connections = 0;
};

struct Driver {
    const char* prog;             // program name for messages
    std::string language;         // client.language
    std::string library;          // client.library
    std::string library_version;  // client.library_version
    std::string notes;            // client.notes
    std::string help;             // extra --help text (what the driver measures)
    /// Throws when it cannot. With --ca-file, harness::main first creates one client (before any worker
    /// starts) to check the file: an exception then is a usage error (exit status 2).
    std::function<std::unique_ptr<Client>(const ClientOptions&)> make_client;
    /// Whether one client of make_client may be used by every worker at once (--client-scope shared: get and
    /// send called from W threads). When
    /// not, --client-scope shared exits 3 with "unsupported: " and this reason.
    bool shareable = false;
    std::string not_shareable = "its client cannot be shared by threads";
    /// No C++ driver speaks HTTP/2: --http 2 exits 3 with "unsupported: HTTP/2 (<why>)".
    std::string no_http2 = "the client speaks HTTP/1.1";
    /// What the driver cannot do, each exiting 3 with "unsupported: <flag> (<why>)" when asked; empty: it can.
    std::string no_upload_stream = {};    // --upload stream
    std::string no_download_stream = {};  // --download stream
    std::string no_targets = {};          // --targets
    /// --phases: the phases its client records, through get_phases() / send_phases() (client.phases: some of
    /// "connect", "tls", "send", "wait", "receive", Phases' fields, in this order); "dns" joins them in the
    /// document when a request resolved a host name. Empty: the client records none (--phases then writes no
    /// phases keys).
    std::vector<std::string> phases = {};
};

/// The canonical failure reason of an exception, the same in every language's harness: `<Class>: <message>`,
/// Class one of TimeoutError, TLSError, ConnectionError, ProtocolError, InvalidUrl, InvalidRequest, Cancelled,
/// Error. beast_client::Error subclasses give their type_name(); std::invalid_argument (an invalid method or header)
/// is InvalidRequest; anything else is Error. When the exception's own type is not the class, its name leads
/// the message ("Error: std::bad_alloc", "InvalidRequest: std::invalid_argument: ..."). One line.
/// (A non-2xx response is not an exception: its reason is `status <code>`.)
std::string failure_reason(const std::exception& e);

/// Appends `s` as a JSON string literal (invalid UTF-8 becomes U+FFFD).
void append_json_string(std::string& out, std::string_view s);

/// Parses the contract's flags, runs the workload, prints the document; returns the exit status.
int main(int argc, char** argv, const Driver& driver);

}  // namespace harness
