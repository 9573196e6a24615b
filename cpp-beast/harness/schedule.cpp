// Intended start times of the open loop (schedule.hpp).
#include "schedule.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace {

// A schedule too far out for int64 ns (a tiny rate) saturates here, which no run reaches.
constexpr std::int64_t kMaxNs = std::numeric_limits<std::int64_t>::max() / 2;

// ns rounded to a whole number, halves away from zero (std::round: the contract's rounding), saturated.
std::int64_t round_ns(double ns) {
    const double r = std::round(ns);
    if (!(r < static_cast<double>(kMaxNs))) return kMaxNs;
    return r > 0 ? static_cast<std::int64_t>(r) : 0;
}

// Seconds after t0 as ns, rounded.
std::int64_t to_ns(double seconds) { return round_ns(seconds * 1e9); }

}  // namespace

std::int64_t harness::uniform_intended_ns(double rate, long workers, long worker, long k) {
    // w + k·W is exact in a double up to 2^53 requests
    return to_ns((static_cast<double>(worker) + static_cast<double>(k) * static_cast<double>(workers)) / rate);
}

std::uint64_t harness::SplitMix64::next() {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

harness::Schedule::Schedule(Arrival arrival, double rate, long workers, long worker, std::uint64_t seed)
    : arrival_(arrival),
      rate_(rate),
      workers_(workers),
      worker_(worker),
      mean_ns_(static_cast<double>(workers) * 1e9 / rate),
      rng_(seed + static_cast<std::uint64_t>(worker)) {}  // unsigned: wraps mod 2^64, as the contract says

std::int64_t harness::Schedule::next() {
    if (arrival_ == Arrival::uniform) return uniform_intended_ns(rate_, workers_, worker_, k_++);
    ++k_;
    const double u = static_cast<double>((rng_.next() >> 11) + 1) * 0x1.0p-53;  // (0, 1], exact
    // whole ns per interval, summed exactly: the same times as every other harness, no drift
    const std::int64_t interval = round_ns(-std::log(u) * mean_ns_);
    t_ns_ = interval > kMaxNs - t_ns_ ? kMaxNs : t_ns_ + interval;
    return t_ns_;
}

long harness::Schedule::count_before(std::int64_t limit_ns) {
    long n = 0;
    while (next() < limit_ns) ++n;
    return n;
}
