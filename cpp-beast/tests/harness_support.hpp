// What the driver harness's tests share: running harness::main with fake clients (no network), scripted
// clients, and reading the document (Boost.JSON; tests/boost_json.cpp compiles its implementation once).
#pragma once

#include "harness.hpp"

#include <gtest/gtest.h>
#include <boost/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
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

// Runs harness::main as "test-driver --url http://127.0.0.1:9/ <flags>" with `make_client` (its clients
// shareable by the workers or not).
inline Outcome run_main(MakeClient make_client, std::vector<std::string> flags, std::string url = "http://127.0.0.1:9/",
                        bool shareable = false) {
    harness::Driver driver{"test-driver", "C++", "fake", "0", "", "", std::move(make_client)};
    driver.shareable = shareable;
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

// One answer of a ScriptedClient: what `get` / `upload` return, or throw.
using Step = std::function<harness::Fetch()>;

// What ScriptedClients were asked to upload (it outlives them: a worker's client goes with its thread).
struct Uploads {
    std::vector<std::string> methods;
    std::vector<std::string> bodies;
};

// Answers from a script, in turn (GET or upload alike), and logs the uploads it was asked for.
class ScriptedClient final : public harness::Client {
public:
    explicit ScriptedClient(std::vector<Step> script, std::shared_ptr<Uploads> uploads = nullptr)
        : script_(std::move(script)), uploads_(std::move(uploads)) {}
    harness::Fetch get(const std::string&) override { return script_.at(next_++ % script_.size())(); }
    harness::Fetch upload(const std::string&, const std::string& method, std::string_view body) override {
        if (uploads_) {
            uploads_->methods.push_back(method);
            uploads_->bodies.emplace_back(body);
        }
        return script_.at(next_++ % script_.size())();
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
    return [bytes] { return harness::Fetch{200, bytes}; };
}

}  // namespace harness_test
