// The open loop's schedule and loop (harness/schedule.hpp), with a fake clock: exact intended times, phases,
// Poisson streams, late starts, missed requests and the duration bound, without sleeping.
#include "schedule.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

using harness::Arrival;
using harness::LoopCounts;
using harness::LoopLimits;
using harness::open_loop;
using harness::Schedule;

namespace {

constexpr std::int64_t kMs = 1000000;

// Time moves only when the loop sleeps or a request takes its (scripted) time.
struct FakeClock {
    explicit FakeClock(std::int64_t start = 0) : t(start) {}
    std::int64_t t;
    std::int64_t oversleep = 0;  // added to every sleep, as a busy scheduler would
    std::vector<std::int64_t> sleeps;
    std::int64_t now() const { return t; }
    void sleep_until(std::int64_t target) {
        sleeps.push_back(target);
        t = std::max(t, target + oversleep);
    }
};

struct Sent {
    long k;
    std::int64_t intended;
    std::int64_t start;
    std::int64_t end;
};

// Runs the loop; request k takes service(k) ns of the fake clock, then the worker's own work after it (its
// records) `after` ns more, which is not part of the request.
template <class Service>
LoopCounts run(Schedule& schedule, LoopLimits limits, std::int64_t t0, FakeClock& clock, Service service,
               std::vector<Sent>& sent, std::int64_t after = 0) {
    return open_loop(schedule, limits, t0, clock, [&](long k, std::int64_t intended, std::int64_t start) {
        clock.t += service(k);
        const std::int64_t end = clock.t;
        sent.push_back({k, intended, start, end});
        clock.t += after;
        return end;
    });
}

std::vector<std::int64_t> draw(Schedule s, int n) {
    std::vector<std::int64_t> out;
    for (int i = 0; i < n; ++i) out.push_back(s.next());
    return out;
}

}  // namespace

TEST(Schedule, UniformIsTheDocumentedFormula) {
    // I(w, k) = (w + k·W) / R
    EXPECT_EQ(harness::uniform_intended_ns(1000, 4, 0, 0), 0);
    EXPECT_EQ(harness::uniform_intended_ns(1000, 4, 1, 0), 1 * kMs);
    EXPECT_EQ(harness::uniform_intended_ns(1000, 4, 3, 2), 11 * kMs);
    EXPECT_EQ(harness::uniform_intended_ns(3, 1, 0, 1), 333333333);  // rounded to the nearest ns
    EXPECT_EQ(harness::uniform_intended_ns(3, 1, 0, 2), 666666667);
    EXPECT_EQ(harness::uniform_intended_ns(0.5, 2, 1, 1000000), 4000002000000000);
    EXPECT_EQ(draw(Schedule(Arrival::uniform, 1000, 4, 2, 1), 3),
              (std::vector<std::int64_t>{2 * kMs, 6 * kMs, 10 * kMs}));
}

TEST(Schedule, UniformPhasesAreSpreadEvenly) {
    const int workers = 7;
    const double rate = 3500;  // every worker every 2 ms, the group every 2/7 ms
    std::vector<std::int64_t> all;
    for (int w = 0; w < workers; ++w) {
        const std::vector<std::int64_t> mine = draw(Schedule(Arrival::uniform, rate, workers, w, 1), 100);
        for (std::size_t k = 1; k < mine.size(); ++k) EXPECT_NEAR(mine[k] - mine[k - 1], 2 * kMs, 1);
        all.insert(all.end(), mine.begin(), mine.end());
    }
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), 700u);
    EXPECT_EQ(all.front(), 0);
    for (std::size_t i = 1; i < all.size(); ++i) EXPECT_NEAR(all[i] - all[i - 1], 2 * kMs / 7.0, 1) << i;
}

TEST(Schedule, PoissonIsTheContractsSchedule) {
    // docs/raw-format.md's example, which every harness tests: --seed 1, W = 4, R = 2000 (a mean of 2 ms)
    EXPECT_EQ(draw(Schedule(Arrival::poisson, 2000, 4, 0, 1), 5),
              (std::vector<std::int64_t>{1136339, 1722984, 1781836, 3404080, 5026749}));
    EXPECT_EQ(draw(Schedule(Arrival::poisson, 2000, 4, 1, 1), 5),
              (std::vector<std::int64_t>{1051237, 1628870, 2665114, 3199777, 5531920}));
    // SplitMix64 itself (Vigna's splitmix64.c from state 1); S + w wraps mod 2^64
    harness::SplitMix64 g(1);
    EXPECT_EQ(g.next(), 0x910a2dec89025cc1ULL);
    EXPECT_EQ(g.next(), 0xbeeb8da1658eec67ULL);
    EXPECT_EQ(draw(Schedule(Arrival::poisson, 2000, 4, 1, 18446744073709551615ULL), 100),
              draw(Schedule(Arrival::poisson, 2000, 4, 0, 0), 100));
}

TEST(Schedule, PoissonIsReproducibleAndSeededPerWorker) {
    const auto a = draw(Schedule(Arrival::poisson, 1000, 4, 1, 7), 500);
    EXPECT_EQ(a, draw(Schedule(Arrival::poisson, 1000, 4, 1, 7), 500));  // the same on every run
    EXPECT_NE(a, draw(Schedule(Arrival::poisson, 1000, 4, 2, 7), 500));  // each worker its own stream
    EXPECT_NE(a, draw(Schedule(Arrival::poisson, 1000, 4, 1, 8), 500));  // another seed
    EXPECT_EQ(a, draw(Schedule(Arrival::poisson, 1000, 4, 0, 8), 500));  // seed S + w
    for (std::size_t k = 1; k < a.size(); ++k) EXPECT_GE(a[k], a[k - 1]);
}

TEST(Schedule, PoissonHasTheRate) {
    // mean interval W/R per worker: over 200,000 intervals the mean is within 1% (the draws are fixed by the
    // seed, so this is exact arithmetic on one known stream, not a flaky statistic)
    const double rate = 500;
    const long workers = 5;
    const int n = 200000;
    const auto times = draw(Schedule(Arrival::poisson, rate, workers, 0, 1), n);
    const double mean_s = static_cast<double>(times.back()) / n / 1e9;
    EXPECT_NEAR(mean_s, workers / rate, 0.01 * workers / rate);
    // the W streams together: R arrivals per second
    long arrivals = 0;
    const std::int64_t horizon = 200LL * 1000 * kMs;  // 200 s
    for (long w = 0; w < workers; ++w) {
        Schedule s(Arrival::poisson, rate, workers, w, 1);
        arrivals += s.count_before(horizon);
    }
    EXPECT_NEAR(arrivals / 200.0, rate, 0.01 * rate);
}

TEST(OpenLoop, OnTimeRequestsStartAtTheirIntendedTime) {
    const std::int64_t t0 = 5000 * kMs;  // the loop works in the clock's time, relative to t0
    FakeClock clock(t0);
    Schedule s(Arrival::uniform, 1000, 2, 1, 1);  // I = 1, 3, 5, ... ms
    std::vector<Sent> sent;
    const LoopCounts c = run(
        s, {5, -1}, t0, clock, [](long) { return kMs / 10; }, sent);
    EXPECT_EQ(c.count, 5);
    EXPECT_EQ(c.late, 0);
    EXPECT_EQ(c.missed, 0);
    ASSERT_EQ(sent.size(), 5u);
    for (long k = 0; k < 5; ++k) {
        EXPECT_EQ(sent[k].k, k);
        EXPECT_EQ(sent[k].intended, t0 + (1 + 2 * k) * kMs);
        EXPECT_EQ(sent[k].start, sent[k].intended);
    }
    EXPECT_EQ(clock.sleeps,
              (std::vector<std::int64_t>{t0 + kMs, t0 + 3 * kMs, t0 + 5 * kMs, t0 + 7 * kMs, t0 + 9 * kMs}));
}

TEST(OpenLoop, LateStartsAreCountedAndChargedFromTheIntendedTime) {
    FakeClock clock;
    Schedule s(Arrival::uniform, 100, 1, 0, 1);  // every 10 ms
    std::vector<Sent> sent;
    // request 0 stalls 35 ms: requests 1, 2, 3 (intended 10, 20, 30 ms) start late, back to back
    const LoopCounts c = run(
        s, {6, -1}, 0, clock, [](long k) { return k == 0 ? 35 * kMs : kMs; }, sent);
    EXPECT_EQ(c.count, 6);
    EXPECT_EQ(c.late, 3);
    EXPECT_EQ(c.missed, 0);
    ASSERT_EQ(sent.size(), 6u);
    const std::vector<std::int64_t> starts{0, 35 * kMs, 36 * kMs, 37 * kMs, 40 * kMs, 50 * kMs};
    for (std::size_t k = 0; k < 6; ++k) {
        EXPECT_EQ(sent[k].intended, static_cast<std::int64_t>(k) * 10 * kMs);
        EXPECT_EQ(sent[k].start, starts[k]) << k;
    }
    // the corrected latency (end - intended) carries the stall, the service time (end - start) does not
    EXPECT_EQ(sent[1].end - sent[1].intended, 26 * kMs);
    EXPECT_EQ(sent[1].end - sent[1].start, kMs);
    EXPECT_EQ(sent[4].end - sent[4].intended, kMs);
}

TEST(OpenLoop, AnOversleptStartIsNotLate) {
    FakeClock clock;
    clock.oversleep = kMs / 5;  // the scheduler wakes the worker 200 µs after the intended time
    Schedule s(Arrival::uniform, 100, 1, 0, 1);
    std::vector<Sent> sent;
    const LoopCounts c = run(
        s, {4, -1}, 0, clock, [](long) { return kMs; }, sent);
    EXPECT_EQ(c.late, 0);
    EXPECT_EQ(sent[1].start, 10 * kMs + kMs / 5);  // charged to the request all the same
}

TEST(OpenLoop, TheLoopsOwnWorkAfterARequestIsNotLateness) {
    // request 0 ends 1 µs before request 1 is due, and the worker's records take 3 µs more: request 1 starts
    // 2 µs after its time, and is not late (request 0 ended before I(w, 1))
    FakeClock clock;
    Schedule s(Arrival::uniform, 100, 1, 0, 1);  // every 10 ms
    std::vector<Sent> sent;
    const LoopCounts c = run(
        s, {4, -1}, 0, clock, [](long k) { return k == 0 ? 10 * kMs - 1000 : kMs; }, sent, 3000);
    EXPECT_EQ(c.late, 0);
    EXPECT_EQ(sent[1].start, 10 * kMs + 2000);
    // and ending 1 ns after I(w, k) is late
    FakeClock clock2;
    Schedule s2(Arrival::uniform, 100, 1, 0, 1);
    sent.clear();
    EXPECT_EQ(run(
                  s2, {3, -1}, 0, clock2, [](long) { return 10 * kMs + 1; }, sent)
                  .late,
              2);
}

TEST(OpenLoop, TheFirstRequestIsNeverLate) {
    FakeClock clock(3 * kMs);  // the worker passed the gate 3 ms after t0 = 0, past I(w, 0) = 1 ms
    Schedule s(Arrival::uniform, 1000, 2, 1, 1);
    std::vector<Sent> sent;
    const LoopCounts c = run(
        s, {2, -1}, 0, clock, [](long) { return 0; }, sent);
    EXPECT_EQ(c.late, 0);  // no previous request held it up; request 1 (3 ms) starts on time
    EXPECT_EQ(sent[0].intended, kMs);
    EXPECT_EQ(sent[0].start, 3 * kMs);
    EXPECT_EQ(sent[1].start, 3 * kMs);
}

TEST(OpenLoop, RequestsAreAllSentHoweverLate) {
    FakeClock clock;
    Schedule s(Arrival::uniform, 100, 1, 0, 1);
    std::vector<Sent> sent;
    const LoopCounts c = run(
        s, {5, -1}, 0, clock, [](long) { return 1000 * kMs; }, sent);
    EXPECT_EQ(c.count, 5);
    EXPECT_EQ(c.late, 4);
    EXPECT_EQ(c.missed, 0);
}

TEST(OpenLoop, RequestsThatCannotStartBeforeTheDurationAreMissed) {
    const std::int64_t t0 = 7 * kMs;
    FakeClock clock(t0);
    Schedule s(Arrival::uniform, 100, 1, 0, 1);  // 0, 10, ..., 90 ms before D = 100 ms
    std::vector<Sent> sent;
    const LoopCounts c = run(
        s, {-1, 100 * kMs}, t0, clock, [](long k) { return k == 2 ? 200 * kMs : kMs; }, sent);
    EXPECT_EQ(c.count, 3);   // 0, 10, 20 ms; the one at 20 ms ends at 220 ms
    EXPECT_EQ(c.missed, 7);  // 30 ... 90 ms
    EXPECT_EQ(c.late, 0);
    EXPECT_EQ(clock.t, t0 + 220 * kMs);  // it returns when the last request ended, sending nothing more
}

TEST(OpenLoop, AStartOversleptPastTheDurationIsMissed) {
    FakeClock clock;
    clock.oversleep = 6 * kMs;
    Schedule s(Arrival::uniform, 100, 1, 0, 1);  // 0, ..., 90 ms; the wake-up for 90 ms comes at 96 ms
    std::vector<Sent> sent;
    const LoopCounts c = run(
        s, {-1, 95 * kMs}, 0, clock, [](long) { return kMs; }, sent);
    EXPECT_EQ(c.count + c.missed, 10);
    for (const Sent& r : sent) EXPECT_LT(r.start, 95 * kMs);
    EXPECT_EQ(c.missed, 1);
}

TEST(OpenLoop, TheDurationBoundsTheLoop) {
    // poisson arrivals, irregular service times, some longer than the mean interval
    for (const std::uint64_t seed : {1u, 2u, 3u}) {
        const std::int64_t t0 = 11 * kMs;
        const std::int64_t duration = 500 * kMs;
        FakeClock clock(t0);
        Schedule s(Arrival::poisson, 400, 4, 1, seed);  // mean interval 10 ms
        std::vector<Sent> sent;
        std::mt19937_64 rng(seed);
        std::vector<std::int64_t> service;
        const LoopCounts c = run(
            s, {-1, duration}, t0, clock,
            [&](long) {
                service.push_back(static_cast<std::int64_t>(rng() % (40 * kMs)));
                return service.back();
            },
            sent);
        Schedule fresh(Arrival::poisson, 400, 4, 1, seed);
        EXPECT_EQ(c.count + c.missed, fresh.count_before(duration));  // the whole schedule before D
        ASSERT_FALSE(sent.empty());
        for (const Sent& r : sent) {
            EXPECT_LT(r.start, t0 + duration);
            EXPECT_GE(r.start, r.intended);
        }
        EXPECT_GT(c.late, 0);
        // it stops by itself: when its last request, started before D, has ended
        EXPECT_EQ(clock.t, sent.back().end);
        EXPECT_LT(clock.t, t0 + duration + 40 * kMs);
    }
}

TEST(OpenLoop, ASchedulePastTheDurationSendsNothing) {
    FakeClock clock;
    Schedule s(Arrival::uniform, 1, 1, 0, 1);  // I = 0, 1 s, 2 s, ...
    std::vector<Sent> sent;
    LoopCounts c = run(
        s, {-1, 1500 * kMs}, 0, clock, [](long) { return kMs; }, sent);
    EXPECT_EQ(c.count, 2);
    EXPECT_EQ(c.missed, 0);
    Schedule late_phase(Arrival::uniform, 2, 4, 3, 1);  // worker 3 of 4 at 2/s: first at 1.5 s
    sent.clear();
    c = run(
        late_phase, {-1, 1000 * kMs}, 0, clock, [](long) { return kMs; }, sent);
    EXPECT_EQ(c.count, 0);
    EXPECT_EQ(c.missed, 0);
}
