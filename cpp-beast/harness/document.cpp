// The clientbench.raw/4 JSON document (docs/raw-format.md, "The document"), written by hand: a closed loop of
// 10 x 100 requests or an open loop of a million must not wait on a JSON library's tree.
#include "histogram.hpp"
#include "run.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

void harness::append_json_string(std::string& out, std::string_view s) {
    static const char* hex = "0123456789abcdef";
    out += '"';
    std::size_t i = 0;
    while (i < s.size()) {
        const auto c = static_cast<unsigned char>(s[i]);
        if (c < 0x80) {
            switch (c) {
                case '"': out += "\\\""; break;
                case '\\': out += "\\\\"; break;
                case '\n': out += "\\n"; break;
                case '\r': out += "\\r"; break;
                case '\t': out += "\\t"; break;
                case '\b': out += "\\b"; break;
                case '\f': out += "\\f"; break;
                default:
                    if (c < 0x20) {
                        out += "\\u00";
                        out += hex[c >> 4];
                        out += hex[c & 0xf];
                    } else {
                        out += static_cast<char>(c);
                    }
            }
            ++i;
            continue;
        }
        // multi-byte sequence: validate (no overlongs, no surrogates, <= U+10FFFF)
        std::size_t len = 0;
        std::uint32_t cp = 0;
        if (c >= 0xc2 && c <= 0xdf) {
            len = 2;
            cp = c & 0x1f;
        } else if (c >= 0xe0 && c <= 0xef) {
            len = 3;
            cp = c & 0x0f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            len = 4;
            cp = c & 0x07;
        }
        bool ok = len != 0 && i + len <= s.size();
        for (std::size_t k = 1; ok && k < len; ++k) {
            const auto cc = static_cast<unsigned char>(s[i + k]);
            if ((cc & 0xc0) != 0x80) ok = false;
            cp = (cp << 6) | (cc & 0x3f);
        }
        if (ok) {
            if ((len == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
                (len == 4 && (cp < 0x10000 || cp > 0x10ffff)))
                ok = false;
        }
        if (ok) {
            out.append(s.data() + i, len);
            i += len;
        } else {
            out += "\\ufffd";
            ++i;
        }
    }
    out += '"';
}

namespace {

using harness::Worker;

void json_string(std::string& out, std::string_view s) { harness::append_json_string(out, s); }

void json_double(std::string& out, double v) {
    char buf[64];
    const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    std::string text(buf, ec == std::errc() ? ptr : buf);
    if (text.find_first_of(".eE") == std::string::npos) text += ".0";
    out += text;
}

void json_int(std::string& out, std::int64_t v) {
    char buf[24];
    const auto [ptr, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out.append(buf, ec == std::errc() ? ptr : buf);
}

// Peak resident set of this process image (VmHWM: reset at exec, unlike getrusage's ru_maxrss, which also
// counts the forked parent's pages before exec); -1 when unknown.
long peak_rss_kib() {
    std::FILE* f = std::fopen("/proc/self/status", "r");
    if (!f) return -1;
    char line[256];
    long kib = -1;
    while (std::fgets(line, sizeof line, f))
        if (std::strncmp(line, "VmHWM:", 6) == 0) {
            kib = std::strtol(line + 6, nullptr, 10);
            break;
        }
    std::fclose(f);
    return kib;
}

// `"key":[v - base, ...]` (negative values, which a monotonic clock does not produce, as 0)
void json_array(std::string& out, const char* key, const std::vector<std::int64_t>& values, std::int64_t base) {
    out += ",\"";
    out += key;
    out += "\":[";
    for (std::size_t j = 0; j < values.size(); ++j) {
        if (j) out += ',';
        json_int(out, std::max<std::int64_t>(0, values[j] - base));
    }
    out += ']';
}

void json_histogram(std::string& out, const std::vector<std::int64_t>& values) {
    out += "{\"significant_digits\":3,\"counts\":[";
    bool first = true;
    for (const auto& [value, count] : harness::histogram_counts(values)) {
        if (!first) out += ',';
        first = false;
        out += '[';
        json_int(out, value);
        out += ',';
        json_int(out, static_cast<std::int64_t>(count));
        out += ']';
    }
    out += "]}";
}

// The service and (open loop) corrected latencies of the worker's successful requests, as histograms.
void json_histograms(std::string& out, const Worker& w, bool open) {
    std::vector<std::int64_t> service;
    std::vector<std::int64_t> corrected;
    service.reserve(w.latencies.size());
    if (open) corrected.reserve(w.latencies.size());
    std::size_t next_failed = 0;  // w.failed is in increasing order
    for (std::size_t k = 0; k < w.latencies.size(); ++k) {
        if (next_failed < w.failed.size() && w.failed[next_failed] == static_cast<long>(k)) {
            ++next_failed;
            continue;
        }
        service.push_back(w.latencies[k]);
        if (open) corrected.push_back(w.starts[k] + w.latencies[k] - w.intended[k]);
    }
    out += ",\"histograms\":{\"service\":";
    json_histogram(out, service);
    if (open) {
        out += ",\"corrected\":";
        json_histogram(out, corrected);
    }
    out += '}';
}

// --phases: the keys of client.phases (the driver's, in the contract's order, "dns" first when a request resolved a
// host name), as indexes of harness::kPhaseKeys.
std::vector<std::size_t> phase_columns(const harness::Driver& d, const harness::Options& o,
                                       const std::vector<Worker>& workers) {
    std::vector<std::size_t> columns;
    if (!o.phases || d.phases.empty()) return columns;
    const bool resolved =
        std::any_of(workers.begin(), workers.end(), [](const Worker& w) { return w.phases.resolved; });
    for (std::size_t i = 0; i < harness::kPhaseCount; ++i) {
        const std::string_view key = harness::kPhaseKeys[i].key;
        if ((key == "dns" && resolved) || std::find(d.phases.begin(), d.phases.end(), key) != d.phases.end())
            columns.push_back(i);
    }
    return columns;
}

// workers[i].phases: {"count": n, "latency_ns": L, "sum_ns": {key: sum, ...}}
void json_phases(std::string& out, const harness::PhaseSums& p, const std::vector<std::size_t>& columns) {
    out += ",\"phases\":{\"count\":";
    json_int(out, p.count);
    out += ",\"latency_ns\":";
    json_int(out, p.latency_ns);
    out += ",\"sum_ns\":{";
    for (std::size_t j = 0; j < columns.size(); ++j) {
        if (j) out += ',';
        json_string(out, harness::kPhaseKeys[columns[j]].key);
        out += ':';
        json_int(out, std::max<std::int64_t>(0, p.sum_ns[columns[j]]));
    }
    out += "}}";
}

void json_worker(std::string& out, const harness::Options& o, const Worker& w, std::int64_t t0,
                 const std::vector<std::size_t>& phase_keys) {
    out += "{\"elapsed_ns\":";
    json_int(out, std::max<std::int64_t>(0, w.loop_end - w.loop_start));
    out += ",\"count\":";
    json_int(out, static_cast<std::int64_t>(w.latencies.size()));
    out += ",\"late\":";
    json_int(out, w.late);
    out += ",\"missed\":";
    json_int(out, w.missed);
    if (o.histogram) {
        json_histograms(out, w, o.open());
    } else {
        json_array(out, "start_ns", w.starts, t0);
        json_array(out, "latencies_ns", w.latencies, 0);
        if (o.open()) json_array(out, "intended_ns", w.intended, t0);
    }
    out += ",\"bytes\":" + std::to_string(w.bytes);
    out += ",\"failure_count\":";
    json_int(out, static_cast<std::int64_t>(w.failed.size()));
    out += ",\"failures\":[";
    for (std::size_t j = 0; j < w.failures.size(); ++j) {
        const harness::Failure& f = w.failures[j];
        if (j) out += ',';
        out += "{\"index\":" + std::to_string(f.index) + ",\"reason\":";
        json_string(out, f.reason);
        out += ",\"status\":" + (f.status ? std::to_string(*f.status) : std::string("null")) + "}";
    }
    out += ']';
    if (!phase_keys.empty()) json_phases(out, w.phases, phase_keys);
    out += '}';
}

void json_workload(std::string& out, const harness::Options& o) {
    out += "\"workload\":{\"url\":";
    json_string(out, o.url);
    out += ",\"workers\":" + std::to_string(o.workers);
    out += ",\"requests\":" + (o.duration_s ? std::string("null") : std::to_string(o.requests));
    out += ",\"duration_s\":";
    if (o.duration_s)
        json_double(out, *o.duration_s);
    else
        out += "null";
    out += ",\"warmup\":" + std::to_string(o.warmup) + ",\"timeout_s\":";
    json_double(out, o.timeout);
    out += std::string(",\"connection\":\"") + (o.new_connection ? "new" : "keep-alive") + "\"";
    if (o.open()) {
        out += ",\"loop\":\"open\",\"rate\":";
        json_double(out, *o.rate);
        // the seed is the schedule's only with poisson arrivals: null for uniform ones, which draw nothing
        const bool poisson = o.arrival == harness::Arrival::poisson;
        out += std::string(",\"arrival\":\"") + (poisson ? "poisson" : "uniform") +
               "\",\"seed\":" + (poisson ? std::to_string(o.seed) : std::string("null"));
    } else {
        out += ",\"loop\":\"closed\",\"rate\":null,\"arrival\":null,\"seed\":null";
    }
    out += ",\"method\":";
    json_string(out, o.method);
    out += ",\"body_size\":" + std::to_string(o.body_size);
    out += std::string(",\"record\":\"") + (o.histogram ? "histogram" : "samples") + "\"";
    out += std::string(",\"client_scope\":\"") + (o.shared ? "shared" : "per-worker") + "\"";
    out += std::string(",\"http\":\"") + (o.http2 ? "2" : "1.1") + "\"";
    out += std::string(",\"upload\":\"") + (o.upload_stream ? "stream" : "whole") + "\"";
    out += std::string(",\"download\":\"") + (o.download_stream ? "stream" : "whole") + "\"";
    out += ",\"chunk_size\":" + std::to_string(o.chunk_size) + ",\"targets\":";
    if (o.targets.empty())
        out += "null";
    else
        json_string(out, o.targets);  // the file as given
    out += '}';
}

}  // namespace

std::string harness::document(const Driver& d, const Options& o, const std::vector<Worker>& workers,
                              const GroupTimes& times) {
    std::size_t requests = 0;
    for (const auto& w : workers) requests += w.latencies.size();
    std::string out;
    out.reserve(512 + (o.histogram ? 0 : requests * (o.open() ? 36 : 24)));
    out += "{\"schema\":\"clientbench.raw/4\",\"client\":{\"language\":";
    json_string(out, d.language);
    out += ",\"library\":";
    json_string(out, d.library);
    out += ",\"library_version\":";
    json_string(out, d.library_version);
    out += ",\"mode\":\"sync\",\"gil\":null,\"notes\":";
    json_string(out, d.notes);
    if (!workers.empty() && workers[0].protocol) {
        out += ",\"protocol\":";
        json_string(out, *workers[0].protocol);
    }
    out += ",\"tls\":";
    if (!workers.empty() && workers[0].tls) {  // worker 0's connection
        out += "{\"version\":";
        json_string(out, workers[0].tls->version);
        out += ",\"cipher\":";
        json_string(out, workers[0].tls->cipher);
        out += "}";
    } else {
        out += "null";
    }
    const std::vector<std::size_t> phase_keys = phase_columns(d, o, workers);
    if (!phase_keys.empty()) {
        out += ",\"phases\":[";
        for (std::size_t j = 0; j < phase_keys.size(); ++j) {
            if (j) out += ',';
            json_string(out, harness::kPhaseKeys[phase_keys[j]].key);
        }
        out += ']';
    }
    out += "},";
    json_workload(out, o);
    out += ",\"wall_ns\":" + std::to_string(times.wall) +
           ",\"cpu_ns\":" + std::to_string(std::max<std::int64_t>(0, times.cpu));
    if (const long rss = peak_rss_kib(); rss >= 0) out += ",\"peak_rss_kib\":" + std::to_string(rss);
    out += ",\"workers\":[";
    for (std::size_t k = 0; k < workers.size(); ++k) {
        if (k) out += ',';
        json_worker(out, o, workers[k], times.t0, phase_keys);
    }
    out += "]}\n";
    return out;
}
