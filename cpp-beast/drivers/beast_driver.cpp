// beast-driver: the clientbench workload with the Boost.Beast client (beast_client::Client), W threads.
// https:// URLs too: --ca-file / --insecure become the client's TlsConfig. A GET is Client::get (the body
// counted, not kept); a POST / PUT is Client::request, whose response body the harness checks. With
// --client-scope shared one Client (its pool bounded to W connections per origin) serves every thread.
// --http 2: unsupported (exit 3), Boost.Beast speaks HTTP/1.1.
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
        : client_(beast_client::Timeouts{std::chrono::duration_cast<std::chrono::nanoseconds>(
                                             std::chrono::duration<double>(o.timeout_s)),
                                         std::nullopt, std::nullopt},
                  beast_client::TlsConfig{!o.insecure, o.ca_file}, std::chrono::milliseconds(50), o.max_connections) {}
    harness::Fetch get(const std::string& url) override {
        std::size_t bytes = 0;
        const int status = client_.get(url, bytes);
        return {status, bytes};
    }
    harness::Fetch upload(const std::string& url, const std::string& method, std::string_view body) override {
        // the calling thread's last response (Fetch::body points into it): threads may share this client
        thread_local beast_client::Response last;
        last = client_.request(method, url, {}, body);
        return {last.status, last.body.size(), last.body};
    }
    std::optional<beast_client::TlsInfo> tls_info() const override { return client_.tls_info(); }
    // the client sends HTTP/1.1 requests and keeps a connection only for an HTTP/1.1 response
    std::optional<std::string> protocol() const override { return "HTTP/1.1"; }

private:
    beast_client::Client client_;
};

}  // namespace

int main(int argc, char** argv) {
    const harness::Driver driver{
        "beast-driver",
        "C++",
        "beast",
        beast_client::library_version(),
        std::string("beast-client ") + beast_client::version + ", one io_context per thread",
        "\nRuns the clientbench workload with the Boost.Beast client (one beast_client::Client per thread, or one\n"
        "for all with --client-scope shared)\n"
        "and prints one clientbench.raw/2 JSON document on stdout (see docs/raw-format.md).",
        [](const harness::ClientOptions& o) { return std::make_unique<BeastClient>(o); },
        true,
        "",
        "Boost.Beast speaks HTTP/1.1",
    };
    return harness::main(argc, argv, driver);
}
