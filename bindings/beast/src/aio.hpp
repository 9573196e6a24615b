// The asyncio side of beast_client (aio.cpp): RawAsyncClient, RawStream and Completer, which
// python/beast_client/__init__.py wraps as AsyncClient and AsyncStreamResponse.
#pragma once

#include <pybind11/pybind11.h>

namespace beast_py {

void register_aio(pybind11::module_& m);

}  // namespace beast_py
