// Intended start times of the open loop (schedule.hpp).
#include "schedule.hpp"

#include <cmath>
#include <cstdint>
#include <limits>

namespace {

// Seconds after t0 as ns, rounded; a schedule too far out for int64 ns (a tiny rate) saturates, which no
// run reaches.
std::int64_t to_ns(double seconds) {
    const double ns = std::round(seconds * 1e9);
    constexpr double kMax = static_cast<double>(std::numeric_limits<std::int64_t>::max() / 2);
    if (!(ns < kMax)) return static_cast<std::int64_t>(kMax);
    return ns > 0 ? static_cast<std::int64_t>(ns) : 0;
}

}  // namespace

std::int64_t harness::uniform_intended_ns(double rate, long workers, long worker, long k) {
    // w + k·W is exact in a double up to 2^53 requests
    return to_ns((static_cast<double>(worker) + static_cast<double>(k) * static_cast<double>(workers)) / rate);
}

harness::Schedule::Schedule(Arrival arrival, double rate, long workers, long worker, std::uint64_t seed)
    : arrival_(arrival),
      rate_(rate),
      workers_(workers),
      worker_(worker),
      rng_(seed + static_cast<std::uint64_t>(worker)),
      interval_(rate / static_cast<double>(workers)) {}

std::int64_t harness::Schedule::next() {
    if (arrival_ == Arrival::uniform) return uniform_intended_ns(rate_, workers_, worker_, k_++);
    // the sum is kept in seconds and rounded once per entry, so rounding does not drift over a long schedule
    t_s_ += interval_(rng_);
    ++k_;
    return to_ns(t_s_);
}

long harness::Schedule::count_before(std::int64_t limit_ns) {
    long n = 0;
    while (next() < limit_ns) ++n;
    return n;
}
