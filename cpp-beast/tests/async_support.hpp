// Waiting for an AsyncClient's callbacks in a test: Result<T> gives the callback and waits (bounded) for it,
// counting its calls (each must come exactly once).
#pragma once

#include "beast_client/async_client.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

namespace test_support {

template <class T>
class Result {
public:
    std::function<void(T, std::exception_ptr)> callback() {
        auto s = state_;
        return [s](T value, std::exception_ptr error) {
            std::lock_guard<std::mutex> lock(s->mutex);
            ++s->calls;
            s->value = std::move(value);
            s->error = error;
            s->cv.notify_all();
        };
    }
    // The value (the error rethrown), once the callback came; a test failure (and T{}) after `limit`.
    T get(std::chrono::milliseconds limit = std::chrono::seconds(10)) {
        std::unique_lock<std::mutex> lock(state_->mutex);
        if (!state_->cv.wait_for(lock, limit, [&] { return state_->calls > 0; })) {
            ADD_FAILURE() << "no callback within " << limit.count() << " ms";
            return T{};
        }
        if (state_->error) std::rethrow_exception(state_->error);
        return std::move(state_->value);
    }
    int calls() {
        std::lock_guard<std::mutex> lock(state_->mutex);
        return state_->calls;
    }

private:
    struct State {
        std::mutex mutex;
        std::condition_variable cv;
        int calls = 0;
        T value{};
        std::exception_ptr error;
    };
    std::shared_ptr<State> state_ = std::make_shared<State>();
};

inline beast_client::FetchResult get(beast_client::AsyncClient& c, const std::string& url) {
    Result<beast_client::FetchResult> r;
    c.get(url, r.callback());
    return r.get();
}

// Every piece of a stream's body (their count in `pieces`).
inline std::string read_all(beast_client::AsyncResponseStream& s, int* pieces = nullptr) {
    std::string all;
    for (int n = 0;; ++n) {
        Result<std::optional<std::string>> r;
        s.next(r.callback());
        const auto piece = r.get();
        if (!piece) {
            if (pieces) *pieces = n;
            return all;
        }
        EXPECT_FALSE(piece->empty());
        all += *piece;
    }
}

}  // namespace test_support
