// The Python exceptions of the C++ client's errors.
#pragma once

#include <pybind11/pybind11.h>  // first: it includes Python.h

namespace beast_py {

namespace py = pybind11;

// Creates beast_client.ProtocolError (an OSError), TLSError (a ConnectionError) and TooManyRedirects (an
// OSError) in `m`, and registers the translation of the client's exceptions: InvalidUrl -> ValueError,
// TimeoutError -> TimeoutError, ConnectionError -> ConnectionError / ConnectionRefusedError /
// ConnectionResetError, Cancelled -> KeyboardInterrupt, other errors -> OSError.
void register_errors(py::module_& m);

}  // namespace beast_py
