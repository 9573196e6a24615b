// What the driver harness's tests share: running harness::main with fake clients (no network), scripted
// clients, and reading the document (Boost.JSON; tests/boost_json.cpp compiles its implementation once).
#pragma once

#include "harness.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace harness_test {

namespace json = boost::json;

using MakeClient = std::function<std::unique_ptr<harness::Client>(const harness::ClientOptions&)>;

struct Outcome {
    int status = -1;
    std::string out;  // stdout: the document
    std::string err;  // stderr
};

// Runs harness::main with `driver` as "test-driver --url <url> <flags>".
inline Outcome run_with(const harness::Driver& driver, std::vector<std::string> flags,
                        std::string url = "http://127.0.0.1:9/") {
    std::vector<std::string> args{"test-driver", "--url", std::move(url)};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    Outcome o;
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    o.status = harness::main(static_cast<int>(argv.size()), argv.data(), driver);
    o.err = testing::internal::GetCapturedStderr();
    o.out = testing::internal::GetCapturedStdout();
    return o;
}

// Runs harness::main as "test-driver --url http://127.0.0.1:9/ <flags>" with `make_client` (its clients
// shareable by the workers or not).
inline Outcome run_main(MakeClient make_client, std::vector<std::string> flags, std::string url = "http://127.0.0.1:9/",
                        bool shareable = false) {
    harness::Driver driver{"test-driver", "C++", "fake", "0", "", "", std::move(make_client)};
    driver.shareable = shareable;
    return run_with(driver, std::move(flags), std::move(url));
}

// Runs harness::main and returns stdout (the exit status in *exit_status).
inline std::string run_driver(MakeClient make_client, std::vector<std::string> flags, int* exit_status = nullptr) {
    Outcome o = run_main(std::move(make_client), std::move(flags));
    if (exit_status) *exit_status = o.status;
    return o.out;
}

// The document, parsed (a null value when stdout is not JSON: the test's expectations then fail).
inline json::value parse(const std::string& doc) {
    boost::system::error_code ec;
    json::value v = json::parse(doc, ec);
    EXPECT_FALSE(ec) << doc.substr(0, 500);
    return ec ? json::value() : v;
}

// A string of the document ("" when it is not one: the test's expectation then fails).
inline std::string text(const json::value& v) { return v.is_string() ? std::string(v.get_string()) : std::string(); }

inline std::vector<std::int64_t> ints(const json::value& array) {
    std::vector<std::int64_t> out;
    for (const auto& v : array.as_array()) out.push_back(v.to_number<std::int64_t>());
    return out;
}

// One answer of a ScriptedClient: a status and `bytes` body bytes, which start with `body` (the rest is dots).
struct Reply {
    int status = 0;
    std::uint64_t bytes = 0;
    std::string_view body = {};
    Reply(int s, std::uint64_t b, std::string_view text = {}) : status(s), bytes(b), body(text) {}
    // implicit: a step of a GET may return the Fetch itself
    Reply(harness::Fetch f) : status(f.status), bytes(f.bytes) {}
};

// What `get` / `send` return, or throw.
using Step = std::function<Reply()>;

// What ScriptedClients were asked for (it outlives them: a worker's client goes with its thread; its workers may
// log at once).
struct Uploads {
    std::mutex mutex;
    std::vector<std::string> methods;              // of send()
    std::vector<std::string> bodies;               // of send(): the body, whole or its chunks joined
    std::vector<std::vector<std::size_t>> chunks;  // of send(): a streamed body's chunk sizes (empty: whole)
    std::vector<std::string> requests;             // of get() and send(): "<method> <url>"
    std::vector<std::size_t> pieces;               // of send(): Answer::piece() (--download stream: C)
};

// Answers from a script, in turn (get or send alike), and logs what it was asked for.
class ScriptedClient final : public harness::Client {
public:
    explicit ScriptedClient(std::vector<Step> script, std::shared_ptr<Uploads> uploads = nullptr)
        : script_(std::move(script)), uploads_(std::move(uploads)) {}
    harness::Fetch get(const std::string& url) override {
        if (uploads_) {
            std::lock_guard<std::mutex> lock(uploads_->mutex);
            uploads_->requests.push_back("GET " + url);
        }
        const Reply r = script_.at(next_++ % script_.size())();
        return {r.status, r.bytes};
    }
    int send(const std::string& url, const std::string& method, harness::Outgoing& body,
             harness::Answer& answer) override {
        std::string sent(body.whole);
        std::vector<std::size_t> sizes;
        std::string_view piece;
        while (body.kind == harness::Outgoing::Kind::stream && body.chunks.next(piece)) {
            sent += piece;
            sizes.push_back(piece.size());
        }
        if (uploads_) {
            std::lock_guard<std::mutex> lock(uploads_->mutex);
            uploads_->methods.push_back(method);
            uploads_->bodies.push_back(std::move(sent));
            uploads_->chunks.push_back(std::move(sizes));
            uploads_->requests.push_back(method + " " + url);
            uploads_->pieces.push_back(answer.piece());
        }
        const Reply r = script_.at(next_++ % script_.size())();
        answer.feed(r.body);
        if (r.bytes > r.body.size()) answer.feed(std::string(r.bytes - r.body.size(), '.'));
        return r.status;
    }

private:
    std::vector<Step> script_;
    std::shared_ptr<Uploads> uploads_;
    std::size_t next_ = 0;
};

inline MakeClient scripted(std::vector<Step> script) {
    return [script](const harness::ClientOptions&) { return std::make_unique<ScriptedClient>(script); };
}

inline Step ok(std::uint64_t bytes = 1) {
    return [bytes] { return Reply{200, bytes}; };
}

}  // namespace harness_test
