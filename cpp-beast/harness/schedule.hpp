// The open loop of the driver contract (docs/raw-format.md, "Open loop"): each worker's schedule of intended
// start times, and the loop that follows it. The loop takes its clock as a parameter, so that the tests drive
// it with a fake one (no sleeping, exact times).
#pragma once

#include <cstdint>

namespace harness {

enum class Arrival { uniform, poisson };

/// I(w, k) of a uniform schedule, ns after t0: (w + k·W) / R seconds (W workers, R requests/s in all).
std::int64_t uniform_intended_ns(double rate, long workers, long worker, long k);

/// SplitMix64 (Steele, Lea and Flood 2014; Vigna's reference code): the generator of the Poisson schedules, the
/// same in every language's harness (docs/raw-format.md), so that a seed gives the same times everywhere.
class SplitMix64 {
public:
    explicit SplitMix64(std::uint64_t state) : state_(state) {}
    std::uint64_t next();

private:
    std::uint64_t state_;
};

/// One worker's intended start times, ns after t0, in order: I(w, 0), I(w, 1), ... For `poisson` the intervals
/// are round(-ln(u) * W * 1e9 / R) ns, u = ((x >> 11) + 1) / 2^53 from a SplitMix64 seeded with seed + w
/// (mod 2^64), summed in whole ns: I(w, 0) is the first interval, not 0 (docs/raw-format.md, "Open loop").
class Schedule {
public:
    Schedule(Arrival arrival, double rate, long workers, long worker, std::uint64_t seed);
    /// The next intended start.
    std::int64_t next();
    /// Draws the rest of the schedule: how many of its entries are before `limit_ns`.
    long count_before(std::int64_t limit_ns);

private:
    Arrival arrival_;
    double rate_;
    long workers_;
    long worker_;
    long k_ = 0;
    std::int64_t t_ns_ = 0;  // poisson: the last intended start
    double mean_ns_;         // poisson: W * 1e9 / R
    SplitMix64 rng_;
};

/// When a worker's open loop ends: after `requests` requests (when >= 0), or at `duration_ns` after t0
/// (when >= 0; requests of the schedule that cannot start before then are missed).
struct LoopLimits {
    long requests = -1;
    std::int64_t duration_ns = -1;
};

struct LoopCounts {
    long count = 0;   // requests sent
    long late = 0;    // of them, started after their intended time because the previous one was still running
    long missed = 0;  // with a duration: requests of the schedule before it that could not start before it
};

/// One worker's open loop from t0 (a time of `clock`, ns). Before request k the worker sleeps until
/// t0 + I(w, k) (`clock.sleep_until`); when request k-1 ended after that time, request k starts at once and is
/// late. `send(k, intended, start)` performs request k (times of `clock`) and returns its end (the time it
/// recorded). With a duration, the loop stops at the first request that cannot start before t0 + D and counts
/// it and the rest of the schedule before D as missed: it returns at most one request's time after t0 + D.
template <class Clock, class Send>
LoopCounts open_loop(Schedule& schedule, const LoopLimits& limits, std::int64_t t0, Clock& clock, Send&& send) {
    LoopCounts counts;
    const bool timed = limits.duration_ns >= 0;
    std::int64_t previous_end = 0;
    for (long k = 0; limits.requests < 0 || k < limits.requests; ++k) {
        const std::int64_t intended_after_t0 = schedule.next();
        if (timed && intended_after_t0 >= limits.duration_ns) break;  // the end of the schedule
        const std::int64_t intended = t0 + intended_after_t0;
        // late: request k-1 was still running at I(w, k) (not a wake-up after it, nor the loop's own work)
        const bool late = k > 0 && previous_end > intended;
        std::int64_t now = clock.now();
        while (now < intended) {
            clock.sleep_until(intended);
            now = clock.now();
        }
        if (timed && now - t0 >= limits.duration_ns) {  // too late to start before D
            counts.missed = 1 + schedule.count_before(limits.duration_ns);
            break;
        }
        if (late) ++counts.late;
        previous_end = send(k, intended, now);
        ++counts.count;
    }
    return counts;
}

}  // namespace harness
