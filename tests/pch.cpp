// The source of perfsim_test_pch (tests/CMakeLists.txt): the precompiled catch.hpp is its product.
