// beast-driver: the clientbench workload with the Boost.Beast client (beast_client::Client), W threads.
#include "beast_client/client.hpp"
#include "harness.hpp"

#include <chrono>
#include <memory>
#include <string>

namespace {

class BeastClient final : public harness::Client {
public:
    explicit BeastClient(double timeout_s)
        : client_(std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::duration<double>(timeout_s))) {}
    harness::Fetch get(const std::string& url) override {
        const int status = client_.get(url);
        return {status, client_.last_body_bytes()};
    }

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
        "\nRuns the clientbench workload with the Boost.Beast client (one beast_client::Client per thread)\n"
        "and prints one clientbench.raw/1 JSON document on stdout (see docs/raw-format.md).",
        [](double timeout_s) { return std::make_unique<BeastClient>(timeout_s); },
    };
    return harness::main(argc, argv, driver);
}
