// beast-driver: the clientbench workload with the Boost.Beast client (beast_client::Client), W threads.
// https:// URLs too: --ca-file / --insecure become the client's TlsConfig. A GET read whole is Client::get (the
// body counted, not kept); a POST / PUT with both bodies whole is Client::request, whose response body the
// harness checks; --upload stream is RequestOptions::upload (chunked, each chunk taken from the harness as the
// library writes), --download stream Client::stream's pieces (redirects and decoding off in both). With
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
    // --phases: the library records them (beast_client::Phases)
    harness::Fetch get_phases(const std::string& url, harness::Phases& phases) override {
        std::size_t bytes = 0;
        const int status = client_.get(url, bytes, {}, &phases);
        return {status, bytes};
    }
    int send(const std::string& url, const std::string& method, harness::Outgoing& body,
             harness::Answer& answer) override {
        return send(url, method, body, answer, nullptr);
    }
    int send_phases(const std::string& url, const std::string& method, harness::Outgoing& body, harness::Answer& answer,
                    harness::Phases& phases) override {
        return send(url, method, body, answer, &phases);
    }
    std::optional<beast_client::TlsInfo> tls_info() const override { return client_.tls_info(); }
    // the client sends HTTP/1.1 requests and keeps a connection only for an HTTP/1.1 response
    std::optional<std::string> protocol() const override { return "HTTP/1.1"; }

private:
    int send(const std::string& url, const std::string& method, harness::Outgoing& body, harness::Answer& answer,
             harness::Phases* phases) {
        const bool stream_up = body.kind == harness::Outgoing::Kind::stream;
        if (!stream_up && answer.piece() == 0) {  // both whole: request(), the response body in one buffer
            // the calling thread's buffer, re-used (threads may share this client)
            thread_local beast_client::Response last;
            last = client_.request(method, url, {}, body.whole, {}, phases);
            answer.feed(last.body);
            return last.status;
        }
        // the same exchange as request(): no redirects, no Accept-Encoding
        beast_client::RequestOptions options;
        options.follow_redirects = false;
        options.decompress = false;
        options.phases = phases != nullptr;
        if (stream_up) {  // sent with Transfer-Encoding: chunked, each chunk taken as the client writes
            options.upload = [&chunks = body.chunks](std::string_view& piece) { return chunks.next(piece); };
        }
        if (answer.piece() == 0) {  // a streamed upload read whole
            const beast_client::Response r = client_.send(method, url, {}, {}, options);
            answer.feed(r.body);
            if (phases && r.phases) *phases = *r.phases;
            return r.status;
        }
        // --download stream: the pieces as the library reads them (the harness cuts longer ones to C)
        const std::unique_ptr<beast_client::ResponseStream> stream =
            client_.stream(method, url, {}, body.whole, options);
        thread_local std::string piece;
        while (stream->next(piece)) answer.feed(piece);
        if (phases) {
            if (const auto recorded = stream->phases()) *phases = *recorded;
        }
        return stream->status();
    }

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
        "and prints one clientbench.raw/4 JSON document on stdout (see docs/raw-format.md).",
        [](const harness::ClientOptions& o) { return std::make_unique<BeastClient>(o); },
        true,
        "",
        "Boost.Beast speaks HTTP/1.1",
        {},
        {},
        {},
        {"connect", "tls", "send", "wait", "receive"},  // --phases: the library's (dns when it resolves a name)
    };
    return harness::main(argc, argv, driver);
}
