// Conversions between Python objects and the C++ client's types: timeouts, verify=, headers, params, request
// bodies, and the Latin-1 text of response headers. Each raises TypeError / ValueError naming the argument.
#pragma once

#include <pybind11/pybind11.h>  // first: it includes Python.h

#include "beast_client/client.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace beast_py {

namespace py = pybind11;
namespace bc = beast_client;

std::chrono::nanoseconds to_timeout(double seconds, const char* what = "timeout");

// None, or a positive finite number (int or float; not bool, not str)
std::optional<double> to_seconds(const py::object& value, const char* what);

// None, or an int >= 0 (not bool; a value beyond 64 bits is no limit)
std::optional<std::uint64_t> to_size(const py::object& value, const char* what);

std::optional<std::chrono::nanoseconds> to_duration(std::optional<double> seconds, const char* what);

// `verify=` as in requests: True (the system's trust store), False (no verification), or the path of a CA
// bundle (str or os.PathLike; bytes paths work too). Anything else is a TypeError; an empty path a ValueError.
bc::TlsConfig to_tls_config(const py::object& verify);

// str -> UTF-8; a str that cannot be encoded (a lone surrogate) raises UnicodeEncodeError (a ValueError)
std::string utf8(const py::handle& text);

// A str of the request (header name or value, parameter); anything else is a TypeError naming `what`.
std::string text_of(const py::handle& value, const char* what);

// The (name, value) pairs of a Mapping (its items()) or of a sequence of 2-tuples / 2-lists.
template <class Each>
void for_each_pair(const py::object& obj, const char* what, Each&& each) {
    const bool mapping = py::hasattr(obj, "items") && !py::isinstance<py::str>(obj);
    if (!mapping && (py::isinstance<py::str>(obj) || py::isinstance<py::bytes>(obj) || !py::hasattr(obj, "__iter__")))
        throw py::type_error(std::string(what) + " must be a mapping or a sequence of (name, value) pairs, not " +
                             Py_TYPE(obj.ptr())->tp_name);
    const py::object items = mapping ? obj.attr("items")() : obj;
    for (const auto& item : items) {
        if (!py::isinstance<py::tuple>(item) && !py::isinstance<py::list>(item))
            throw py::type_error(std::string(what) + ": each item must be a (name, value) pair, not " +
                                 Py_TYPE(item.ptr())->tp_name);
        const auto pair = py::reinterpret_borrow<py::sequence>(item);
        if (pair.size() != 2) throw py::type_error(std::string(what) + ": each item must be a (name, value) pair");
        each(py::object(pair[0]), py::object(pair[1]));
    }
}

bc::Headers to_headers(const py::object& headers);

// The client's default headers, then the request's: a request header replaces the defaults of its name.
bc::Headers merge_headers(const bc::Headers& defaults, bc::Headers request);

// params: str values as they are, int / float through str(); None skipped; a list / tuple repeats the name.
std::vector<std::pair<std::string, std::string>> to_params(const py::object& params);

// The request body: a buffer-protocol object, held (not copied) while the request runs; an iterable of
// bytes-like objects or a binary file object (.read()): with `stream`, read piece by piece while the request is
// sent (source(): chunked), otherwise read into memory first (sent with Content-Length).
class Body {
public:
    Body() = default;
    Body(const Body&) = delete;
    Body& operator=(const Body&) = delete;
    ~Body() {  // with the GIL, as every Body is
        if (has_view_) PyBuffer_Release(&view_);
        drop_piece();
    }

    void set(const py::object& body, bool stream = false);

    void set_owned(std::string data) { owned_ = std::move(data); }

    std::string_view data() const {
        if (has_view_) return {static_cast<const char*>(view_.buf), static_cast<std::size_t>(view_.len)};
        return owned_;
    }

    // Whether the body is read as it is sent (an iterable or a file, with `stream`).
    bool streamed() const { return streamed_; }
    // Its pieces: each read with the GIL taken (the iterator's next item, or file.read() of up to 64 KiB) and
    // given to the request as a view of the object's buffer, held until the next is asked for; what the iterable
    // or the file raises ends the request and is raised as itself, as is a TypeError for a piece that is not
    // bytes-like. The Body must outlive the request.
    bc::BodySource source();

private:
    void append(const py::object& chunk, const char* what);
    void drop_piece() {  // with the GIL
        if (has_piece_) PyBuffer_Release(&piece_view_);
        has_piece_ = false;
        piece_ = py::object();
    }

    Py_buffer view_{};
    bool has_view_ = false;
    std::string owned_;
    bool streamed_ = false;
    py::object iterator_;  // streamed: the iterable's iterator, or
    py::object file_;      // the file
    py::object piece_;     // the piece the request is writing, and its buffer
    Py_buffer piece_view_{};
    bool has_piece_ = false;
};

// header bytes are decoded as Latin-1 (never fails), as http.client does
py::str latin1(const std::string& s);

}  // namespace beast_py
