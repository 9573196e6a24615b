// Bounds on measured time, beside the other suites. On two busy cores a sleep ends late (CI saw a server's 40 ms
// pause read as 59 ms while the aarch64 wheels built beside the tests), never early, and a phase that holds its
// neighbour's time is off by a whole delay on every try. So a test whose checks bound a time runs as attempts: up
// to four, each with its own server and client; it passes on the first that keeps every bound and fails when none
// does, printing each attempt's misses. Checks that are not of time are plain EXPECTs, true on every attempt.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <string>

namespace timing_test {

inline double ms(std::chrono::nanoseconds d) { return std::chrono::duration<double, std::milli>(d).count(); }

class Misses {
public:
    // `measured` is `expected` within the contract's bound: 10 % + 1 ms (docs/raw-format.md)
    void about(double measured_ms, double expected_ms, const std::string& what) {
        const double slack = 0.1 * expected_ms + 1;
        if (measured_ms < expected_ms - slack || measured_ms > expected_ms + slack)
            add(what, measured_ms, "should be " + number(expected_ms) + " +- " + number(slack));
    }
    void below(double measured_ms, double limit_ms, const std::string& what) {
        if (!(measured_ms < limit_ms)) add(what, measured_ms, "should be below " + number(limit_ms));
    }
    bool empty() const { return text_.empty(); }
    const std::string& text() const { return text_; }

private:
    static std::string number(double v) {
        std::ostringstream s;
        s << v;
        return s.str();
    }
    void add(const std::string& what, double measured_ms, const std::string& rule) {
        text_ += "\n  " + what + ": " + number(measured_ms) + " ms, " + rule;
    }
    std::string text_;
};

// Runs `attempt(misses)` until one attempt misses no bound, at most `most` times.
template <class Attempt>
void attempts(Attempt&& attempt, int most = 4) {
    std::string seen;
    for (int i = 1; i <= most; ++i) {
        Misses misses;
        attempt(misses);
        if (::testing::Test::HasFatalFailure() || misses.empty()) return;
        seen += "attempt " + std::to_string(i) + ":" + misses.text() + "\n";
    }
    ADD_FAILURE() << "no attempt of " << most << " kept its timing bounds\n" << seen;
}

}  // namespace timing_test
