// beast-driver: the clientbench workload with the Boost.Beast client (beast_client::Client), W threads.
// https:// URLs too: --ca-file / --insecure become the client's TlsConfig. A GET is Client::get (the body
// counted, not kept); a POST / PUT is Client::request, whose response body the harness checks.
#include "beast_client/client.hpp"
#include "harness.hpp"

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace {

class BeastClient final : public harness::Client {
public:
    explicit BeastClient(const harness::ClientOptions& o)
        : client_(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(o.timeout_s)),
                  beast_client::TlsConfig{!o.insecure, o.ca_file}) {}
    harness::Fetch get(const std::string& url) override {
        const int status = client_.get(url);
        return {status, client_.last_body_bytes()};
    }
    harness::Fetch upload(const std::string& url, const std::string& method, std::string_view body) override {
        last_ = client_.request(method, url, {}, body);
        return {last_.status, last_.body.size(), last_.body};
    }
    std::optional<beast_client::TlsInfo> tls_info() const override { return client_.tls_info(); }

private:
    beast_client::Client client_;
    beast_client::Response last_;  // the last upload's response: Fetch::body points into it
};

}  // namespace

int main(int argc, char** argv) {
    const harness::Driver driver{
        "beast-driver",
        "C++",
        "beast",
        beast_client::library_version(),
        std::string("beast-client ") + beast_client::version + ", one io_context per thread",
        "\nRuns the clientbench workload with the Boost.Beast client (one beast_client::Client per thread)\n"
        "and prints one clientbench.raw/2 JSON document on stdout (see docs/raw-format.md).",
        [](const harness::ClientOptions& o) { return std::make_unique<BeastClient>(o); },
    };
    return harness::main(argc, argv, driver);
}
