// The targets file (targets.hpp).
#include "targets.hpp"

#include "options.hpp"  // UsageError, check_url, kMaxBodySize

#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

std::string read_file(const std::string& path, const char* what) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(std::string("cannot read ") + what + path + " (" + std::strerror(errno) + ")");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size > static_cast<std::streamoff>(harness::kMaxBodySize))
        throw std::runtime_error(std::string(what) + path + " is above 1 GiB");
    std::ostringstream text;
    in.seekg(0);
    text << in.rdbuf();
    if (in.bad()) throw std::runtime_error(std::string("cannot read ") + what + path);
    return text.str();
}

}  // namespace

std::vector<harness::Target> harness::parse_targets(const std::string& file, const std::string& text,
                                                    const ReadBody& read) {
    std::map<std::string, std::shared_ptr<const std::string>> bodies;
    std::vector<Target> targets;
    std::istringstream lines(text);
    std::string line;
    for (long n = 1; std::getline(lines, line); ++n) {
        const auto fail = [&](const std::string& why) {
            return UsageError{"--targets " + file + ", line " + std::to_string(n) + ": " + why};
        };
        std::istringstream words(line);
        std::vector<std::string> fields;
        for (std::string w; words >> w;) fields.push_back(w);
        if (fields.empty() || fields[0][0] == '#') continue;
        const std::string& method = fields[0];
        if (method != "GET" && method != "POST" && method != "PUT")
            throw fail("the method '" + method + "' is not GET, POST or PUT");
        if (fields.size() < 2 || fields.size() > 3)
            throw fail("a target is METHOD URL [@BODYFILE] (no spaces in either)");
        try {
            check_url(fields[1]);
        } catch (const UsageError& e) {
            throw fail("the URL: " + e.message.substr(e.message.find(' ') + 1));
        }
        Target t{method, fields[1], nullptr};
        if (fields.size() == 3) {
            if (method == "GET") throw fail("a GET sends no body");
            const std::string& b = fields[2];
            if (b.size() < 2 || b[0] != '@' || b[1] != '/')
                throw fail("the body file must be an absolute path, got '" + b + "'");
            const std::string path = b.substr(1);
            auto& body = bodies[path];
            if (!body) {
                try {
                    body = std::make_shared<const std::string>(read(path));
                } catch (const std::exception& e) {
                    bodies.erase(path);
                    throw fail(e.what());
                }
            }
            t.body = body;
        }
        targets.push_back(std::move(t));
    }
    if (targets.empty())
        throw UsageError{"--targets " + file + ": no targets in it (one `METHOD URL [@BODYFILE]` per line)"};
    return targets;
}

std::vector<harness::Target> harness::read_targets(const std::string& file) {
    std::string text;
    try {
        if (!std::ifstream(file)) throw std::runtime_error(std::strerror(errno));
        text = read_file(file, "");
    } catch (const std::exception& e) {
        throw UsageError{"--targets " + file + ": cannot read it (" + e.what() + ")"};
    }
    return parse_targets(file, text, [](const std::string& path) { return read_file(path, "the body file "); });
}
