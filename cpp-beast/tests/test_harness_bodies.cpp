// The harness's streamed bodies, the echo answer and --targets (docs/raw-format.md, "Streamed bodies" and
// "Targets"): the pattern at any offset, chunks, the /upload line hashed span by span, the line-or-echo check in
// any chunking, the flags and their bad usage, the targets file, and what a run hands its fake clients (no
// network): streamed bodies, the pieces of a streamed download, the cycle of targets from w + k.
#include "body.hpp"
#include "harness_support.hpp"
#include "options.hpp"
#include "targets.hpp"
#include "upload.hpp"

#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <vector>

using harness_test::parse;
using harness_test::Reply;
using harness_test::run_main;
using harness_test::scripted;
using harness_test::Step;

namespace {

// The whole answer given in `pieces` (cut at the given offsets), checked against `e`.
bool answered(const harness::Expected* e, std::size_t piece, const std::string& body,
              const std::vector<std::size_t>& cuts) {
    harness::Answer a(e, piece);
    std::size_t at = 0;
    for (const std::size_t cut : cuts) {
        a.feed(std::string_view(body).substr(at, cut - at));
        at = cut;
    }
    a.feed(std::string_view(body).substr(at));
    EXPECT_EQ(a.bytes(), body.size());
    return a.right();
}

// A file of `text` in /tmp, removed with the object.
struct TempFile {
    std::string path;
    explicit TempFile(const std::string& text) {
        char name[] = "/tmp/harness-bodies-XXXXXX";
        const int fd = ::mkstemp(name);
        if (fd < 0) throw std::runtime_error("mkstemp failed");
        ::close(fd);
        path = name;
        std::ofstream(path, std::ios::binary) << text;
    }
    ~TempFile() { std::remove(path.c_str()); }
};

}  // namespace

TEST(Bodies, ThePatternAtAnyOffset) {
    const std::string whole = harness::upload_body(200);
    const harness::Pattern p(40);
    for (const std::uint64_t offset : {0, 1, 25, 26, 27, 51, 130, 160})
        for (const std::size_t length : {0, 1, 7, 26, 40}) {
            EXPECT_EQ(p.slice(offset, length), whole.substr(offset, length)) << offset << " " << length;
            EXPECT_TRUE(p.matches(offset, whole.substr(offset, length)));
        }
    // longer than the span: compared span by span
    EXPECT_TRUE(p.matches(3, whole.substr(3)));
    EXPECT_FALSE(p.matches(4, whole.substr(3)));
    std::string wrong = whole.substr(0, 100);
    wrong[77] = '!';
    EXPECT_FALSE(p.matches(0, wrong));
    // offsets far past 4 GiB
    const std::uint64_t far = (std::uint64_t{1} << 40) + 5;
    std::string want;
    for (std::uint64_t i = far; i < far + 3; ++i) want += static_cast<char>('a' + i % 26);
    EXPECT_EQ(p.slice(far, 3), want);
    EXPECT_TRUE(p.matches(far, want));
    EXPECT_FALSE(p.matches(far + 1, want));
}

TEST(Bodies, TheUploadLineIsHashedASpanAtATime) {
    for (const auto& [span, length] :
         std::vector<std::pair<std::size_t, std::size_t>>{{1, 0}, {1, 3}, {7, 100}, {26, 26}, {64, 1000}, {1000, 999}})
        EXPECT_EQ(harness::Pattern(span).upload_line(length), harness::upload_digest_line(harness::upload_body(length)))
            << span << " " << length;
    // no larger than the body, no smaller than a chunk or (body allowing) 64 KiB
    EXPECT_EQ(harness::Pattern::for_body(3, 65536).span(), 3u);
    EXPECT_EQ(harness::Pattern::for_body(1 << 30, 16).span(), 65536u);
    EXPECT_EQ(harness::Pattern::for_body(1 << 30, 1 << 20).span(), std::size_t{1} << 20);
    EXPECT_EQ(harness::Pattern::for_body(0, 16).span(), 1u);
}

TEST(Bodies, ChunksAreCutAsTheyAreTaken) {
    const harness::Pattern p = harness::Pattern::for_body(100, 30);
    harness::Chunks chunks = harness::Chunks::of_pattern(p, 100, 30);
    const harness::Chunks again = chunks;  // a copy starts over
    std::vector<std::size_t> sizes;
    std::string joined;
    for (std::string_view piece; chunks.next(piece);) {
        sizes.push_back(piece.size());
        joined += piece;
    }
    EXPECT_EQ(sizes, (std::vector<std::size_t>{30, 30, 30, 10}));
    EXPECT_EQ(joined, harness::upload_body(100));
    std::string_view piece;
    EXPECT_FALSE(chunks.next(piece));
    harness::Chunks copy = again;
    ASSERT_TRUE(copy.next(piece));
    EXPECT_EQ(piece, "abcdefghijklmnopqrstuvwxyzabcd");
    harness::Chunks none = harness::Chunks::of_pattern(p, 0, 30);
    EXPECT_FALSE(none.next(piece));
    // a chunk size larger than the pattern's span is cut to it
    const harness::Pattern eight(8);
    harness::Chunks cut = harness::Chunks::of_pattern(eight, 20, 30);
    while (cut.next(piece)) EXPECT_LE(piece.size(), 8u);
    harness::Chunks bytes = harness::Chunks::of_bytes("seven b", 3);
    std::vector<std::string> got;
    while (bytes.next(piece)) got.emplace_back(piece);
    EXPECT_EQ(got, (std::vector<std::string>{"sev", "en ", "b"}));
    EXPECT_EQ(bytes.length(), 7u);
}

TEST(Bodies, AnUploadAnswerIsTheLineOrTheBodyEchoed) {
    const harness::Pattern p = harness::Pattern::for_body(100, 7);
    const harness::Expected e{p.upload_line(100), 100, &p};
    const std::string body = harness::upload_body(100);
    EXPECT_EQ(e.line, harness::upload_digest_line(body));
    for (const std::size_t piece : {0, 1, 7}) {
        EXPECT_TRUE(answered(&e, piece, e.line, {10})) << piece;
        EXPECT_TRUE(answered(&e, piece, body, {33, 34, 99})) << piece;
    }
    // one byte wrong, short, long, empty, the line cut short: mismatches, with the first bytes to show
    std::string wrong = body;
    wrong[99] = '?';
    for (const std::string& answer : {wrong, body.substr(0, 99), body + "a", std::string(), e.line.substr(0, 67)})
        EXPECT_FALSE(answered(&e, 0, answer, {})) << answer;
    harness::Answer a(&e);
    a.feed("1000 0000");
    EXPECT_EQ(a.mismatch(), "Error: upload digest mismatch: expected '" + e.line +
                                "' (or the 100 bytes sent, echoed), got '1000 0000'");
    // a target's answer is only counted
    EXPECT_TRUE(answered(nullptr, 3, "anything at all", {8}));
}

TEST(Bodies, ABodyAsLongAsItsLineMayBeEither) {
    // 67 bytes: "67 " and 64 hex digits, the body's own length
    const harness::Pattern p(67);
    const harness::Expected e{p.upload_line(67), 67, &p};
    ASSERT_EQ(e.line.size(), 67u);
    EXPECT_TRUE(answered(&e, 0, e.line, {}));
    EXPECT_TRUE(answered(&e, 0, harness::upload_body(67), {}));
    std::string wrong = harness::upload_body(67);
    wrong[0] = '6';
    EXPECT_FALSE(answered(&e, 0, wrong, {}));
}

TEST(Bodies, TargetsAreLinesCommentsAndBlanksSkipped) {
    int reads = 0;
    const harness::ReadBody read = [&reads](const std::string& path) -> std::string {
        ++reads;
        if (path == "/b/seven") return "seven b";
        throw std::runtime_error("cannot read the body file " + path);
    };
    const std::string text =
        "# the runner's form\nGET http://127.0.0.1:1/bytes/10\n\n   \n  # indented\r\n"
        "POST http://127.0.0.1:1/upload @/b/seven\r\nPUT https://h/x @/b/seven\nPOST http://h/e\n";
    const std::vector<harness::Target> got = harness::parse_targets("t.txt", text, read);
    ASSERT_EQ(got.size(), 4u);
    EXPECT_EQ(reads, 1);  // once per distinct file
    EXPECT_EQ(got[0].method + " " + got[0].url, "GET http://127.0.0.1:1/bytes/10");
    EXPECT_FALSE(got[0].body);
    EXPECT_EQ(got[1].method + " " + got[1].url + " " + *got[1].body, "POST http://127.0.0.1:1/upload seven b");
    EXPECT_EQ(got[2].body, got[1].body);
    EXPECT_EQ(got[3].method + " " + got[3].url, "POST http://h/e");
    EXPECT_FALSE(got[3].body);
    // a bad line is named by its number
    for (const auto& [text, where, why] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"", "--targets t.txt: ", "no targets"},
             {"# only a comment\n\n", "--targets t.txt: ", "no targets"},
             {"GET http://h/\nDELETE http://h/\n", "--targets t.txt, line 2: ", "DELETE"},
             {"get http://h/\n", "--targets t.txt, line 1: ", "'get'"},
             {"GET\n", "--targets t.txt, line 1: ", "METHOD URL"},
             {"GET http://h/ @/b/seven extra\n", "--targets t.txt, line 1: ", "METHOD URL"},
             {"\nPOST http://h/ /b/seven\n", "--targets t.txt, line 2: ", "absolute path"},
             {"POST http://h/ @b/seven\n", "--targets t.txt, line 1: ", "absolute path"},
             {"POST http://h/ @\n", "--targets t.txt, line 1: ", "absolute path"},
             {"POST http://h/ @/no/such\n", "--targets t.txt, line 1: ", "/no/such"},
             {"GET http://h/ @/b/seven\n", "--targets t.txt, line 1: ", "a GET sends no body"},
             {"GET /bytes/10\n", "--targets t.txt, line 1: ", "the URL"},
             {"GET ftp://h/\n", "--targets t.txt, line 1: ", "http:// or https://"},
             {"GET http://h:0/\n", "--targets t.txt, line 1: ", "port"},
         }) {
        try {
            harness::parse_targets("t.txt", text, read);
            ADD_FAILURE() << text << ": accepted";
        } catch (const harness::UsageError& e) {
            EXPECT_EQ(e.message.rfind(where, 0), 0u) << text << ": " << e.message;
            EXPECT_NE(e.message.find(why), std::string::npos) << text << ": " << e.message;
            EXPECT_EQ(e.message.find('\n'), std::string::npos) << e.message;
        }
    }
}

TEST(Bodies, BadUsageOfTheNewFlagsExits2NamingTheFlag) {
    const TempFile targets("GET http://127.0.0.1:9/a\n");
    const TempFile bad("GET http://127.0.0.1:9/a\nGET http://127.0.0.1:9/b extra\n");
    for (const auto& [flags, flag] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--chunk-size", "0"}, "--chunk-size"},
             {{"--chunk-size", "-1"}, "--chunk-size"},
             {{"--chunk-size", "16777217"}, "--chunk-size"},
             {{"--chunk-size", "64k"}, "--chunk-size"},
             {{"--upload", "chunked"}, "--upload"},
             {{"--download", "lazy"}, "--download"},
             {{"--upload", "stream"}, "--upload"},
             {{"--upload", "stream", "--method", "GET"}, "--upload"},
             {{"--targets", "/no/such/targets.txt"}, "--targets"},
             {{"--targets", targets.path, "--method", "POST"}, "--method"},
             {{"--targets", targets.path, "--method", "GET"}, "--method"},
             {{"--targets", targets.path, "--body-size", "0"}, "--body-size"},
             {{"--targets", bad.path}, "--targets " + bad.path + ", line 2: "},
         }) {
        const harness_test::Outcome o = run_main(scripted({harness_test::ok()}), flags);
        EXPECT_EQ(o.status, 2) << flag;
        EXPECT_TRUE(o.out.empty()) << flag;
        EXPECT_NE(o.err.find(flag), std::string::npos) << o.err;
        EXPECT_EQ(o.err.find('\n'), o.err.size() - 1) << o.err;
    }
    // the bounds and --chunk-size with whole bodies are accepted; the document says what ran
    for (const std::vector<std::string>& flags :
         {std::vector<std::string>{"--download", "stream", "--chunk-size", "1"},
          std::vector<std::string>{"--download", "stream", "--chunk-size", "16777216"},
          std::vector<std::string>{"--chunk-size", "10"}}) {
        std::vector<std::string> all{"--workers", "1", "--requests", "1"};
        all.insert(all.end(), flags.begin(), flags.end());
        const harness_test::Outcome o = run_main(scripted({harness_test::ok()}), all);
        EXPECT_EQ(o.status, 0) << o.err;
        const auto v = parse(o.out);
        EXPECT_EQ(v.at("workload").at("chunk_size"), std::stoll(flags.back()));
    }
}

TEST(Bodies, ADriverThatCannotStreamOrCycleExits3) {
    harness::Driver d{"test-driver", "C++", "fake", "0", "", "", scripted({harness_test::ok()})};
    d.no_upload_stream = "no chunked bodies";
    d.no_download_stream = "reads bodies whole";
    d.no_targets = "one URL";
    const TempFile targets("GET http://127.0.0.1:9/a\n");
    for (const auto& [flags, line] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--method", "POST", "--upload", "stream"}, "unsupported: --upload stream (no chunked bodies)\n"},
             {{"--download", "stream"}, "unsupported: --download stream (reads bodies whole)\n"},
             {{"--targets", targets.path}, "unsupported: --targets (one URL)\n"},
         }) {
        const harness_test::Outcome o = harness_test::run_with(d, flags);
        EXPECT_EQ(o.status, 3) << line;
        EXPECT_EQ(o.err, line);
        EXPECT_TRUE(o.out.empty());
    }
}

// ---- what a run hands its clients ----------------------------------------------------------------------------

namespace {

// Every client's own log, in the order the clients were made (the workers make theirs at once).
struct Logs {
    std::mutex mutex;
    std::vector<std::shared_ptr<harness_test::Uploads>> clients;
};

harness_test::MakeClient logged(std::shared_ptr<Logs> logs, std::vector<Step> script) {
    return [logs, script](const harness::ClientOptions&) {
        auto log = std::make_shared<harness_test::Uploads>();
        {
            std::lock_guard<std::mutex> lock(logs->mutex);
            logs->clients.push_back(log);
        }
        return std::make_unique<harness_test::ScriptedClient>(script, log);
    };
}

}  // namespace

TEST(Bodies, AStreamedUploadIsCutIntoChunksAndItsAnswerChecked) {
    const auto logs = std::make_shared<Logs>();
    static const std::string line = harness::upload_digest_line(harness::upload_body(100000));
    static const std::string echo = harness::upload_body(100000);
    std::string corrupt = echo;
    corrupt[77777] = 'A';
    static const std::string wrong = corrupt;
    const std::vector<Step> script{[] {
                                       return Reply{200, line.size(), line};
                                   },
                                   [] {
                                       return Reply{200, echo.size(), echo};
                                   },
                                   [] {
                                       return Reply{200, wrong.size(), wrong};
                                   }};
    const harness_test::Outcome o =
        run_main(logged(logs, script), {"--workers", "1", "--requests", "3", "--method", "PUT", "--body-size", "100000",
                                        "--upload", "stream", "--chunk-size", "4096"});
    ASSERT_EQ(o.status, 0) << o.err;
    const auto v = parse(o.out);
    const auto& workload = v.at("workload");
    EXPECT_EQ(workload.at("upload"), "stream");
    EXPECT_EQ(workload.at("download"), "whole");
    EXPECT_EQ(workload.at("chunk_size"), 4096);
    EXPECT_TRUE(workload.at("targets").is_null());
    ASSERT_EQ(logs->clients.size(), 1u);
    const harness_test::Uploads& log = *logs->clients[0];
    ASSERT_EQ(log.bodies.size(), 3u);
    for (std::size_t i = 0; i < 3; ++i) {
        EXPECT_EQ(log.bodies[i], echo);  // the pattern, never made whole by the harness
        ASSERT_EQ(log.chunks[i].size(), 25u);
        EXPECT_EQ(log.chunks[i][0], 4096u);
        EXPECT_EQ(log.chunks[i][24], 100000u - 24 * 4096);
        EXPECT_EQ(log.pieces[i], 0u);  // read whole
    }
    // the line and the echo are right; a byte wrong in the echo is a mismatch
    const auto& w = v.at("workers").at(0);
    EXPECT_EQ(w.at("failure_count"), 1);
    EXPECT_EQ(w.at("failures").at(0).at("index"), 2);
    EXPECT_EQ(
        harness_test::text(w.at("failures").at(0).at("reason"))
            .rfind("Error: upload digest mismatch: expected '" + line + "' (or the 100000 bytes sent, echoed)", 0),
        0u);
    EXPECT_TRUE(w.at("failures").at(0).at("status").is_null());
}

TEST(Bodies, AStreamedDownloadGoesThroughSendInPiecesOfC) {
    const auto logs = std::make_shared<Logs>();
    const harness_test::Outcome o =
        run_main(logged(logs, {harness_test::ok(1000)}),
                 {"--workers", "1", "--requests", "2", "--download", "stream", "--chunk-size", "64"});
    ASSERT_EQ(o.status, 0) << o.err;
    const harness_test::Uploads& log = *logs->clients.at(0);
    EXPECT_EQ(log.requests, (std::vector<std::string>{"GET http://127.0.0.1:9/", "GET http://127.0.0.1:9/"}));
    EXPECT_EQ(log.pieces, (std::vector<std::size_t>{64, 64}));
    EXPECT_EQ(log.bodies, (std::vector<std::string>{"", ""}));
    const auto v = parse(o.out);
    EXPECT_EQ(v.at("workers").at(0).at("bytes"), 2000);
    EXPECT_EQ(v.at("workers").at(0).at("failure_count"), 0);
}

TEST(Bodies, TargetsAreCycledFromWPlusK) {
    const TempFile body("0123456789");
    const TempFile targets("GET http://127.0.0.1:9/a\nPOST http://127.0.0.1:9/b @" + body.path +
                           "\nPUT http://127.0.0.1:9/c\n");
    for (const bool open : {false, true})
        for (const bool stream : {false, true}) {
            const auto logs = std::make_shared<Logs>();
            std::vector<std::string> flags{"--workers", "2", "--requests", "5",
                                           "--warmup",  "1", "--targets",  targets.path};
            if (open) flags.insert(flags.end(), {"--rate", "2000"});
            if (stream) flags.insert(flags.end(), {"--upload", "stream", "--chunk-size", "4"});
            const harness_test::Outcome o = run_main(logged(logs, {harness_test::ok(3)}), flags);
            ASSERT_EQ(o.status, 0) << o.err;
            const auto v = parse(o.out);
            EXPECT_EQ(harness_test::text(v.at("workload").at("targets")), targets.path);
            EXPECT_EQ(v.at("workload").at("method"), "GET");
            // worker w's request k (warm-up and timed each from 0) goes to target (w + k) mod 3: a, b, c
            const std::string a = "GET http://127.0.0.1:9/a", b = "POST http://127.0.0.1:9/b",
                              c = "PUT http://127.0.0.1:9/c";
            const std::vector<std::vector<std::string>> expected{{a, a, b, c, a, b}, {b, b, c, a, b, c}};
            ASSERT_EQ(logs->clients.size(), 2u);
            std::vector<std::vector<std::string>> got{logs->clients[0]->requests, logs->clients[1]->requests};
            if (got[0] != expected[0]) std::swap(got[0], got[1]);
            EXPECT_EQ(got, expected) << open << stream;
            for (const auto& log : logs->clients)
                for (std::size_t i = 0; i < log->methods.size(); ++i) {
                    // a GET went through get(); a target's body is its file's, streamed in C-byte chunks
                    const bool post = log->methods[i] == "POST";
                    EXPECT_EQ(log->bodies[i], post ? "0123456789" : "");
                    const std::vector<std::size_t> chunks =
                        stream && post ? std::vector<std::size_t>{4, 4, 2} : std::vector<std::size_t>{};
                    EXPECT_EQ(log->chunks[i], chunks);
                }
            for (const auto& w : v.at("workers").as_array()) {
                EXPECT_EQ(w.at("bytes"), 15);  // a target's answer is counted, not compared
                EXPECT_EQ(w.at("failure_count"), 0);
            }
        }
}
