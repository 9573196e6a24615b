// What a run records (one Worker per thread) and the clientbench.raw/4 document made of it (document.cpp).
// Internal to the harness.
#pragma once

#include "harness.hpp"
#include "options.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace harness {

/// The document lists at most this many failures per worker (failure_count counts them all).
constexpr std::size_t kMaxListedFailures = 1000;

struct Failure {
    long index;
    std::string reason;
    std::optional<int> status;
};

/// --phases: the phases (Phases' fields) in the contract's order, with their keys.
struct PhaseKey {
    const char* key;
    std::chrono::nanoseconds Phases::*field;
};
inline constexpr PhaseKey kPhaseKeys[] = {{"dns", &Phases::dns},   {"connect", &Phases::connect},
                                          {"tls", &Phases::tls},   {"send", &Phases::send},
                                          {"wait", &Phases::wait}, {"receive", &Phases::receive}};
constexpr std::size_t kPhaseCount = sizeof kPhaseKeys / sizeof kPhaseKeys[0];

/// --phases: a worker's sums over its successful timed requests (workers[i].phases).
struct PhaseSums {
    std::int64_t count = 0;
    std::int64_t latency_ns = 0;
    std::int64_t sum_ns[kPhaseCount] = {};
    bool resolved = false;  // a request resolved a host name: "dns" is one of the phases

    void add(const Phases& p, std::int64_t latency) {
        ++count;
        latency_ns += latency;
        for (std::size_t i = 0; i < kPhaseCount; ++i) sum_ns[i] += (p.*kPhaseKeys[i].field).count();
        resolved = resolved || p.resolved;
    }
};

struct Worker {
    // one entry per timed request, times of the steady clock (ns); the same in both --record modes, so the
    // timed loop does the same work in each: the histograms are made of them at the end
    std::vector<std::int64_t> starts;
    std::vector<std::int64_t> latencies;  // end - actual start
    std::vector<std::int64_t> intended;   // open loop only
    std::vector<Failure> failures;        // the first kMaxListedFailures
    std::vector<long> failed;             // the index of every failed request
    long late = 0;
    long missed = 0;
    std::uint64_t bytes = 0;
    std::int64_t loop_start = 0;
    std::int64_t loop_end = 0;
    std::string setup_error;                   // non-empty when the client could not be created
    std::optional<beast_client::TlsInfo> tls;  // of the client's connection after the timed loop
    std::optional<std::string> protocol;       // of its last successful response (Client::protocol())
    PhaseSums phases;                          // --phases

    void fail(long index, std::string reason, std::optional<int> status = std::nullopt) {
        failed.push_back(index);
        if (failures.size() < kMaxListedFailures) failures.push_back({index, std::move(reason), status});
    }
};

/// Process-wide figures of the timed group.
struct GroupTimes {
    std::int64_t t0 = 0;    // steady clock, ns
    std::int64_t wall = 0;  // t0 until the last worker finished
    std::int64_t cpu = 0;   // process CPU time during the group
};

/// The clientbench.raw/4 document (one line, with its newline).
std::string document(const Driver& d, const Options& o, const std::vector<Worker>& workers, const GroupTimes& times);

}  // namespace harness
