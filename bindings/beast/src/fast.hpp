// Client.get(), Client.fetch_len() and Client.fetch_phases() as CPython vectorcall methods (fast.cpp).
#pragma once

#include <pybind11/pybind11.h>

namespace beast_py {

// Installs them on the Client class of `m`, which register_client() has defined.
void register_fast_path(pybind11::module_& m);

}  // namespace beast_py
