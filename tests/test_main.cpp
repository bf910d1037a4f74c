// Catch2's main, compiled once for every test binary (15 s per TU otherwise).
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
