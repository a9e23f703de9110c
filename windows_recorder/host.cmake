# The Linux build's side of windows_recorder/: builds perfsim-record.exe (and the test provider
# DLL) as a separate cross-compiled project (ExternalProject) when Debian's mingw-w64 is here, and
# installs the .exe under share/perfsim/windows/. Included by the top CMakeLists.txt unless
# PERFSIM_WINDOWS_RECORDER is OFF.
# PERFSIM_WINDOWS=ON makes a missing cross compiler a configure error; OFF (default) a notice.
include_guard(GLOBAL)
option(PERFSIM_WINDOWS "Require perfsim-record.exe: fail the configure without mingw-w64" OFF)
find_program(PERFSIM_MINGW_CXX x86_64-w64-mingw32-g++-posix)
set(PERFSIM_WINDOWS_RECORDER_EXE "")
set(PERFSIM_TEST_PROVIDER_DLL "")
if(NOT PERFSIM_MINGW_CXX)
  set(why "x86_64-w64-mingw32-g++-posix missing (g++-mingw-w64-x86-64-posix, scripts/install-deps.sh)")
  if(PERFSIM_WINDOWS)
    message(FATAL_ERROR "perfsim: ${why}, and PERFSIM_WINDOWS is ON")
  endif()
  message(NOTICE "perfsim: ${why}: perfsim-record.exe not built")
  return()
endif()

include(ExternalProject)
set(perfsim_win_dir ${CMAKE_BINARY_DIR}/windows_recorder)
set(perfsim_win_args --toolchain ${CMAKE_CURRENT_LIST_DIR}/mingw-w64-x86_64.cmake -DCMAKE_BUILD_TYPE=MinSizeRel)
if(CMAKE_CXX_COMPILER_LAUNCHER)
  list(APPEND perfsim_win_args -DCMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER})
endif()
if(CMAKE_UNITY_BUILD)  # the cross build parses the same headers once per batch too (CMakeLists.txt)
  list(APPEND perfsim_win_args -DCMAKE_UNITY_BUILD=ON)
endif()
ExternalProject_Add(perfsim_windows_recorder
                    SOURCE_DIR ${CMAKE_CURRENT_LIST_DIR}
                    BINARY_DIR ${perfsim_win_dir}
                    CMAKE_ARGS ${perfsim_win_args}
                    # Its sources are this tree's (core/, captures/, recorder/ ...): its own build
                    # tool decides what is out of date, every time.
                    BUILD_ALWAYS ON
                    INSTALL_COMMAND ""
                    BUILD_BYPRODUCTS ${perfsim_win_dir}/perfsim-record.exe ${perfsim_win_dir}/perfsim_test_provider.dll)
set(PERFSIM_WINDOWS_RECORDER_EXE ${perfsim_win_dir}/perfsim-record.exe)
set(PERFSIM_TEST_PROVIDER_DLL ${perfsim_win_dir}/perfsim_test_provider.dll)
install(PROGRAMS ${PERFSIM_WINDOWS_RECORDER_EXE} DESTINATION ${CMAKE_INSTALL_DATADIR}/perfsim/windows)
