// The driver contract's command line (options.hpp).
#include "options.hpp"

#include "body.hpp"  // kMaxChunkSize

#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <system_error>

const char* const harness::kUsage =
    " --url URL [--workers W] [--requests N | --duration SECONDS] [--warmup K]\n"
    "        [--timeout SECONDS] [--connection keep-alive|new] [--ca-file PATH | --insecure]\n"
    "        [--rate R [--arrival uniform|poisson] [--seed S]] [--method GET|POST|PUT] [--body-size BYTES]\n"
    "        [--record samples|histogram] [--client-scope per-worker|shared] [--http 1.1|2|3]\n"
    "        [--upload whole|stream] [--download whole|stream] [--chunk-size BYTES] [--targets FILE]\n"
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

double parse_number(const std::string& flag, const std::string& text, const char* what) {
    char* end = nullptr;
    const double value = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(value))
        throw UsageError{flag + " expects a number of " + what + ", got '" + text + "'"};
    if (!(value > 0)) throw UsageError{flag + " must be > 0, got " + text};
    return value;
}

std::uint64_t parse_seed(const std::string& text) {
    std::uint64_t value = 0;
    const char* first = text.data();
    const char* last = first + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (text.empty() || ec != std::errc() || ptr != last)
        throw UsageError{"--seed expects a non-negative integer below 2^64, got '" + text + "'"};
    return value;
}

std::size_t parse_body_size(const std::string& text) {
    long long value = 0;
    const char* first = text.data();
    const char* last = first + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    const bool too_large = ec == std::errc::result_out_of_range && !text.empty() && text[0] != '-';
    if (too_large || (ec == std::errc() && ptr == last && value > static_cast<long long>(harness::kMaxBodySize)))
        throw UsageError{"--body-size must be at most 1073741824 (1 GiB), got " + text};
    if (text.empty() || ec != std::errc() || ptr != last)
        throw UsageError{"--body-size expects a number of bytes, got '" + text + "'"};
    if (value < 0) throw UsageError{"--body-size must be >= 0, got " + text};
    return static_cast<std::size_t>(value);
}

std::size_t parse_chunk_size(const std::string& text) {
    long long value = 0;
    const char* first = text.data();
    const char* last = first + text.size();
    const auto [ptr, ec] = std::from_chars(first, last, value);
    if (text.empty() || ec != std::errc() || ptr != last || value < 1 ||
        value > static_cast<long long>(harness::kMaxChunkSize))
        throw UsageError{"--chunk-size must be a number of bytes from 1 to 16777216 (16 MiB), got '" + text + "'"};
    return static_cast<std::size_t>(value);
}

bool whole_or_stream(const std::string& flag, const std::string& value) {
    if (value != "whole" && value != "stream") throw UsageError{flag + " must be whole or stream, got '" + value + "'"};
    return value == "stream";
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
        if (!takes_value(arg)) throw UsageError{"unknown argument '" + std::string(argv[i]) + "'"};
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
            have_requests = true;
        } else if (arg == "--duration") {
            o.duration_s = parse_number(arg, value, "seconds");
        } else if (arg == "--warmup") {
            o.warmup = parse_int(arg, value, 0);
        } else if (arg == "--connection") {
            if (value != "keep-alive" && value != "new")
                throw UsageError{"--connection must be keep-alive or new, got '" + value + "'"};
            o.new_connection = value == "new";
        } else if (arg == "--ca-file") {
            if (value.empty()) throw UsageError{"--ca-file must not be empty"};
            o.ca_file = value;
        } else if (arg == "--rate") {
            char* end = nullptr;
            const double rate = value.empty() ? 0.0 : std::strtod(value.c_str(), &end);
            if (value.empty() || end != value.c_str() + value.size() || !std::isfinite(rate) || !(rate > 0))
                throw UsageError{"--rate must be a positive number of requests/s, got '" + value + "'"};
            o.rate = rate;
        } else if (arg == "--arrival") {
            if (value != "uniform" && value != "poisson")
                throw UsageError{"--arrival must be uniform or poisson, got '" + value + "'"};
            o.arrival = value == "uniform" ? Arrival::uniform : Arrival::poisson;
            have_arrival = true;
        } else if (arg == "--seed") {
            o.seed = parse_seed(value);
            have_seed = true;
        } else if (arg == "--method") {
            if (value != "GET" && value != "POST" && value != "PUT")
                throw UsageError{"--method must be GET, POST or PUT, got '" + value + "'"};
            o.method = value;
            have_method = true;
        } else if (arg == "--body-size") {
            o.body_size = parse_body_size(value);
            have_body_size = true;
        } else if (arg == "--record") {
            if (value != "samples" && value != "histogram")
                throw UsageError{"--record must be samples or histogram, got '" + value + "'"};
            o.histogram = value == "histogram";
        } else if (arg == "--client-scope") {
            if (value != "per-worker" && value != "shared")
                throw UsageError{"--client-scope must be per-worker or shared, got '" + value + "'"};
            o.shared = value == "shared";
        } else if (arg == "--http") {
            if (value != "1.1" && value != "2" && value != "3")
                throw UsageError{"--http must be 1.1, 2 or 3, got '" + value + "'"};
            o.http2 = value == "2";
            o.http3 = value == "3";
        } else if (arg == "--upload") {
            o.upload_stream = whole_or_stream(arg, value);
        } else if (arg == "--download") {
            o.download_stream = whole_or_stream(arg, value);
        } else if (arg == "--chunk-size") {
            o.chunk_size = parse_chunk_size(value);
        } else if (arg == "--targets") {
            if (value.empty()) throw UsageError{"--targets must not be empty"};
            o.targets = value;
        } else {
            o.timeout = parse_number(arg, value, "seconds");
            if (o.timeout > kMaxTimeout) throw UsageError{"--timeout must be at most 86400 s (a day), got " + value};
        }
    }
    if (!have_url) throw UsageError{"the following argument is required: --url"};
    check_url(o.url);
    // the contract's rule, whether or not the driver speaks HTTP/3: QUIC is TLS only (a targets file's URLs are
    // its own; the run is unsupported before the file would be read)
    if (o.http3 && o.targets.empty() && !is_https(o.url))
        throw UsageError{"--http 3 is HTTP/3 over QUIC, which needs an https:// URL, got '" + o.url + "'"};
    if (have_arrival && !o.rate) throw UsageError{"--arrival goes with --rate (an open loop)"};
    if (have_seed && !o.rate) throw UsageError{"--seed goes with --rate (an open loop)"};
    if (o.insecure && !o.ca_file.empty()) throw UsageError{"--ca-file and --insecure are mutually exclusive"};
    if (o.duration_s && have_requests)
        throw UsageError{"--duration and --requests exclude each other: an open loop lasts a time or a count"};
    if (o.duration_s && !o.rate) throw UsageError{"--duration goes with --rate (an open loop)"};
    if (o.rate && *o.rate / static_cast<double>(o.workers) > kMaxRatePerWorker) {
        char rate[32];
        std::snprintf(rate, sizeof rate, "%.12g", *o.rate);
        throw UsageError{std::string("--rate ") + rate + " over " + std::to_string(o.workers) +
                         " worker(s) is finer than the schedule keeps (at most 1000000 requests/s per worker)"};
    }
    if (o.new_connection && o.shared)
        throw UsageError{"--connection new cannot be used with --client-scope shared (a shared client is made once)"};
    if (o.body_size > 0 && !o.upload())
        throw UsageError{"--body-size goes with --method POST or PUT (a GET sends no body)"};
    if (!o.targets.empty() && have_method)
        throw UsageError{"--method: not with --targets (each target has its own method)"};
    if (!o.targets.empty() && have_body_size)
        throw UsageError{"--body-size: not with --targets (each target has its own body)"};
    if (o.upload_stream && !o.upload() && o.targets.empty())
        throw UsageError{"--upload stream needs a body to stream (--method POST or PUT, or --targets)"};
    return o;
}

void harness::check_url(const std::string& url) {
    for (const char c : url)
        if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f)
            throw UsageError{"--url must not contain whitespace or control characters: '" + url + "'"};
    const auto sep = url.find("://");
    std::string scheme = sep == std::string::npos ? std::string() : url.substr(0, sep);
    for (char& c : scheme) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (scheme != "http" && scheme != "https")
        throw UsageError{"--url must be an http:// or https:// URL, got '" + url + "'"};
    std::string authority = url.substr(sep + 3);
    authority = authority.substr(0, authority.find_first_of("/?#"));
    authority = authority.substr(authority.rfind('@') == std::string::npos ? 0 : authority.rfind('@') + 1);
    std::string host = authority;
    std::string port;
    if (!authority.empty() && authority.front() == '[') {  // an IPv6 literal
        const auto close = authority.find(']');
        host = close == std::string::npos ? std::string() : authority.substr(1, close - 1);
        if (close != std::string::npos && close + 1 < authority.size()) {
            if (authority[close + 1] != ':') throw UsageError{"--url has an invalid host: '" + url + "'"};
            port = authority.substr(close + 2);
        }
    } else if (const auto colon = authority.find(':'); colon != std::string::npos) {
        host = authority.substr(0, colon);
        port = authority.substr(colon + 1);  // empty: the scheme's default (RFC 3986)
    }
    if (host.empty()) throw UsageError{"--url has no host: '" + url + "'"};
    if (!port.empty()) {
        long value = 0;
        const auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
        if (ec != std::errc() || ptr != port.data() + port.size() || value < 1 || value > 65535)
            throw UsageError{"--url: the port must be from 1 to 65535, got '" + url + "'"};
    }
}
