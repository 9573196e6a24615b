// beast_client._core: pybind11 bindings of the C++ client in cpp-beast/. The module: its attributes, then its
// exceptions (errors.cpp), the response types (types.cpp), Client (client.cpp) and the asyncio side (aio.cpp);
// conversions in convert.cpp, the options both clients take in settings.cpp.
//
// The GIL is released around the network I/O (connect, TLS handshake, send, receive) and while a CA bundle is
// loaded. While a request waits, the client polls a cancel check every 50 ms; the check briefly re-acquires
// the GIL and runs PyErr_CheckSignals(), so Ctrl-C (or any signal handler that raises) interrupts a blocked
// get()/request() in the main thread promptly.
#include "aio.hpp"
#include "errors.hpp"
#include "fast.hpp"
#include "types.hpp"

namespace py = pybind11;

PYBIND11_MODULE(_core, m, py::mod_gil_not_used()) {
    m.doc() = "Boost.Beast HTTP/1.1 client (C++), with the GIL released during I/O, and its asyncio side";
    m.attr("__version__") = BEAST_CLIENT_PY_VERSION;
    m.attr("boost_version") = beast_client::library_version();
    beast_py::register_errors(m);
    beast_py::register_types(m);
    beast_py::register_client(m);
    beast_py::register_fast_path(m);  // Client.get() and fetch_len()
    beast_py::register_aio(m);        // RawAsyncClient, RawStream, Completer: beast_client.AsyncClient's
}
