// The driver contract's command line (docs/raw-format.md, "Command line"): the options a run is made of, and
// the usage errors (one line naming the flag, in the wording of python/clientbench/schema/contract.json;
// harness::main exits 2 with it).
#pragma once

#include "schedule.hpp"  // Arrival

#include <cstdint>
#include <optional>
#include <string>

namespace harness {

struct Options {
    std::string url;
    long workers = 10;
    long requests = 100;
    std::optional<double> duration_s;  // --duration (then `requests` is not used)
    long warmup = 0;
    double timeout = 30.0;
    bool new_connection = false;  // --connection new
    std::string ca_file;          // --ca-file
    bool insecure = false;        // --insecure
    std::optional<double> rate;   // --rate: an open loop
    Arrival arrival = Arrival::uniform;
    std::uint64_t seed = 1;
    std::string method = "GET";
    std::size_t body_size = 0;
    bool histogram = false;          // --record histogram
    bool shared = false;             // --client-scope shared: one client for every worker
    bool http2 = false;              // --http 2
    bool http3 = false;              // --http 3 (https:// only)
    bool upload_stream = false;      // --upload stream: the body given to the client in chunks of chunk_size
    bool download_stream = false;    // --download stream: the answer read in chunks of at most chunk_size
    std::size_t chunk_size = 65536;  // --chunk-size (body.hpp: kDefaultChunkSize)
    std::string targets;             // --targets FILE (empty: every request to --url)
    bool phases = false;             // --phases: record where each request's time went (the driver's phases)

    bool open() const { return rate.has_value(); }
    bool upload() const { return method != "GET"; }
};

struct UsageError {
    std::string message;
};

/// The largest --body-size (1 GiB), the finest schedule, requests/s per worker (one per µs), and the largest
/// --timeout (a day: a longer latency does not fit the runner's histograms).
constexpr std::size_t kMaxBodySize = std::size_t{1} << 30;
constexpr double kMaxRatePerWorker = 1e6;
constexpr double kMaxTimeout = 86400;

/// The flags' help text (after "usage: <prog>").
extern const char* const kUsage;

/// Parses the flags (argv[0] is the program); nullopt for --help. Throws UsageError.
std::optional<Options> parse_args(int argc, char** argv);

/// The contract's check of --url: an absolute http:// or https:// URL with a host, and a port from 1 to 65535
/// if it has one. Throws UsageError. (What a client refuses beyond that is a counted failure, InvalidUrl.)
void check_url(const std::string& url);

/// The contract's check of --ca-file: a file that can be read and holds a PEM certificate (a CRL alone is none).
/// Throws UsageError.
void check_ca_file(const std::string& path);

}  // namespace harness
