// CookieJar: the cases reqwest's cookie store is tested with too (rust-reqwest/src/cookies.rs), with host names
// the tests cannot resolve (no request is sent), and the Expires date algorithm.
#include "beast_client/cookies.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <initializer_list>
#include <string>
#include <vector>

using beast_client::CookieJar;
using beast_client::parse_cookie_date;
using beast_client::parse_url;

namespace {

void set(CookieJar& jar, const std::string& from, std::initializer_list<const char*> fields) {
    beast_client::Headers h;
    for (const char* f : fields) h.emplace_back("Set-Cookie", f);
    h.emplace_back("X-Other", "a=1");
    jar.store(parse_url(from), h);
}

// the name=value pairs a request to `url` sends, sorted
std::vector<std::string> sent(const CookieJar& jar, const std::string& url) {
    const std::string header = jar.header_for(parse_url(url));
    std::vector<std::string> out;
    for (std::size_t start = 0; !header.empty() && start <= header.size();) {
        const auto end = header.find("; ", start);
        out.push_back(header.substr(start, end - start));
        if (end == std::string::npos) break;
        start = end + 2;
    }
    std::sort(out.begin(), out.end());
    return out;
}

using V = std::vector<std::string>;

}  // namespace

TEST(CookieJar, DomainMatchingAndHostOnly) {
    CookieJar jar;
    set(jar, "http://www.example.test/", {"host=1", "dom=2; Domain=example.test", "dot=3; Domain=.EXAMPLE.test"});
    EXPECT_EQ(sent(jar, "http://www.example.test/"), (V{"dom=2", "dot=3", "host=1"}));
    // host-only: not sent to the parent domain or a sibling; domain cookies are
    EXPECT_EQ(sent(jar, "http://example.test/"), (V{"dom=2", "dot=3"}));
    EXPECT_EQ(sent(jar, "http://a.b.example.test/"), (V{"dom=2", "dot=3"}));
    EXPECT_EQ(sent(jar, "http://badexample.test/"), V{});
    EXPECT_EQ(sent(jar, "http://example.other/"), V{});
    // a Domain the host does not domain-match is ignored
    set(jar, "http://www.example.test/", {"foreign=1; Domain=other.test", "sub=1; Domain=deeper.www.example.test"});
    EXPECT_EQ(sent(jar, "http://other.test/"), V{});
    const V deeper = sent(jar, "http://deeper.www.example.test/");
    EXPECT_EQ(std::count(deeper.begin(), deeper.end(), "sub=1"), 0);
    // IP addresses: host-only, and a Domain attribute other than the address itself is ignored
    set(jar, "http://127.0.0.1/", {"ip=1", "ipdom=1; Domain=0.0.1"});
    EXPECT_EQ(sent(jar, "http://127.0.0.1:8080/"), V{"ip=1"});
    EXPECT_EQ(sent(jar, "http://localhost/"), V{});
}

TEST(CookieJar, PathMatchingAndDefaultPath) {
    CookieJar jar;
    set(jar, "http://h.test/dir/page", {"def=1", "root=1; Path=/", "acc=1; Path=/acc", "rel=1; Path=rel"});
    EXPECT_EQ(sent(jar, "http://h.test/dir/page"), (V{"def=1", "rel=1", "root=1"}));
    EXPECT_EQ(sent(jar, "http://h.test/dir"), (V{"def=1", "rel=1", "root=1"}));
    EXPECT_EQ(sent(jar, "http://h.test/dir/x/y?q=1"), (V{"def=1", "rel=1", "root=1"}));
    EXPECT_EQ(sent(jar, "http://h.test/directory"), V{"root=1"});
    EXPECT_EQ(sent(jar, "http://h.test/acc/x"), (V{"acc=1", "root=1"}));
    EXPECT_EQ(sent(jar, "http://h.test/accounts"), V{"root=1"});
    EXPECT_EQ(sent(jar, "http://h.test/"), V{"root=1"});
    // longer paths first in the header
    EXPECT_EQ(jar.header_for(parse_url("http://h.test/acc/x")), "acc=1; root=1");
}

TEST(CookieJar, SecureCookiesOnlyOverHttps) {
    CookieJar jar;
    set(jar, "https://h.test/", {"s=1; Secure", "p=1"});
    EXPECT_EQ(sent(jar, "https://h.test/"), (V{"p=1", "s=1"}));
    EXPECT_EQ(sent(jar, "http://h.test/"), V{"p=1"});
    EXPECT_EQ(sent(jar, "http://localhost/"), V{});
    // a Secure cookie that arrives over http is ignored, on loopback too
    set(jar, "http://127.0.0.1/", {"s2=1; Secure"});
    EXPECT_EQ(sent(jar, "https://127.0.0.1/"), V{});
}

TEST(CookieJar, ExpiryReplacementAndDeletion) {
    CookieJar jar;
    const std::string from = "http://h.test/";
    set(jar, from, {"a=1", "b=1; Max-Age=3600", "c=1; Expires=Wed, 01 Jan 2200 00:00:00 GMT", "d=1"});
    EXPECT_EQ(sent(jar, from), (V{"a=1", "b=1", "c=1", "d=1"}));
    set(jar, from, {"a=2"});  // replaced (same name, domain, path)
    set(jar, from, {"b=x; Max-Age=0", "c=x; Expires=Thu, 01 Jan 1970 00:00:00 GMT", "d=x; Max-Age=-1"});
    EXPECT_EQ(sent(jar, from), V{"a=2"});
    // Max-Age wins over Expires
    set(jar, from, {"e=1; Max-Age=3600; Expires=Thu, 01 Jan 1970 00:00:00 GMT"});
    set(jar, from, {"f=1; Max-Age=0; Expires=Wed, 01 Jan 2200 00:00:00 GMT"});
    EXPECT_EQ(sent(jar, from), (V{"a=2", "e=1"}));
    // another path is another cookie
    set(jar, from, {"a=3; Path=/p"});
    EXPECT_EQ(sent(jar, "http://h.test/p"), (V{"a=2", "a=3", "e=1"}));
    // unparsable fields are ignored
    set(jar, from, {"", "=novalue", "noequals"});
    EXPECT_EQ(sent(jar, from), (V{"a=2", "e=1"}));
}

TEST(CookieJar, MaxAgeCountsFromWhenTheCookieArrived) {
    CookieJar jar;
    const auto url = parse_url("http://h.test/");
    const auto t0 = std::chrono::system_clock::now();
    jar.store_one(url, "a=1; Max-Age=10", t0);
    jar.store_one(url, "b=1; Max-Age=99999999999999999999999", t0);  // saturates: for ever
    EXPECT_EQ(jar.header_for(url, t0 + std::chrono::seconds(9)), "a=1; b=1");
    EXPECT_EQ(jar.header_for(url, t0 + std::chrono::seconds(10)), "b=1");
    EXPECT_EQ(jar.size(t0 + std::chrono::seconds(10)), 1u);
    jar.store_one(url, "c=1; Max-Age=1x", t0);  // not a number: ignored, a session cookie
    EXPECT_EQ(jar.header_for(url, t0 + std::chrono::hours(24 * 365)), "b=1; c=1");
    jar.clear();
    EXPECT_EQ(jar.header_for(url), "");
}

TEST(CookieJar, ExpiresDates) {
    const std::int64_t when = 784111777;                                   // Sun, 06 Nov 1994 08:49:37 GMT
    EXPECT_EQ(parse_cookie_date("Sun, 06 Nov 1994 08:49:37 GMT"), when);   // RFC 1123
    EXPECT_EQ(parse_cookie_date("Sunday, 06-Nov-94 08:49:37 GMT"), when);  // RFC 850
    EXPECT_EQ(parse_cookie_date("Sun Nov  6 08:49:37 1994"), when);        // asctime
    EXPECT_EQ(parse_cookie_date("sun, 6-nov-1994 8:49:37 gmt"), when);     // lenient
    EXPECT_EQ(parse_cookie_date("Thu, 01 Jan 1970 00:00:00 GMT"), 0);
    EXPECT_EQ(parse_cookie_date("Wed, 01 Jan 2200 00:00:00 GMT"), 7258118400);
    EXPECT_EQ(parse_cookie_date("Tue, 29 Feb 2000 12:00:00 GMT"), 951825600);  // a leap day
    for (const char* bad :
         {"", "yesterday", "Sun, 06 Nov 1994", "Sun, 32 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
          "Sun, 06 Nov 1994 24:00:00 GMT", "Mon, 29 Feb 1999 00:00:00 GMT", "Sun, 06 Nov 1600 08:49:37 GMT"})
        EXPECT_FALSE(parse_cookie_date(bad).has_value()) << bad;
}
