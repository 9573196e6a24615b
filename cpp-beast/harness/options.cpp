// The driver contract's command line (options.hpp). Usage errors are in the wording of the contract's declaration
// (python/clientbench/schema/contract.json; python/tests/test_contract.py runs the built drivers through it).
#include "options.hpp"

#include "body.hpp"  // kMaxChunkSize

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <system_error>

const char* const harness::kUsage =
    " --url URL [--workers W] [--requests N | --duration SECONDS] [--warmup K]\n"
    "        [--timeout SECONDS] [--connection keep-alive|new] [--ca-file PATH | --insecure]\n"
    "        [--rate R [--arrival uniform|poisson] [--seed S]] [--method GET|POST|PUT] [--body-size BYTES]\n"
    "        [--record samples|histogram] [--client-scope per-worker|shared] [--http 1.1|2|3]\n"
    "        [--upload whole|stream] [--download whole|stream] [--chunk-size BYTES] [--targets FILE]\n"
    "        [--phases]\n"
    "\n"
    "  --url URL           URL every request goes to (http[s]://host:port/path), required\n"
    "  --workers W         threads, each with its own client (default 10)\n"
    "  --requests N        timed requests per worker (default 100)\n"
    "  --duration SECONDS  open loop, instead of --requests: the schedule lasts this long\n"
    "  --warmup K          untimed requests per worker before the timed loop (default 0)\n"
    "  --timeout SECONDS   bounds each whole request (default 30, at most 86400)\n"
    "  --connection C      keep-alive: one connection per worker (default); new: a new client and\n"
    "                      connection for every timed request\n"
    "  --ca-file PATH      https: trust the CA certificates in this PEM file instead of the system's\n"
    "  --insecure          https: do not verify the server's certificate (unsafe: for measurements only)\n"
    "  --rate R            open loop: R requests/s over all workers, each on a schedule of R/W requests/s\n"
    "                      (default: a closed loop, each request sent when the previous one returned)\n"
    "  --arrival A         open loop: uniform (a fixed interval, default) or poisson (exponential intervals)\n"
    "  --seed S            open loop, poisson: worker w draws its intervals from SplitMix64 seeded S + w\n"
    "                      (0 <= S < 2^64, default 1)\n"
    "  --method M          GET (default), POST or PUT\n"
    "  --body-size BYTES   POST/PUT: the request body's length (default 0); the response must be the\n"
    "                      server's /upload line for it (\"<length> <sha256 hex>\")\n"
    "  --record R          samples: per-request arrays (default); histogram: latency histograms\n"
    "  --client-scope S    per-worker: each worker makes its own client (default); shared: one client,\n"
    "                      made once, serves every worker (its pool keeps up to W connections)\n"
    "  --http V            1.1 (default), 2 (HTTP/2) or 3 (HTTP/3, https:// only): exit status 3 when the\n"
    "                      driver cannot\n"
    "  --upload U          whole: the request body in one buffer (default); stream: in chunks of\n"
    "                      --chunk-size bytes, made as the client sends them\n"
    "  --download D        whole: the response body read into one buffer (default); stream: in chunks of at\n"
    "                      most --chunk-size bytes, each counted and dropped\n"
    "  --chunk-size BYTES  a streamed body's chunk, 1 to 16777216 (default 65536)\n"
    "  --targets FILE      every worker cycles through the requests of FILE (`METHOD URL [@BODYFILE]` per\n"
    "                      line) instead of --url's; --url is still checked\n"
    "  --phases            record where each request's time went (connect, tls, send, wait, receive: sums\n"
    "                      per worker over its successful requests)\n"
    "  -h, --help          show this help\n";

namespace {

using harness::UsageError;

bool is_https(const std::string& url) {
    static const std::string kHttps = "https://";
    if (url.size() < kHttps.size()) return false;
    for (std::size_t i = 0; i < kHttps.size(); ++i)
        if (std::tolower(static_cast<unsigned char>(url[i])) != kHttps[i]) return false;
    return true;
}

/// A whole number from `min` to `max` (`max` 0: no bound above); `--flag: must be a whole number ...` otherwise.
std::uint64_t parse_whole(const std::string& flag, const std::string& text, std::uint64_t min, std::uint64_t max = 0) {
    std::uint64_t value = 0;
    const char* first = text.data();
    const char* last = first + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);  // no sign: "-1" is not one
    if (text.empty() || ec != std::errc() || ptr != last || value < min || (max != 0 && value > max)) {
        const std::string range =
            max == 0 ? ">= " + std::to_string(min) : "from " + std::to_string(min) + " to " + std::to_string(max);
        throw UsageError{flag + ": must be a whole number " + range + ", got '" + text + "'"};
    }
    return value;
}

/// A whole number >= `min` that a long holds (the contract sets no bound above).
long parse_int(const std::string& flag, const std::string& text, long min) {
    const std::uint64_t value = parse_whole(flag, text, static_cast<std::uint64_t>(min));
    if (value > static_cast<std::uint64_t>(std::numeric_limits<long>::max()))
        throw UsageError{flag + ": must be a whole number >= " + std::to_string(min) + ", got '" + text + "'"};
    return static_cast<long>(value);
}

/// A finite number above 0, at most `max` (0: no bound above); `--flag: must be a positive number ...` otherwise.
double parse_number(const std::string& flag, const std::string& text, double max = 0) {
    char* end = nullptr;
    const double value = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value) || !(value > 0) ||
        (max > 0 && value > max)) {
        char most[48] = "";
        if (max > 0) std::snprintf(most, sizeof most, ", at most %.12g", max);
        throw UsageError{flag + ": must be a positive number" + most + ", got '" + text + "'"};
    }
    return value;
}

/// One of `choices`; `--flag: must be one of a, b, got '...'` otherwise.
const std::string& one_of(const std::string& flag, const std::string& value,
                          std::initializer_list<const char*> choices) {
    std::string names;
    for (const char* c : choices) {
        if (value == c) return value;
        names += (names.empty() ? "" : ", ") + std::string(c);
    }
    throw UsageError{flag + ": must be one of " + names + ", got '" + value + "'"};
}

bool whole_or_stream(const std::string& flag, const std::string& value) {
    return one_of(flag, value, {"whole", "stream"}) == "stream";
}

bool takes_value(const std::string& flag) {
    for (const char* f :
         {"--url",          "--workers", "--requests", "--duration", "--warmup",     "--timeout",   "--connection",
          "--ca-file",      "--rate",    "--arrival",  "--seed",     "--method",     "--body-size", "--record",
          "--client-scope", "--http",    "--upload",   "--download", "--chunk-size", "--targets"})
        if (flag == f) return true;
    return false;
}

}  // namespace

std::optional<harness::Options> harness::parse_args(int argc, char** argv) {
    Options o;
    bool have_url = false;
    bool have_requests = false;
    bool have_arrival = false;
    bool have_seed = false;
    bool have_method = false;
    bool have_body_size = false;
    bool have_ca_file = false;
    bool have_targets = false;
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
            if (inline_value) throw UsageError{"--insecure: takes no value"};
            o.insecure = true;
            continue;
        }
        if (arg == "--phases") {  // a switch (raw/4)
            if (inline_value) throw UsageError{"--phases: takes no value"};
            o.phases = true;
            continue;
        }
        if (!takes_value(arg)) throw UsageError{arg + ": unknown flag"};
        if (!inline_value) {
            if (i + 1 >= argc) throw UsageError{arg + ": needs a value"};
            value = argv[++i];
        }
        if (arg == "--url") {
            o.url = value;
            have_url = true;
        } else if (arg == "--workers") {
            o.workers = parse_int(arg, value, 1);
        } else if (arg == "--requests") {
            o.requests = parse_int(arg, value, 1);
            have_requests = true;
        } else if (arg == "--duration") {
            o.duration_s = parse_number(arg, value);
        } else if (arg == "--warmup") {
            o.warmup = parse_int(arg, value, 0);
        } else if (arg == "--connection") {
            o.new_connection = one_of(arg, value, {"keep-alive", "new"}) == "new";
        } else if (arg == "--ca-file") {
            if (value.empty()) throw UsageError{"--ca-file: cannot read '' (an empty path)"};
            o.ca_file = value;
            have_ca_file = true;
        } else if (arg == "--rate") {
            o.rate = parse_number(arg, value);
        } else if (arg == "--arrival") {
            o.arrival = one_of(arg, value, {"uniform", "poisson"}) == "uniform" ? Arrival::uniform : Arrival::poisson;
            have_arrival = true;
        } else if (arg == "--seed") {
            o.seed = parse_whole(arg, value, 0, std::numeric_limits<std::uint64_t>::max());
            have_seed = true;
        } else if (arg == "--method") {
            o.method = one_of(arg, value, {"GET", "POST", "PUT"});
            have_method = true;
        } else if (arg == "--body-size") {
            o.body_size = static_cast<std::size_t>(parse_whole(arg, value, 0, harness::kMaxBodySize));
            have_body_size = true;
        } else if (arg == "--record") {
            o.histogram = one_of(arg, value, {"samples", "histogram"}) == "histogram";
        } else if (arg == "--client-scope") {
            o.shared = one_of(arg, value, {"per-worker", "shared"}) == "shared";
        } else if (arg == "--http") {
            one_of(arg, value, {"1.1", "2", "3"});
            o.http2 = value == "2";
            o.http3 = value == "3";
        } else if (arg == "--upload") {
            o.upload_stream = whole_or_stream(arg, value);
        } else if (arg == "--download") {
            o.download_stream = whole_or_stream(arg, value);
        } else if (arg == "--chunk-size") {
            o.chunk_size = static_cast<std::size_t>(parse_whole(arg, value, 1, harness::kMaxChunkSize));
        } else if (arg == "--targets") {
            if (value.empty()) throw UsageError{"--targets : cannot read it (an empty path)"};
            o.targets = value;
            have_targets = true;
        } else {
            o.timeout = parse_number(arg, value, kMaxTimeout);
        }
    }
    if (!have_url) throw UsageError{"--url: required"};
    check_url(o.url);
    if (have_arrival && !o.rate) throw UsageError{"--arrival goes with --rate (an open loop)"};
    if (have_seed && !o.rate) throw UsageError{"--seed goes with --rate (an open loop)"};
    if (o.duration_s && !o.rate) throw UsageError{"--duration goes with --rate (an open loop)"};
    if (o.duration_s && have_requests) throw UsageError{"--duration and --requests exclude each other"};
    if (o.rate && *o.rate / static_cast<double>(o.workers) > kMaxRatePerWorker) {
        char rate[32];
        std::snprintf(rate, sizeof rate, "%.12g", *o.rate);
        throw UsageError{std::string("--rate: at most 1000000 requests/s per worker (a schedule finer than 1 µs), "
                                     "got ") +
                         rate + " over " + std::to_string(o.workers) + " workers"};
    }
    if (o.new_connection && o.shared)
        throw UsageError{"--connection new does not go with --client-scope shared (a shared client is made once)"};
    if (have_targets && have_method) throw UsageError{"--method goes without --targets (each target names its method)"};
    if (have_targets && have_body_size)
        throw UsageError{"--body-size goes without --targets (each target names its body)"};
    if (o.body_size > 0 && !o.upload())
        throw UsageError{"--body-size goes with --method POST or PUT (a GET sends no body)"};
    if (o.upload_stream && !o.upload() && !have_targets)
        throw UsageError{"--upload stream goes with --method POST or PUT, or --targets (a GET sends no body)"};
    // the contract's rule, whether or not the driver speaks HTTP/3: QUIC is TLS only (a targets file's URLs are
    // checked once it is read: harness::main)
    if (o.http3 && !have_targets && !is_https(o.url))
        throw UsageError{"--http: 3 is HTTP/3 over QUIC, which needs https:// URLs, got '" + o.url + "'"};
    if (o.insecure && have_ca_file) throw UsageError{"--ca-file and --insecure exclude each other"};
    return o;
}

void harness::check_url(const std::string& url) {
    for (const char c : url)
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
            throw UsageError{"--url: must not contain whitespace or control characters, got '" + url + "'"};
    const auto sep = url.find("://");
    std::string scheme = sep == std::string::npos ? std::string() : url.substr(0, sep);
    for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scheme != "http" && scheme != "https")
        throw UsageError{"--url: must be an http:// or https:// URL, got '" + url + "'"};
    std::string authority = url.substr(sep + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    authority = authority.substr(authority.rfind('@') == std::string::npos ? 0 : authority.rfind('@') + 1);
    std::string host = authority;
    std::string port;
    if (!authority.empty() && authority.front() == '[') {  // an IPv6 literal
        const auto close = authority.find(']');
        host = close == std::string::npos ? std::string() : authority.substr(1, close - 1);
        if (close != std::string::npos && close + 1 < authority.size()) {
            if (authority[close + 1] != ':') throw UsageError{"--url: has no host, got '" + url + "'"};
            port = authority.substr(close + 2);
        }
    } else if (const auto colon = authority.find(':'); colon != std::string::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);  // empty: the scheme's default (RFC 3986)
    }
    if (host.empty()) throw UsageError{"--url: has no host, got '" + url + "'"};
    if (!port.empty()) {
        long value = 0;
        const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (ec != std::errc() || ptr != port.data() + port.size() || value < 1 || value > 65535)
            throw UsageError{"--url: the port must be from 1 to 65535, got '" + url + "'"};
    }
}

void harness::check_ca_file(const std::string& path) {
    BIO* bio = BIO_new_file(path.c_str(), "r");
    if (bio == nullptr) {
        const int error = errno;
        ERR_clear_error();
        throw UsageError{"--ca-file: cannot read " + path + " (" + std::strerror(error) + ")"};
    }
    // the first CERTIFICATE block (PEM_read_bio_X509 passes over the others: a CRL alone is no certificate)
    X509* cert = PEM_read_bio_X509(bio, nullptr, nullptr, nullptr);
    BIO_free(bio);
    ERR_clear_error();
    if (cert == nullptr) throw UsageError{"--ca-file: no PEM certificate in " + path};
    X509_free(cert);
}
