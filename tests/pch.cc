// The translation unit that compiles the suites' shared precompiled header (mpsim_test_pch in
// tests/CMakeLists.txt); it holds no tests.
