#include "beast_client/client.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

using beast_client::InvalidUrl;
using beast_client::parse_url;

TEST(ParseUrl, HostPortAndTarget) {
    const auto u = parse_url("http://127.0.0.1:8080/path/x?q=1&r=2");
    EXPECT_EQ(u.host, "127.0.0.1");
    EXPECT_EQ(u.port, 8080);
    EXPECT_EQ(u.target, "/path/x?q=1&r=2");
}

TEST(ParseUrl, DefaultsPortAndPath) {
    const auto u = parse_url("http://example.com");
    EXPECT_EQ(u.host, "example.com");
    EXPECT_EQ(u.port, 80);
    EXPECT_EQ(u.target, "/");
}

TEST(ParseUrl, QueryWithoutPathAndFragment) {
    EXPECT_EQ(parse_url("http://h?x=1").target, "/?x=1");
    EXPECT_EQ(parse_url("http://h/a#frag").target, "/a");
    EXPECT_EQ(parse_url("http://h#frag").target, "/");
}

TEST(ParseUrl, SchemeAndHostAreCaseInsensitive) {
    const auto u = parse_url("HTTP://LocalHost:65535/A");
    EXPECT_EQ(u.host, "localhost");
    EXPECT_EQ(u.port, 65535);
    EXPECT_EQ(u.target, "/A");  // the path keeps its case
}

TEST(ParseUrl, Ipv6Literal) {
    const auto u = parse_url("http://[::1]:9000/x");
    EXPECT_EQ(u.host, "::1");
    EXPECT_EQ(u.port, 9000);
    EXPECT_EQ(u.target, "/x");
    EXPECT_EQ(parse_url("http://[::1]").port, 80);
}

TEST(ParseUrl, Https) {
    const auto u = parse_url("HTTPS://Example.com/a?b");
    EXPECT_TRUE(u.https);
    EXPECT_EQ(u.host, "example.com");
    EXPECT_EQ(u.port, 443);
    EXPECT_EQ(u.target, "/a?b");
    EXPECT_EQ(parse_url("https://127.0.0.1:8443").port, 8443);
    EXPECT_EQ(parse_url("https://[::1]").port, 443);
    EXPECT_FALSE(parse_url("http://h/").https);
}

TEST(ParseUrl, RejectsOtherSchemes) {
    for (const char* url : {"ftp://h/", "ws://h/", "httpss://h/", "file:///etc/passwd"}) {
        try {
            parse_url(url);
            FAIL() << url << " accepted";
        } catch (const InvalidUrl& e) {
            EXPECT_NE(std::string(e.what()).find("(http:// or https://)"), std::string::npos) << e.what();
        }
    }
}

TEST(ParseUrl, RejectsEmpty) { EXPECT_THROW(parse_url(""), InvalidUrl); }

TEST(ParseUrl, RejectsBadPorts) {
    for (const char* url : {"http://h:0/", "http://h:65536/", "http://h:99999999/", "http://h:abc/", "http://h:/",
                            "http://h:-1/", "http://h:1.5/", "http://[::1]x/"}) {
        EXPECT_THROW(parse_url(url), InvalidUrl) << url;
    }
}

TEST(ParseUrl, RejectsMissingHost) {
    for (const char* url : {"http://", "http:///path", "http://:8080/", "http://[]:80/", "http://?q"}) {
        EXPECT_THROW(parse_url(url), InvalidUrl) << url;
    }
}

TEST(ParseUrl, RejectsOtherMalformedUrls) {
    for (const char* url : {"127.0.0.1:8080/", "ftp://h/", "://h/", "http:/h/", "http://user@h/", "http://h /",
                            "http://h/\r\nX: y", "http://h\x01/", "http://[::1/", "http://[zz]/", "http://h^/"}) {
        EXPECT_THROW(parse_url(url), InvalidUrl) << url;
    }
}

TEST(ParseUrl, MessageNamesTheUrl) {
    try {
        parse_url("ftp://files/");
        FAIL();
    } catch (const InvalidUrl& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find("ftp://files/"), std::string::npos) << what;
        EXPECT_STREQ(e.type_name(), "InvalidUrl");
    }
}

TEST(LibraryVersion, LooksLikeBoostVersion) {
    const std::string v = beast_client::library_version();
    EXPECT_EQ(v.rfind("1.", 0), 0u) << v;
    EXPECT_EQ(std::count(v.begin(), v.end(), '.'), 2) << v;
}

TEST(ClientConstruction, RejectsNonPositiveTimeout) {
    EXPECT_THROW(beast_client::Client(std::chrono::nanoseconds(0)), std::invalid_argument);
    EXPECT_THROW(beast_client::Client(std::chrono::seconds(-1)), std::invalid_argument);
    EXPECT_THROW(beast_client::Client(std::chrono::seconds(1), std::chrono::nanoseconds(0)), std::invalid_argument);
}

TEST(ClientConstruction, GetRejectsInvalidUrlWithoutNetwork) {
    beast_client::Client c(std::chrono::milliseconds(300));
    EXPECT_THROW(c.get("ftp://127.0.0.1/"), InvalidUrl);
    EXPECT_THROW(c.get(""), InvalidUrl);
    EXPECT_THROW(c.request("GET", "http://h:0/"), InvalidUrl);
    EXPECT_EQ(c.connections_opened(), 0u);
}
