// What the drivers' end-to-end tests share (test_drivers*.cpp): running a driver program as the runner does,
// the body pattern and its /upload line computed here (not with the harness's functions under test), and the
// in-test servers' handlers, which read Content-Length and chunked request bodies.
#pragma once

#include "harness_support.hpp"

#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cctype>
#include <cstdio>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace driver_test {

using harness_test::parse;
using harness_test::text;
using harness_test::json::value;

inline const std::vector<std::string> kDrivers{BEAST_DRIVER, FLOOR_DRIVER};

struct Ran {
    int status = -1;
    std::string out;
    std::string err;
};

inline std::string quoted(const std::string& arg) {
    std::string out = "'";
    for (const char c : arg) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// Runs `program args...`: its exit status, stdout and stderr.
inline Ran run(const std::string& program, const std::vector<std::string>& args) {
    char err_path[] = "/tmp/driver-test-stderr-XXXXXX";
    const int fd = ::mkstemp(err_path);
    if (fd >= 0) ::close(fd);
    std::string command = quoted(program);
    for (const auto& a : args) command += " " + quoted(a);
    command += " 2>" + quoted(err_path);
    Ran r;
    if (std::FILE* p = ::popen(command.c_str(), "r")) {
        char buf[65536];
        std::size_t n = 0;
        while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) r.out.append(buf, n);
        const int status = ::pclose(p);
        r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    }
    std::ifstream f(err_path);
    std::stringstream ss;
    ss << f.rdbuf();
    r.err = ss.str();
    std::remove(err_path);
    return r;
}

// "<length> <sha256 hex>" of `body`, computed here (not with the harness's function under test).
inline std::string sha256_line(const std::string& body) {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int n = 0;
    EVP_Digest(body.data(), body.size(), md, &n, EVP_sha256(), nullptr);
    char hex[3];
    std::string line = std::to_string(body.size()) + " ";
    for (unsigned int i = 0; i < n; ++i) {
        std::snprintf(hex, sizeof hex, "%02x", md[i]);
        line += hex;
    }
    return line;
}

inline std::string pattern(std::size_t size) {
    std::string s(size, 'a');
    for (std::size_t i = 0; i < size; ++i) s[i] = static_cast<char>('a' + i % 26);
    return s;
}

inline std::string ok_response(const std::string& body) {
    return "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

// The body of `request` (read by Conn::read_request: its head and a Content-Length body); a chunked one is read
// from the connection, its chunks' sizes in `sizes`. False when the connection ends first. (The drivers send
// the next request only after the response: nothing is read past the body.)
template <class Conn>
bool read_body(Conn& c, const std::string& request, std::string& body, std::vector<std::size_t>* sizes = nullptr) {
    const std::size_t head_end = request.find("\r\n\r\n");
    std::string head;
    for (std::size_t i = 0; i < head_end; ++i) head += static_cast<char>(std::tolower(request[i]));
    body = request.substr(head_end + 4);
    if (head.find("\r\ntransfer-encoding: chunked") == std::string::npos) return true;
    std::string in;
    for (;;) {
        std::size_t eol = 0;
        while ((eol = in.find("\r\n")) == std::string::npos)
            if (!c.read_some(in)) return false;
        const std::size_t size = std::stoul(in.substr(0, eol), nullptr, 16);
        while (in.size() < eol + 2 + size + 2)
            if (!c.read_some(in)) return false;
        if (size == 0) return true;  // no trailer: "0\r\n\r\n"
        body += in.substr(eol + 2, size);
        if (sizes) sizes->push_back(size);
        in.erase(0, eol + 2 + size + 2);
    }
}

// /upload: answers each request with the line of its body, Content-Length or chunked (or with `line` when given).
template <class Conn>
std::function<void(Conn&)> upload_handler(std::string line = "") {
    return [line](Conn& c) {
        std::string request;
        std::string body;
        while (c.read_request(&request) && read_body(c, request, body))
            c.write(ok_response(line.empty() ? sha256_line(body) : line));
    };
}

// The workers' entries of a document; a test fails on a document that is not one.
inline std::vector<value> workers_of(const Ran& r) {
    EXPECT_EQ(r.status, 0) << r.err;
    const value doc = parse(r.out);
    if (!doc.is_object()) return {};
    EXPECT_EQ(text(doc.at("schema")), "clientbench.raw/4");
    const auto& array = doc.at("workers").as_array();
    return std::vector<value>(array.begin(), array.end());
}

}  // namespace driver_test
