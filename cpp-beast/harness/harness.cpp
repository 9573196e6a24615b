// The clientbench driver contract (docs/raw-format.md) for C++ clients, shared by beast-driver and
// floor-driver: only how to create a worker's client and do one request with it differs between them.
//
// W std::threads, each with its own harness::Client (own keep-alive connection); K untimed warmup requests;
// then every worker waits at a start gate: once all are ready, main takes t0 (and the process CPU time)
// and opens the gate, so no timed loop starts before t0. Then each worker runs its timed loop: closed (N
// sequential requests) or open (open_loop() on the worker's Schedule, schedule.hpp). With --client-scope shared,
// one client made before the threads start (max_connections = W) serves every worker. With --connection new, a
// new client, hence a new connection, for every timed request, created inside the timed section. A GET of --url
// read whole is the client's get() (the hot loop); everything else goes through its send(): a POST / PUT body
// (one view of the pattern, or with --upload stream chunks of --chunk-size cut from it as the client takes them:
// body.hpp), whose answer is checked piece by piece against the /upload line or the body echoed; --download
// stream (pieces of at most C); with --targets worker w's request k goes to target (w + k) mod T (targets.hpp;
// its answer counted, not compared). A failed request's reason is `status <code>`, failure_reason() of the
// exception (harness.hpp), or, for an upload whose answer is neither, `Error: upload digest mismatch: ...`. The
// document (clientbench.raw/4) is written by document.cpp once every worker has finished.
#include "harness.hpp"

#include "beast_client/client.hpp"
#include "options.hpp"
#include "run.hpp"
#include "schedule.hpp"
#include "targets.hpp"

#include <cxxabi.h>
#include <sys/prctl.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

namespace harness {
Client::~Client() = default;

// The loop's helpers live in harness:: too, so that a profile's symbols (`clientbench profile`) tell the
// harness's frames from the driver's own anonymous namespace.
namespace {

using Clock = std::chrono::steady_clock;
using harness::Options;
using harness::Worker;
const char* kProg = "driver";

std::int64_t now_ns() {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

// The open loop's clock: the steady clock, and sleeping on it.
struct SteadyClock {
    std::int64_t now() const { return now_ns(); }
    void sleep_until(std::int64_t ns) const {
        std::this_thread::sleep_until(
            Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns))));
    }
};

// Workers arrive when ready and wait until main opens the gate; main waits until all have arrived, then opens
// it with t0, which every worker gets (the open loop's schedule is relative to it).
class StartGate {
public:
    explicit StartGate(std::size_t workers) : workers_(workers) {}
    std::int64_t arrive_and_wait() {
        std::unique_lock<std::mutex> lock(mutex_);
        ++arrived_;
        cv_.notify_all();
        cv_.wait(lock, [this] { return open_; });
        return t0_;
    }
    void wait_all_arrived() {
        std::unique_lock<std::mutex> lock(mutex_);
        cv_.wait(lock, [this] { return arrived_ >= workers_; });
    }
    void open(std::int64_t t0) {
        std::lock_guard<std::mutex> lock(mutex_);
        t0_ = t0;
        open_ = true;
        cv_.notify_all();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    std::size_t workers_;
    std::size_t arrived_ = 0;
    bool open_ = false;
    std::int64_t t0_ = 0;
};

std::int64_t process_cpu_ns() {
    timespec ts{};
    if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts) != 0) return 0;
    return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

std::string one_line(std::string text) {
    for (char& c : text)
        if (c == '\n' || c == '\r') c = ' ';
    const auto first = text.find_first_not_of(' ');
    const auto last = text.find_last_not_of(' ');
    return first == std::string::npos ? std::string() : text.substr(first, last - first + 1);
}

// The exception's dynamic type, demangled ("std::runtime_error", "std::out_of_range").
std::string type_name_of(const std::exception& e) {
    const char* mangled = typeid(e).name();
    int status = -1;
    std::unique_ptr<char, void (*)(void*)> demangled(abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                                     std::free);
    return status == 0 && demangled ? std::string(demangled.get()) : std::string(mangled);
}

bool is_failure_class(std::string_view name) {
    for (const char* c : {"TimeoutError", "TLSError", "ConnectionError", "ProtocolError", "InvalidUrl",
                          "InvalidRequest", "Cancelled", "Error"})
        if (name == c) return true;
    return false;
}

// `<class>: <detail>` (just the class when there is nothing to say)
std::string reason(const std::string& cls, const std::string& detail) {
    return detail.empty() ? cls : cls + ": " + detail;
}

const char* kNoClient = "the driver created no client";

harness::ClientOptions client_options(const Options& o) {
    return {std::min(o.timeout, 3.0e8), o.ca_file, o.insecure, o.shared ? static_cast<std::size_t>(o.workers) : 0};
}

std::unique_ptr<harness::Client> make_client(const harness::Driver& d, const harness::ClientOptions& options) {
    auto client = d.make_client(options);
    if (!client) throw std::runtime_error(kNoClient);
    return client;
}

// What every worker shares, read-only.
struct Run {
    const harness::Driver& driver;
    const Options& o;
    harness::ClientOptions client_options;
    bool upload;                           // POST / PUT
    harness::Pattern pattern;              // POST / PUT: the body's bytes (whole, or the buffer chunks are cut from)
    harness::Expected expected;            // POST / PUT: its /upload line, or the body echoed
    std::vector<harness::Target> targets;  // --targets: worker w's request k goes to (w + k) mod T
    harness::Client* shared = nullptr;     // --client-scope shared: every worker's client
    std::string shared_error;              // --client-scope shared: why it could not be made
    std::int64_t timeout_ns = 0;           // --timeout: a request that took longer failed
    bool phases = false;                   // --phases, and the driver's client records some

    std::size_t piece() const { return o.download_stream ? o.chunk_size : 0; }
    // a body as the client is given it: one buffer, or chunks cut as it takes them
    harness::Outgoing outgoing(std::string_view whole, const harness::Chunks& chunks) const {
        harness::Outgoing out;
        out.kind = o.upload_stream ? harness::Outgoing::Kind::stream : harness::Outgoing::Kind::whole;
        if (o.upload_stream)
            out.chunks = chunks;
        else
            out.whole = whole;
        return out;
    }
};

// Worker w's request k: a GET of --url read whole (the driver's get, the hot loop the benchmark measures, as it
// always was), or anything else through the driver's send: an upload whose answer is checked against the /upload
// line or the body echoed, a streamed download, the target (w + k) mod T (its answer counted, not compared).
// Returns the status; `bytes` the body bytes; `mismatch` the reason of an upload's wrong 200 answer; with `phases`
// (--phases), the request's phases there.
int request(const Run& run, harness::Client& client, long w, long k, std::uint64_t& bytes, std::string& mismatch,
            harness::Phases* phases = nullptr) {
    const Options& o = run.o;
    const auto get = [&](const std::string& url) { return phases ? client.get_phases(url, *phases) : client.get(url); };
    const auto send = [&](const std::string& url, const std::string& method, harness::Outgoing& body,
                          harness::Answer& answer) {
        return phases ? client.send_phases(url, method, body, answer, *phases) : client.send(url, method, body, answer);
    };
    if (run.targets.empty() && !run.upload && !o.download_stream) {
        const harness::Fetch fetch = get(o.url);
        bytes = fetch.bytes;
        return fetch.status;
    }
    if (run.targets.empty()) {
        harness::Outgoing body;  // a GET's: none
        if (run.upload) {
            const std::size_t whole = o.upload_stream ? 0 : static_cast<std::size_t>(o.body_size);
            body = run.outgoing(run.pattern.slice(0, whole),
                                harness::Chunks::of_pattern(run.pattern, o.body_size, o.chunk_size));
        }
        harness::Answer answer(run.upload ? &run.expected : nullptr, run.piece());
        const int status = send(o.url, o.method, body, answer);
        bytes = answer.bytes();
        if (status == 200 && !answer.right()) mismatch = answer.mismatch();
        return status;
    }
    const auto t = static_cast<std::size_t>(w + k) % run.targets.size();
    const harness::Target& target = run.targets[t];
    if (target.method == "GET" && !o.download_stream) {
        const harness::Fetch fetch = get(target.url);
        bytes = fetch.bytes;
        return fetch.status;
    }
    harness::Outgoing body;
    if (target.method != "GET") {
        const std::string_view bytes_of = target.body ? std::string_view(*target.body) : std::string_view();
        body = run.outgoing(bytes_of, harness::Chunks::of_bytes(bytes_of, o.chunk_size));
    }
    harness::Answer answer(nullptr, run.piece());
    const int status = send(target.url, target.method, body, answer);
    bytes = answer.bytes();
    return status;
}

// A worker's client: its own, or the shared one.
struct WorkerClient {
    std::unique_ptr<harness::Client> own;
    harness::Client* use = nullptr;
};

// "the request took 3.004 s, past --timeout 1 s": the reason of a request that ended after --timeout.
std::string overtime_text(std::int64_t took_ns, double timeout_s) {
    char text[96];
    std::snprintf(text, sizeof text, "the request took %.3f s, past --timeout %g s", static_cast<double>(took_ns) / 1e9,
                  timeout_s);
    return text;
}

// One request of the worker's loop, started at `start` (the steady clock): records its start, service time,
// bytes and failure, and returns its end. Its reason, first to last: the client's error; ended after --timeout
// (TimeoutError, whatever it returned: the timeout bounds the whole request); a status other than 200; an
// upload's answer other than the /upload line (or the body echoed).
inline std::int64_t perform(const Run& run, Worker& w, long w_index, WorkerClient& wc, long k, std::int64_t start) {
    const Options& o = run.o;
    std::optional<int> status;
    std::uint64_t nbytes = 0;
    std::string error;
    bool mismatch = false;
    harness::Phases phases;  // --phases: zeroed for each request
    if (!wc.use && !o.new_connection) {
        error = w.setup_error.empty() ? reason("Error", kNoClient) : w.setup_error;
    } else {
        try {
            if (o.new_connection) {  // a fresh client (and connection) for every request
                wc.use = nullptr;
                wc.own.reset();
                wc.own = make_client(run.driver, run.client_options);
                wc.use = wc.own.get();
            }
            std::string wrong;
            status = request(run, *wc.use, w_index, k, nbytes, wrong, run.phases ? &phases : nullptr);
            if (!wrong.empty()) {
                mismatch = true;
                error = std::move(wrong);
            }
        } catch (const std::exception& e) {
            error = harness::failure_reason(e);
        } catch (...) {
            error = reason("Error", "unknown exception");
        }
    }
    const std::int64_t end = now_ns();
    w.starts.push_back(start);
    w.latencies.push_back(end - start);
    w.bytes += nbytes;
    if ((error.empty() || mismatch) && end - start > run.timeout_ns)
        w.fail(k, reason("TimeoutError", overtime_text(end - start, o.timeout)));
    else if (!error.empty())
        w.fail(k, std::move(error));
    else if (*status != 200)
        w.fail(k, "status " + std::to_string(*status), status);
    else if (run.phases)  // a successful request's
        w.phases.add(phases, end - start);
    return end;
}

// How many requests a worker will likely send, so that its arrays do not grow (a copy the run would wait for)
// in the timed loop; capped, since a long schedule may also end early.
std::size_t expected_requests(const Options& o) {
    if (!o.duration_s) return static_cast<std::size_t>(o.requests);
    const double n = *o.rate / static_cast<double>(o.workers) * *o.duration_s;
    return static_cast<std::size_t>(std::min(n + 6 * std::sqrt(n) + 16, double{1 << 24}));
}

// D in whole ns, rounded as the intended times are (halves away from zero): a request is due when I(w, k) < D
std::int64_t duration_ns(const Options& o) {
    return o.duration_s ? static_cast<std::int64_t>(std::round(std::min(*o.duration_s * 1e9, 1e18))) : -1;
}

void run_worker(const Run& run, long index, Worker& w, StartGate& gate) {
    const Options& o = run.o;
    WorkerClient client;
    try {
        if (o.shared) {
            if (!run.shared) throw std::runtime_error(run.shared_error);
            client.use = run.shared;
        } else {
            client.own = make_client(run.driver, run.client_options);
            client.use = client.own.get();
        }
        for (long k = 0; k < o.warmup; ++k) {
            try {
                std::uint64_t bytes = 0;
                std::string mismatch;
                request(run, *client.use, index, k, bytes, mismatch);
            } catch (...) {  // warmup failures are not measured
            }
        }
    } catch (const std::exception& e) {  // still arrive at the gate so nobody waits forever
        w.setup_error = o.shared && !run.shared ? run.shared_error : harness::failure_reason(e);
        client = {};
    } catch (...) {
        w.setup_error = reason("Error", "unknown exception");
        client = {};
    }
    const std::size_t expected = expected_requests(o);
    w.starts.reserve(expected);
    w.latencies.reserve(expected);
    if (o.open()) w.intended.reserve(expected);
    const std::int64_t t0 = gate.arrive_and_wait();

    w.loop_start = now_ns();
    if (!o.open()) {
        for (long k = 0; k < o.requests; ++k) perform(run, w, index, client, k, now_ns());
    } else {
        // Linux delays a sleeping thread's wake-up by up to its timer slack (50 µs by default) to batch
        // timers; that delay would be charged to every request's corrected latency, so the worker asks for none
        ::prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
        harness::Schedule schedule(o.arrival, *o.rate, o.workers, index, o.seed);
        const harness::LoopLimits limits{o.duration_s ? -1 : o.requests, duration_ns(o)};
        SteadyClock clock;
        const harness::LoopCounts counts =
            harness::open_loop(schedule, limits, t0, clock, [&](long k, std::int64_t intended, std::int64_t start) {
                w.intended.push_back(intended);
                return perform(run, w, index, client, k, start);
            });
        w.late = counts.late;
        w.missed = counts.missed;
    }
    w.loop_end = now_ns();
    if (client.use) {
        try {
            w.tls = client.use->tls_info();
            if (w.latencies.size() > w.failed.size()) w.protocol = client.use->protocol();
        } catch (...) {  // diagnostics only
        }
    }
}

int run_group(const harness::Driver& d, const Options& o, std::vector<harness::Target> targets) {
    Run run{d,
            o,
            client_options(o),
            o.upload(),
            harness::Pattern(),
            {},
            std::move(targets),
            nullptr,
            {},
            static_cast<std::int64_t>(o.timeout * 1e9),
            o.phases && !d.phases.empty()};
    if (run.upload) {
        // a whole body is one view of the pattern's buffer (shared by every worker), a streamed one is cut from it
        run.pattern =
            o.upload_stream ? harness::Pattern::for_body(o.body_size, o.chunk_size) : harness::Pattern(o.body_size);
        run.expected = {run.pattern.upload_line(o.body_size), o.body_size, &run.pattern};
    }
    std::unique_ptr<harness::Client> shared;  // outlives the workers
    if (o.shared) {
        try {
            shared = make_client(d, run.client_options);
            run.shared = shared.get();
        } catch (const std::exception& e) {  // every worker's requests fail with it
            run.shared_error = harness::failure_reason(e);
        } catch (...) {
            run.shared_error = reason("Error", "unknown exception");
        }
    }
    std::vector<Worker> workers(static_cast<std::size_t>(o.workers));
    StartGate gate(workers.size());
    std::vector<std::thread> threads;
    threads.reserve(workers.size());
    try {
        for (std::size_t i = 0; i < workers.size(); ++i)
            threads.emplace_back(run_worker, std::cref(run), static_cast<long>(i), std::ref(workers[i]),
                                 std::ref(gate));
    } catch (const std::exception& e) {
        // the started threads wait on the barrier forever: nothing sensible to do but leave
        std::fprintf(stderr, "%s: cannot start %ld threads: %s\n", kProg, o.workers, e.what());
        std::fflush(stderr);
        std::_Exit(1);
    }
    gate.wait_all_arrived();
    harness::GroupTimes times;
    times.t0 = now_ns();
    const std::int64_t cpu0 = process_cpu_ns();
    gate.open(times.t0);
    for (auto& t : threads) t.join();
    times.wall = now_ns() - times.t0;
    times.cpu = process_cpu_ns() - cpu0;

    const std::string doc = harness::document(d, o, workers, times);
    if (std::fwrite(doc.data(), 1, doc.size(), stdout) != doc.size() || std::fflush(stdout) != 0) {
        std::fprintf(stderr, "%s: cannot write the result to stdout\n", kProg);
        return 1;
    }
    return 0;
}

}  // namespace
}  // namespace harness

std::string harness::failure_reason(const std::exception& e) {
    std::string cls = "Error";
    std::string name;  // the exception's own type name
    if (const auto* err = dynamic_cast<const beast_client::Error*>(&e)) {
        name = err->type_name();
        if (is_failure_class(name)) cls = name;
    } else {
        if (dynamic_cast<const std::invalid_argument*>(&e)) cls = "InvalidRequest";
        name = type_name_of(e);
    }
    const std::string text = one_line(e.what());
    if (name == cls) return reason(cls, text);
    return reason(cls, text.empty() || text == name ? name : name + ": " + text);
}

int harness::main(int argc, char** argv, const Driver& d) {
    kProg = d.prog;
    std::optional<Options> options;
    std::vector<Target> targets;
    // bad usage first, the files the flags name included: exit 2 wins over what the driver cannot do (3)
    try {
        options = parse_args(argc, argv);
        if (options && !options->targets.empty()) {
            targets = read_targets(options->targets);
            for (const Target& t : targets)
                if (options->http3 && t.url.compare(0, 8, "https://") != 0)
                    throw UsageError{"--http: 3 is HTTP/3 over QUIC, which needs https:// URLs, got '" + t.url +
                                     "' in " + options->targets};
        }
        if (options && !options->ca_file.empty()) check_ca_file(options->ca_file);
    } catch (const UsageError& e) {
        std::fprintf(stderr, "%s: error: %s\n", kProg, e.message.c_str());
        return 2;
    }
    if (!options) {
        std::printf("usage: %s%s%s\n", kProg, kUsage, d.help.c_str());
        return 0;
    }
    if (!options->ca_file.empty()) {  // a CA file the client cannot use is a usage error, not N failed requests
        try {
            make_client(d, client_options(*options));
        } catch (const std::exception& e) {
            std::fprintf(stderr, "%s: error: --ca-file: no PEM certificate in %s (%s)\n", kProg,
                         options->ca_file.c_str(), one_line(e.what()).c_str());
            return 2;
        }
    }
    // what the client cannot do at all: exit 3, nothing on stdout, one line (docs/raw-format.md)
    if (options->http2 || options->http3) {
        std::fprintf(stderr, "unsupported: HTTP/%s (%s)\n", options->http3 ? "3" : "2", d.no_http2.c_str());
        return 3;
    }
    if (options->shared && !d.shareable) {
        std::fprintf(stderr, "unsupported: --client-scope shared (%s)\n", d.not_shareable.c_str());
        return 3;
    }
    for (const auto& [asked, why, flag] :
         {std::make_tuple(options->upload_stream, &d.no_upload_stream, "--upload stream"),
          std::make_tuple(options->download_stream, &d.no_download_stream, "--download stream"),
          std::make_tuple(!options->targets.empty(), &d.no_targets, "--targets")})
        if (asked && !why->empty()) {
            std::fprintf(stderr, "unsupported: %s (%s)\n", flag, why->c_str());
            return 3;
        }
    try {
        return run_group(d, *options, std::move(targets));
    } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: internal error: %s\n", kProg, one_line(e.what()).c_str());
        return 1;
    }
}
