// beast-soak: many requests through beast_client::Client from W threads, bounded in time, storing no
// per-request samples, so that memory growth means a leak. Prints one JSON line, clientbench.soak/1 (the
// format of python/clientbench/probes/soak_binding.py; "schema" is its first key): requests, failures,
// reasons, RSS after warm-up and at the end (KiB), elapsed seconds. Used by `clientbench soak` / `make soak`.
// Failure reasons are the drivers' canonical ones (harness::failure_reason); the line keeps the most common.
// https:// URLs take the drivers' --ca-file PATH / --insecure (docs/raw-format.md).
#include "beast_client/client.hpp"
#include "harness.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

constexpr std::size_t kTopReasons = 5;

long rss_kib() {
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
    return 0;
}

struct Options {
    std::string url;
    long requests = 1000000, workers = 10, warmup = 50000;
    double max_seconds = 600;
    beast_client::TlsConfig tls;  // --ca-file / --insecure
};

[[noreturn]] void usage(const std::string& error) {
    std::fprintf(stderr,
                 "beast-soak: error: %s\nusage: beast-soak --url URL [--requests R] [--workers W] [--warmup K] "
                 "[--max-seconds S] [--ca-file PATH | --insecure]\n",
                 error.c_str());
    std::exit(2);
}

Options parse(int argc, char** argv) {
    Options o;
    bool insecure = false;
    for (int i = 1; i < argc; i += 2) {
        const std::string flag = argv[i];
        if (flag == "--insecure") {  // a switch
            insecure = true;
            o.tls.verify = false;
            --i;
            continue;
        }
        if (i + 1 >= argc) usage(flag + " expects a value");
        const std::string v = argv[i + 1];
        char* end = nullptr;
        if (flag == "--url") {
            o.url = v;
            continue;
        }
        if (flag == "--ca-file") {
            if (v.empty()) usage("--ca-file must not be empty");
            o.tls.ca_file = v;
            continue;
        }
        const double x = std::strtod(v.c_str(), &end);
        if (end != v.c_str() + v.size() || !(x >= 0)) usage(flag + " expects a number, got '" + v + "'");
        if (flag == "--requests")
            o.requests = static_cast<long>(x);
        else if (flag == "--workers")
            o.workers = static_cast<long>(x);
        else if (flag == "--warmup")
            o.warmup = static_cast<long>(x);
        else if (flag == "--max-seconds")
            o.max_seconds = x;
        else
            usage("unknown argument '" + flag + "'");
    }
    if (o.url.empty()) usage("--url is required");
    if (o.workers < 1) usage("--workers must be >= 1");
    if (insecure && !o.tls.ca_file.empty()) usage("--ca-file and --insecure are mutually exclusive");
    try {
        beast_client::parse_url(o.url);
    } catch (const beast_client::InvalidUrl& e) {
        usage(std::string("--url: ") + e.what());
    }
    if (!o.tls.ca_file.empty()) {
        try {
            beast_client::Client probe(std::chrono::seconds(10), o.tls);  // loads the file: fails now, not per request
        } catch (const std::exception& e) {
            usage(std::string("--ca-file: ") + e.what());
        }
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    const auto t0 = std::chrono::steady_clock::now();
    const auto deadline = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                   std::chrono::duration<double>(o.max_seconds));
    std::atomic<long> issued{0}, done{0}, failures{0};
    std::atomic<long> rss_warm{-1};
    std::mutex mutex;
    std::map<std::string, long> reasons;

    auto record = [&](bool ok, const std::string& reason) {
        if (!ok) {
            ++failures;
            std::lock_guard<std::mutex> lock(mutex);
            ++reasons[reason];
        }
        const long n = ++done;
        long expected = -1;
        if (n >= o.warmup && rss_warm.load() < 0) rss_warm.compare_exchange_strong(expected, rss_kib());
    };
    auto work = [&] {
        beast_client::Client client(std::chrono::seconds(10), o.tls);
        while (issued.fetch_add(1) < o.requests && std::chrono::steady_clock::now() < deadline) {
            try {
                const int status = client.get(o.url);
                record(status == 200, status == 200 ? std::string() : "status " + std::to_string(status));
            } catch (const std::exception& e) {
                record(false, harness::failure_reason(e));
            } catch (...) {
                record(false, "Error: unknown exception");
            }
        }
    };
    std::vector<std::thread> threads;
    for (long i = 0; i < o.workers; ++i) threads.emplace_back(work);
    for (auto& t : threads) t.join();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    // the most common reasons (as many as the Python soak targets report), most common first
    std::vector<std::pair<std::string, long>> top(reasons.begin(), reasons.end());
    std::stable_sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
    if (top.size() > kTopReasons) top.resize(kTopReasons);
    std::string reasons_json = "{";
    for (const auto& [reason, count] : top) {
        if (reasons_json.size() > 1) reasons_json += ",";
        harness::append_json_string(reasons_json, reason);
        reasons_json += ":" + std::to_string(count);
    }
    reasons_json += "}";
    const long warm = rss_warm.load();
    std::printf(
        "{\"schema\":\"clientbench.soak/1\",\"requests\":%ld,\"failures\":%ld,\"reasons\":%s,"
        "\"rss_warm_kib\":%s,\"rss_end_kib\":%ld,\"elapsed_s\":%.2f,\"stopped_by_time\":%s}\n",
        done.load(), failures.load(), reasons_json.c_str(), warm < 0 ? "null" : std::to_string(warm).c_str(), rss_kib(),
        elapsed, done.load() < o.requests ? "true" : "false");
    return 0;
}
