# A Debian package of what `cmake --install` installs: `cpack -G DEB` in a build folder (or
# `cmake --build BUILD --target package`) writes perfsim_VERSION_ARCH.deb there (README.md,
# "Install without building"). Included by the top CMakeLists.txt after every install() rule.

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME perfsim)
set(CPACK_PACKAGE_VENDOR perfsim)
set(CPACK_PACKAGE_CONTACT "perfsim developers <perfsim@invalid>")  # Debian's Maintainer field
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "Windows performance-counter hosts recorded and replayed over MS-RRP")
# One string: set() with several would make a list, its pieces joined by ';' in the description.
string(CONCAT CPACK_PACKAGE_DESCRIPTION
       "perfsim records what Windows hosts answer when a collector reads performance counters remotely "
       "(HKEY_PERFORMANCE_DATA over the Remote Registry protocol), stores it in compact capture files, "
       "and replays it from a mock winreg server that behaves like the real host, OS quirks included.")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
# The build's binary carries line tables (scripts/test.sh: -g1); the package ships without them.
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION net)
# Depends: the shared libraries the binary links, with the versions Debian's shlibs files give
# (dpkg-shlibdeps, Debian Policy 8.6), not a hand-kept list that drifts from the link line.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# Programs perfsim runs or serves from other packages: smbd for `serve --smb` (server/README.md),
# Chart.js for the dashboard's charts (admin/README.md). perfsim runs without either.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "samba, libjs-chart.js")
include(CPack)
