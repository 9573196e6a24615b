// The open loop of the driver contract (docs/raw-format.md, "Open loop"): each worker's schedule of intended
// start times, and the loop that follows it. The loop takes its clock as a parameter, so that the tests drive
// it with a fake one (no sleeping, exact times).
#pragma once

#include <cstdint>
#include <random>

namespace harness {

enum class Arrival { uniform, poisson };

/// I(w, k) of a uniform schedule, ns after t0: (w + k·W) / R seconds (W workers, R requests/s in all).
std::int64_t uniform_intended_ns(double rate, long workers, long worker, long k);

/// One worker's intended start times, ns after t0, in order: I(w, 0), I(w, 1), ... For `poisson` the
/// intervals are exponential with mean W/R, drawn with std::exponential_distribution from a std::mt19937_64
/// seeded with seed + w, so a schedule is the same on every run.
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
    double t_s_ = 0;  // poisson: the last intended start, seconds
    std::mt19937_64 rng_;
    std::exponential_distribution<double> interval_;
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
/// t0 + I(w, k) (`clock.sleep_until`); when request k-1 ran past that time, request k starts at once and is
/// late. `send(k, intended, start)` performs request k (times of `clock`) and returns when it has ended.
/// With a duration, the loop stops at the first request that cannot start before t0 + D and counts it and
/// the rest of the schedule before D as missed: it returns at most one request's time after t0 + D.
template <class Clock, class Send>
LoopCounts open_loop(Schedule& schedule, const LoopLimits& limits, std::int64_t t0, Clock& clock, Send&& send) {
    LoopCounts counts;
    const bool timed = limits.duration_ns >= 0;
    for (long k = 0; limits.requests < 0 || k < limits.requests; ++k) {
        const std::int64_t intended_after_t0 = schedule.next();
        if (timed && intended_after_t0 >= limits.duration_ns) break;  // the end of the schedule
        const std::int64_t intended = t0 + intended_after_t0;
        std::int64_t now = clock.now();
        const bool late = k > 0 && now > intended;
        while (now < intended) {
            clock.sleep_until(intended);
            now = clock.now();
        }
        if (timed && now - t0 >= limits.duration_ns) {  // too late to start before D
            counts.missed = 1 + schedule.count_before(limits.duration_ns);
            break;
        }
        if (late) ++counts.late;
        send(k, intended, now);
        ++counts.count;
    }
    return counts;
}

}  // namespace harness
