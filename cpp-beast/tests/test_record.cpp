// What the harness records: HdrHistogram's buckets (harness/histogram.hpp), the upload body and its /upload
// line (harness/upload.hpp), and the clientbench.raw/4 document of a closed loop, with fake clients.
#include "harness_support.hpp"
#include "histogram.hpp"
#include "upload.hpp"

#include "beast_client/client.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <utility>
#include <vector>

using harness::histogram_bucket;
using harness::histogram_counts;
using harness_test::ok;
using harness_test::parse;
using harness_test::run_driver;
using harness_test::scripted;
using harness_test::Step;
using harness_test::json::value;

namespace {

// HdrHistogram's definition, step by step: a value's sub-bucket unit is the power of two that brings it
// below 2,048 sub-buckets; the bucket starts at the value rounded down to that unit.
std::int64_t reference_bucket(std::int64_t v) {
    std::int64_t unit = 1;
    while (v / unit >= 2048) unit *= 2;
    return v / unit * unit;
}

}  // namespace

TEST(Histogram, TheSpecsExamples) {
    EXPECT_EQ(histogram_bucket(2049), 2048);
    EXPECT_EQ(histogram_bucket(1000999), 1000960);
    EXPECT_EQ(histogram_bucket(0), 0);
    EXPECT_EQ(histogram_bucket(1), 1);
    EXPECT_EQ(histogram_bucket(2047), 2047);
    EXPECT_EQ(histogram_bucket(2048), 2048);
    EXPECT_EQ(histogram_bucket(-5), 0);
}

TEST(Histogram, ValuesAroundEveryPowerOfTwo) {
    for (int p = 1; p < 63; ++p) {
        const std::int64_t pow = std::int64_t{1} << p;
        // 2^p starts a bucket; below 2,048 every value is its own bucket; above, a bucket [2^p, 2^(p+1)) is
        // 2^(p-10) wide, and the one just below 2^p is 2^(p-11) wide
        EXPECT_EQ(histogram_bucket(pow), pow) << p;
        EXPECT_EQ(histogram_bucket(pow + 1), p >= 11 ? pow : pow + 1) << p;
        EXPECT_EQ(histogram_bucket(pow - 1), p >= 12 ? pow - (pow >> 11) : pow - 1) << p;
        for (const std::int64_t v : {pow - 1, pow, pow + 1, pow + pow / 3}) {
            if (v < 0) continue;
            const std::int64_t b = histogram_bucket(v);
            EXPECT_EQ(b, reference_bucket(v)) << v;
            EXPECT_LE(b, v);
            // 3 significant digits: the bucket is within 1/1024 of the value
            EXPECT_LE(static_cast<double>(v - b), static_cast<double>(v) / 1024.0) << v;
        }
    }
    EXPECT_EQ(histogram_bucket(std::numeric_limits<std::int64_t>::max()),
              reference_bucket(std::numeric_limits<std::int64_t>::max()));
}

TEST(Histogram, EveryValueOfARangeFallsInItsBucket) {
    for (std::int64_t v = 0; v < 300000; v += 7) EXPECT_EQ(histogram_bucket(v), reference_bucket(v)) << v;
}

TEST(Histogram, CountsByIncreasingBucket) {
    const auto counts = histogram_counts({1000999, 5, 2049, 2048, 2050, 2051, 1000960, 5, 0});
    const std::vector<std::pair<std::int64_t, std::uint64_t>> expected{
        {0, 1}, {5, 2}, {2048, 2}, {2050, 2}, {1000960, 2}};
    EXPECT_EQ(counts, expected);
    EXPECT_TRUE(histogram_counts({}).empty());
}

TEST(Upload, BodyIsTheAlphabetRepeated) {
    EXPECT_EQ(harness::upload_body(0), "");
    EXPECT_EQ(harness::upload_body(3), "abc");
    EXPECT_EQ(harness::upload_body(30), "abcdefghijklmnopqrstuvwxyzabcd");
    const std::string big = harness::upload_body(100000);
    EXPECT_EQ(big.size(), 100000u);
    EXPECT_EQ(big[99999], static_cast<char>('a' + 99999 % 26));
}

TEST(Upload, DigestLineIsLengthAndSha256) {
    EXPECT_EQ(harness::upload_digest_line("abc"), "3 ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(harness::upload_digest_line(""), "0 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    // FIPS 180-2's two-block example
    EXPECT_EQ(harness::upload_digest_line("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
              "56 248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Document, ClosedLoopSamples) {
    int rc = -1;
    const std::string doc = run_driver(scripted({ok(3)}), {"--workers", "2", "--requests", "4"}, &rc);
    EXPECT_EQ(rc, 0);
    const value v = parse(doc);
    ASSERT_TRUE(v.is_object());
    EXPECT_EQ(v.at("schema"), "clientbench.raw/4");
    EXPECT_NE(
        doc.find("\"workload\":{\"url\":\"http://127.0.0.1:9/\",\"workers\":2,\"requests\":4,\"duration_s\":null,"
                 "\"warmup\":0,\"timeout_s\":30.0,\"connection\":\"keep-alive\",\"loop\":\"closed\",\"rate\":null,"
                 "\"arrival\":null,\"seed\":null,\"method\":\"GET\",\"body_size\":0,\"record\":\"samples\","
                 "\"client_scope\":\"per-worker\",\"http\":\"1.1\",\"upload\":\"whole\",\"download\":\"whole\","
                 "\"chunk_size\":65536,\"targets\":null}"),
        std::string::npos)
        << doc;
    ASSERT_EQ(v.at("workers").as_array().size(), 2u);
    for (const value& w : v.at("workers").as_array()) {
        EXPECT_EQ(w.at("count"), 4);
        EXPECT_EQ(w.at("late"), 0);
        EXPECT_EQ(w.at("missed"), 0);
        EXPECT_EQ(w.at("failure_count"), 0);
        EXPECT_EQ(w.at("bytes"), 12);
        EXPECT_EQ(w.at("start_ns").as_array().size(), 4u);
        EXPECT_EQ(w.at("latencies_ns").as_array().size(), 4u);
        EXPECT_FALSE(w.as_object().contains("intended_ns"));
        EXPECT_FALSE(w.as_object().contains("histograms"));
    }
}

TEST(Document, HistogramsHoldTheSuccessfulRequests) {
    const Step fail = [] { return harness::Fetch{500, 0}; };
    const Step timeout = []() -> harness::Fetch { throw beast_client::TimeoutError("timed out"); };
    const std::string doc = run_driver(scripted({ok(), fail, ok(), timeout, ok()}),
                                       {"--workers", "1", "--requests", "10", "--record", "histogram"});
    const value v = parse(doc);
    EXPECT_NE(doc.find("\"record\":\"histogram\""), std::string::npos);
    const value& w = v.at("workers").at(0);
    EXPECT_EQ(w.at("count"), 10);
    EXPECT_EQ(w.at("failure_count"), 4);
    EXPECT_EQ(w.at("failures").as_array().size(), 4u);
    EXPECT_FALSE(w.as_object().contains("start_ns"));
    EXPECT_FALSE(w.as_object().contains("latencies_ns"));
    const value& service = w.at("histograms").at("service");
    EXPECT_EQ(service.at("significant_digits"), 3);
    std::int64_t total = 0;
    std::int64_t previous = -1;
    for (const value& bucket : service.at("counts").as_array()) {
        const std::int64_t at = bucket.at(0).to_number<std::int64_t>();
        EXPECT_GT(at, previous);  // increasing, each bucket once
        EXPECT_EQ(histogram_bucket(at), at);
        previous = at;
        total += bucket.at(1).to_number<std::int64_t>();
    }
    EXPECT_EQ(total, 6);
    EXPECT_FALSE(w.at("histograms").as_object().contains("corrected"));  // a closed loop has no intended times
}

TEST(Document, EveryFailureIsCountedTheFirst1000Listed) {
    const Step fail = [] { return harness::Fetch{503, 0}; };
    const value v = parse(run_driver(scripted({fail}), {"--workers", "1", "--requests", "1500"}));
    const value& w = v.at("workers").at(0);
    EXPECT_EQ(w.at("failure_count"), 1500);
    const auto& listed = w.at("failures").as_array();
    ASSERT_EQ(listed.size(), 1000u);
    EXPECT_EQ(listed[999].at("index"), 999);
    EXPECT_EQ(listed[0].at("reason"), "status 503");
    EXPECT_EQ(listed[0].at("status"), 503);
}

TEST(Document, UploadsSendTheBodyAndCheckTheDigestLine) {
    static const std::string line = harness::upload_digest_line(harness::upload_body(1000));
    const auto uploads = std::make_shared<harness_test::Uploads>();
    const Step right = [] { return harness_test::Reply{200, line.size(), line}; };
    const Step wrong = [] {
        static const std::string other = "1000 0000";
        return harness_test::Reply{200, other.size(), other};
    };
    const Step error_page = [] { return harness_test::Reply{413, 20, "the body is too long"}; };
    const auto make = [uploads, right, wrong, error_page](const harness::ClientOptions&) {
        return std::make_unique<harness_test::ScriptedClient>(std::vector<Step>{right, wrong, error_page}, uploads);
    };
    const std::string doc = run_driver(
        make, {"--workers", "1", "--requests", "3", "--warmup", "2", "--method", "PUT", "--body-size", "1000"});
    const value v = parse(doc);
    EXPECT_NE(doc.find("\"method\":\"PUT\",\"body_size\":1000,"), std::string::npos) << doc;
    ASSERT_EQ(uploads->methods.size(), 5u);  // the warm-up uploads too
    for (std::size_t i = 0; i < 5; ++i) {
        EXPECT_EQ(uploads->methods[i], "PUT");
        EXPECT_EQ(uploads->bodies[i], harness::upload_body(1000));
    }
    // the warm-up took the script's first two answers; the timed requests get error_page, right, wrong
    const value& w = v.at("workers").at(0);
    EXPECT_EQ(w.at("failure_count"), 2);
    const auto& failures = w.at("failures").as_array();
    ASSERT_EQ(failures.size(), 2u);
    EXPECT_EQ(failures[0].at("index"), 0);
    EXPECT_EQ(failures[0].at("reason"), "status 413");
    EXPECT_EQ(failures[1].at("index"), 2);
    EXPECT_EQ(harness_test::text(failures[1].at("reason")), "Error: upload digest mismatch: expected '" + line +
                                                                "' (or the 1000 bytes sent, echoed), got '1000 0000'");
}

TEST(Document, AnUploadLongerThanTheLineIsAMismatch) {
    static const std::string line = harness::upload_digest_line("");
    const Step longer = [] { return harness_test::Reply{200, line.size() + 5000, line}; };  // then 5000 dots
    const value v = parse(run_driver(scripted({longer}), {"--workers", "1", "--requests", "1", "--method", "POST"}));
    const value& failure = v.at("workers").at(0).at("failures").at(0);
    EXPECT_EQ(harness_test::text(failure.at("reason")), "Error: upload digest mismatch: expected '" + line +
                                                            "' (or the 0 bytes sent, echoed), got '" + line +
                                                            std::string(100 - line.size(), '.') + "... (5066 bytes)'");
    EXPECT_EQ(v.at("workers").at(0).at("bytes"), 5066);
}
