// The source of perfsim_test_pch (tests/CMakeLists.txt): the precompiled catch.hpp and
// nlohmann/json.hpp are its product.
