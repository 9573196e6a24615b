// Boost.JSON, header-only: its implementation, compiled once for the tests that read driver documents.
#include <boost/json/src.hpp>
