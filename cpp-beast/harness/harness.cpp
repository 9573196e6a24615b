// The clientbench driver contract (docs/raw-format.md) for C++ clients, shared by beast-driver and
// floor-driver: only how to create a worker's client and do one GET with it differs between them.
//
// W std::threads, each with its own harness::Client (own keep-alive connection); K untimed warmup requests;
// then every worker waits at a start gate: once all are ready, main takes t0 (and the process CPU time)
// and opens the gate, so no timed loop starts before t0. Then N sequential timed GETs per worker (with
// --connection new, a new client, hence a new connection, for every timed request, created inside the
// timed section). Prints one clientbench.raw/1 JSON document on stdout. A failed request's reason is
// `status <code>` or failure_reason() of the exception (harness.hpp). For https:// URLs, --ca-file / --insecure
// reach the clients through ClientOptions, and worker 0's negotiated TLS version and cipher are reported as
// client.tls ({"version", "cipher"}, null for http).
#include "harness.hpp"

#include "beast_client/client.hpp"

#include <cxxabi.h>
#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <new>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <typeinfo>
#include <vector>

namespace harness {
Client::~Client() = default;
}  // namespace harness

namespace {

using Clock = std::chrono::steady_clock;
const char* kProg = "driver";

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// ---- command line -----------------------------------------------------------------------------------

struct Options {
    std::string url;
    long workers = 10;
    long requests = 100;
    long warmup = 0;
    double timeout = 30.0;
    bool new_connection = false;  // --connection new
    std::string ca_file;          // --ca-file
    bool insecure = false;        // --insecure
};

struct UsageError {
    std::string message;
};

const char* kUsage =
    " --url URL [--workers W] [--requests N] [--warmup K] [--timeout SECONDS]\n"
    "        [--connection keep-alive|new] [--ca-file PATH | --insecure]\n"
    "\n"
    "  --url URL          URL every request goes to (http[s]://host:port/path), required\n"
    "  --workers W        threads, each with its own client (default 10)\n"
    "  --requests N       timed requests per worker (default 100)\n"
    "  --warmup K         untimed requests per worker before the timed loop (default 0)\n"
    "  --timeout SECONDS  per-request timeout (default 30)\n"
    "  --connection C     keep-alive: one connection per worker (default); new: a new client and\n"
    "                     connection for every timed request\n"
    "  --ca-file PATH     https: trust the CA certificates in this PEM file instead of the system's\n"
    "  --insecure         https: do not verify the server's certificate (unsafe: for measurements only)\n"
    "  -h, --help         show this help\n";

long parse_int(const std::string& flag, const std::string& text, long min) {
    long value = 0;
    const char* first = text.data();
    const char* last = first + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (text.empty() || ec != std::errc() || ptr != last)
        throw UsageError{flag + " expects an integer, got '" + text + "'"};
    if (value < min) throw UsageError{flag + " must be >= " + std::to_string(min) + ", got " + text};
    return value;
}

double parse_seconds(const std::string& flag, const std::string& text) {
    char* end = nullptr;
    const double value = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
        throw UsageError{flag + " expects a number of seconds, got '" + text + "'"};
    if (!(value > 0)) throw UsageError{flag + " must be > 0, got " + text};
    return value;
}

// Returns nullopt for --help.
std::optional<Options> parse_args(int argc, char** argv) {
    Options o;
    bool have_url = false;
    for (int i = 1; i < argc; ++i) {
        std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") return std::nullopt;
        std::string value;
        bool inline_value = false;
        if (const auto eq = arg.find('='); arg.rfind("--", 0) == 0 && eq != std::string::npos) {
            value = arg.substr(eq + 1);
            arg = arg.substr(0, eq);
            inline_value = true;
        }
        if (arg == "--insecure") {  // a switch: no value
            if (inline_value) throw UsageError{"--insecure takes no value"};
            o.insecure = true;
            continue;
        }
        if (arg != "--url" && arg != "--workers" && arg != "--requests" && arg != "--warmup" && arg != "--timeout" &&
            arg != "--connection" && arg != "--ca-file")
            throw UsageError{"unknown argument '" + std::string(argv[i]) + "'"};
        if (!inline_value) {
            if (i + 1 >= argc) throw UsageError{arg + " expects a value"};
            value = argv[++i];
        }
        if (arg == "--url") {
            if (value.empty()) throw UsageError{"--url must not be empty"};
            o.url = value;
            have_url = true;
        } else if (arg == "--workers") {
            o.workers = parse_int(arg, value, 1);
        } else if (arg == "--requests") {
            o.requests = parse_int(arg, value, 1);
        } else if (arg == "--warmup") {
            o.warmup = parse_int(arg, value, 0);
        } else if (arg == "--connection") {
            if (value != "keep-alive" && value != "new")
                throw UsageError{"--connection must be keep-alive or new, got '" + value + "'"};
            o.new_connection = value == "new";
        } else if (arg == "--ca-file") {
            if (value.empty()) throw UsageError{"--ca-file must not be empty"};
            o.ca_file = value;
        } else {
            o.timeout = parse_seconds(arg, value);
        }
    }
    if (!have_url) throw UsageError{"the following argument is required: --url"};
    if (o.insecure && !o.ca_file.empty()) throw UsageError{"--ca-file and --insecure are mutually exclusive"};
    return o;
}

// ---- JSON output ------------------------------------------------------------------------------------

// Appends s as a JSON string literal. Invalid UTF-8 is replaced with U+FFFD so the document is always
// valid JSON (error messages can quote bytes from the network or the command line).
void json_string(std::string& out, std::string_view s) { harness::append_json_string(out, s); }

}  // namespace

void harness::append_json_string(std::string& out, std::string_view s) {
    static const char* hex = "0123456789abcdef";
    out += '"';
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            switch (c) {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                case '\b': out += "\\b"; break;
                case '\f': out += "\\f"; break;
                default:
                    if (c < 0x20) {
                        out += "\\u00";
                        out += hex[c >> 4];
                        out += hex[c & 0xf];
                    } else {
                        out += static_cast<char>(c);
                    }
            }
            ++i;
            continue;
        }
        // multi-byte sequence: validate (no overlongs, no surrogates, <= U+10FFFF)
        std::size_t len = 0;
        std::uint32_t cp = 0;
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            cp = c & 0x07;
        }
        bool ok = len != 0 && i + len <= s.size();
        for (std::size_t k = 1; ok && k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xc0) != 0x80) ok = false;
            cp = (cp << 6) | (cc & 0x3f);
        }
        if (ok) {
            if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
                (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
                ok = false;
        }
        if (ok) {
            out.append(s.data() + i, len);
            i += len;
        } else {
            out += "\\ufffd";
            ++i;
        }
    }
    out += '"';
}

namespace {

void json_double(std::string& out, double v) {
    char buf[64];
    const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    std::string text(buf, ec == std::errc() ? ptr : buf);
    if (text.find_first_of(".eE") == std::string::npos) text += ".0";
    out += text;
}

// ---- workload -----------------------------------------------------------------------------------------

struct Failure {
    long index;
    std::string reason;
    std::optional<int> status;
};

struct Worker {
    std::vector<std::int64_t> starts;
    std::vector<std::int64_t> latencies;
    std::vector<Failure> failures;
    std::uint64_t bytes = 0;
    std::int64_t loop_start = 0;
    std::int64_t loop_end = 0;
    std::string setup_error;                   // non-empty when the client could not be created
    std::optional<beast_client::TlsInfo> tls;  // of the client's connection after the timed loop
};

// Workers arrive when ready and wait until main opens the gate; main waits until all have arrived.
class StartGate {
public:
    explicit StartGate(std::size_t workers) : workers_(workers) {}
    void arrive_and_wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        ++arrived_;
        cv_.notify_all();
        cv_.wait(lock, [this] { return open_; });
    }
    void wait_all_arrived() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return arrived_ >= workers_; });
    }
    void open() {
        std::lock_guard<std::mutex> lock(mutex_);
        open_ = true;
        cv_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::size_t workers_;
    std::size_t arrived_ = 0;
    bool open_ = false;
};

// Peak resident set of this process image (VmHWM: reset at exec, unlike getrusage's ru_maxrss, which also
// counts the forked parent's pages before exec); -1 when unknown.
long peak_rss_kib() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "VmHWM:", 6) == 0) {
            kib = std::strtol(line + 6, nullptr, 10);
            break;
        }
    std::fclose(f);
    return kib;
}

std::int64_t process_cpu_ns() {
    timespec ts{};
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    const auto first = text.find_first_not_of(' ');
    const auto last = text.find_last_not_of(' ');
    return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

// The exception's dynamic type, demangled ("std::runtime_error", "beast_client::ConcurrentUse").
std::string type_name_of(const std::exception& e) {
    const char* mangled = typeid(e).name();
    int status = -1;
    std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                                     std::free);
    return status == 0 && demangled ? std::string(demangled.get()) : std::string(mangled);
}

bool is_failure_class(std::string_view name) {
    for (const char* c : {"TimeoutError", "TLSError", "ConnectionError", "ProtocolError", "InvalidUrl",
                          "InvalidRequest", "Cancelled", "Error"})
        if (name == c) return true;
    return false;
}

// `<class>: <detail>` (just the class when there is nothing to say)
std::string reason(const std::string& cls, const std::string& detail) {
    return detail.empty() ? cls : cls + ": " + detail;
}

const char* kNoClient = "the driver created no client";

harness::ClientOptions client_options(const Options& o) { return {std::min(o.timeout, 3.0e8), o.ca_file, o.insecure}; }

std::unique_ptr<harness::Client> make_client(const harness::Driver& d, const harness::ClientOptions& options) {
    auto client = d.make_client(options);
    if (!client) throw std::runtime_error(kNoClient);
    return client;
}

void run_worker(const harness::Driver& d, const Options& o, Worker& w, StartGate& gate) {
    std::unique_ptr<harness::Client> client;
    const harness::ClientOptions options = client_options(o);
    try {
        client = make_client(d, options);
        for (long k = 0; k < o.warmup; ++k) {
            try {
                client->get(o.url);
            } catch (...) {  // warmup failures are not measured
            }
        }
    } catch (const std::exception& e) {  // still arrive at the gate so nobody waits forever
        w.setup_error = harness::failure_reason(e);
        client.reset();
    } catch (...) {
        w.setup_error = reason("Error", "unknown exception");
        client.reset();
    }
    w.starts.reserve(static_cast<std::size_t>(o.requests));
    w.latencies.reserve(static_cast<std::size_t>(o.requests));
    gate.arrive_and_wait();

    w.loop_start = now_ns();
    for (long i = 0; i < o.requests; ++i) {
        const std::int64_t start = now_ns();
        std::optional<int> status;
        std::uint64_t nbytes = 0;
        std::string error;
        if (!client && !o.new_connection) {
            error = w.setup_error.empty() ? reason("Error", kNoClient) : w.setup_error;
        } else {
            try {
                if (o.new_connection) {  // a fresh client (and connection) for every request
                    client.reset();
                    client = make_client(d, options);
                }
                const harness::Fetch fetch = client->get(o.url);
                status = fetch.status;
                nbytes = fetch.bytes;
            } catch (const std::exception& e) {
                error = harness::failure_reason(e);
            } catch (...) {
                error = reason("Error", "unknown exception");
            }
        }
        const std::int64_t end = now_ns();
        w.starts.push_back(start);
        w.latencies.push_back(end - start);
        w.bytes += nbytes;
        if (!error.empty())
            w.failures.push_back({i, error, std::nullopt});
        else if (*status != 200)
            w.failures.push_back({i, "status " + std::to_string(*status), status});
    }
    w.loop_end = now_ns();
    if (client) {
        try {
            w.tls = client->tls_info();
        } catch (...) {  // diagnostics only
        }
    }
}

std::string document(const harness::Driver& d, const Options& o, const std::vector<Worker>& workers, std::int64_t t0,
                     std::int64_t wall, std::int64_t cpu) {
    std::string out;
    out.reserve(256 + workers.size() * static_cast<std::size_t>(o.requests) * 24);
    out += "{\"schema\":\"clientbench.raw/1\",\"client\":{\"language\":";
    json_string(out, d.language);
    out += ",\"library\":";
    json_string(out, d.library);
    out += ",\"library_version\":";
    json_string(out, d.library_version);
    out += ",\"mode\":\"sync\",\"gil\":null,\"notes\":";
    json_string(out, d.notes);
    out += ",\"tls\":";
    if (!workers.empty() && workers[0].tls) {  // worker 0's connection
        out += "{\"version\":";
        json_string(out, workers[0].tls->version);
        out += ",\"cipher\":";
        json_string(out, workers[0].tls->cipher);
        out += "}";
    } else {
        out += "null";
    }
    out += "},\"workload\":{\"url\":";
    json_string(out, o.url);
    out += ",\"workers\":" + std::to_string(o.workers) + ",\"requests\":" + std::to_string(o.requests) +
           ",\"warmup\":" + std::to_string(o.warmup) + ",\"timeout_s\":";
    json_double(out, o.timeout);
    out += std::string(",\"connection\":\"") + (o.new_connection ? "new" : "keep-alive") + "\"";
    out += "},\"wall_ns\":" + std::to_string(wall) + ",\"cpu_ns\":" + std::to_string(std::max<std::int64_t>(0, cpu));
    if (const long rss = peak_rss_kib(); rss >= 0) out += ",\"peak_rss_kib\":" + std::to_string(rss);
    out += ",\"workers\":[";
    for (std::size_t k = 0; k < workers.size(); ++k) {
        const Worker& w = workers[k];
        if (k) out += ',';
        out += "{\"elapsed_ns\":" + std::to_string(std::max<std::int64_t>(0, w.loop_end - w.loop_start));
        out += ",\"start_ns\":[";
        for (std::size_t j = 0; j < w.starts.size(); ++j) {
            if (j) out += ',';
            out += std::to_string(std::max<std::int64_t>(0, w.starts[j] - t0));
        }
        out += "],\"latencies_ns\":[";
        for (std::size_t j = 0; j < w.latencies.size(); ++j) {
            if (j) out += ',';
            out += std::to_string(std::max<std::int64_t>(0, w.latencies[j]));
        }
        out += "],\"bytes\":" + std::to_string(w.bytes) + ",\"failures\":[";
        for (std::size_t j = 0; j < w.failures.size(); ++j) {
            const Failure& f = w.failures[j];
            if (j) out += ',';
            out += "{\"index\":" + std::to_string(f.index) + ",\"reason\":";
            json_string(out, f.reason);
            out += ",\"status\":" + (f.status ? std::to_string(*f.status) : std::string("null")) + "}";
        }
        out += "]}";
    }
    out += "]}\n";
    return out;
}

int run(const harness::Driver& d, const Options& o) {
    std::vector<Worker> workers(static_cast<std::size_t>(o.workers));
    StartGate gate(workers.size());
    std::vector<std::thread> threads;
    threads.reserve(workers.size());
    try {
        for (auto& w : workers)
            threads.emplace_back(run_worker, std::cref(d), std::cref(o), std::ref(w), std::ref(gate));
    } catch (const std::exception& e) {
        // the started threads wait on the barrier forever: nothing sensible to do but leave
        std::fprintf(stderr, "%s: cannot start %ld threads: %s\n", kProg, o.workers, e.what());
        std::fflush(stderr);
        std::_Exit(1);
    }
    gate.wait_all_arrived();
    const std::int64_t t0 = now_ns();
    const std::int64_t cpu0 = process_cpu_ns();
    gate.open();
    for (auto& t : threads) t.join();
    const std::int64_t wall = now_ns() - t0;
    const std::int64_t cpu = process_cpu_ns() - cpu0;

    const std::string doc = document(d, o, workers, t0, wall, cpu);
    if (std::fwrite(doc.data(), 1, doc.size(), stdout) != doc.size() || std::fflush(stdout) != 0) {
        std::fprintf(stderr, "%s: cannot write the result to stdout\n", kProg);
        return 1;
    }
    return 0;
}

}  // namespace

std::string harness::failure_reason(const std::exception& e) {
    std::string cls = "Error";
    std::string name;  // the exception's own type name
    if (const auto* err = dynamic_cast<const beast_client::Error*>(&e)) {
        name = err->type_name();
        if (is_failure_class(name)) cls = name;
    } else {
        if (dynamic_cast<const std::invalid_argument*>(&e)) cls = "InvalidRequest";
        name = type_name_of(e);
    }
    const std::string text = one_line(e.what());
    if (name == cls) return reason(cls, text);
    return reason(cls, text.empty() || text == name ? name : name + ": " + text);
}

int harness::main(int argc, char** argv, const Driver& d) {
    kProg = d.prog;
    std::optional<Options> options;
    try {
        options = parse_args(argc, argv);
        if (options) beast_client::parse_url(options->url);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: error: %s (see --help)\n", kProg, e.message.c_str());
        return 2;
    } catch (const beast_client::InvalidUrl& e) {
        std::fprintf(stderr, "%s: error: --url: %s\n", kProg, one_line(e.what()).c_str());
        return 2;
    }
    if (!options) {
        std::printf("usage: %s%s%s\n", kProg, kUsage, d.help.c_str());
        return 0;
    }
    if (!options->ca_file.empty()) {  // a CA file that cannot be used is a usage error, not N failed requests
        try {
            make_client(d, client_options(*options));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: error: --ca-file: %s\n", kProg, one_line(e.what()).c_str());
            return 2;
        }
    }
    try {
        return run(d, *options);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: internal error: %s\n", kProg, one_line(e.what()).c_str());
        return 1;
    }
}
