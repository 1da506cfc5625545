# The Debian package (`make deb`, i.e. `cpack -G DEB` in the Release build): CPack
# packages exactly what the install() rules install (the binary, docs/gpuvet.1, the
# bash completion) under /usr, so `make install` and the package cannot drift apart.
#
# Depends is derived, not written: dpkg-shlibdeps reads the DT_NEEDED entries of the
# packaged binary and names the Debian packages of the libraries it really links
# (libc6, libjansson4, libzstd1, zlib1g, libsqlite3-0, libopenblas0 on Debian 12).
# The vendor GPU libraries (CUDA, HIP/ROCm, NCCL/RCCL, MPI, libpq) and PyTorch are
# opened at run time with dlopen, never linked, so they are not dependencies: gpuvet
# must keep running while the stack it inspects is being upgraded or rolled back.
# tests/cli/install_deb.sh installs and purges the package in a Debian root.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME gpuvet)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "gpuvet <gpuvet@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "vets a GPU stack (ROCm or CUDA, PyTorch) across upgrades and rollbacks")
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "gpuvet records what is installed and loaded, says what changed, proves
whether the numbers changed, and plans the way back to a known-good state.
The vendor GPU libraries (CUDA, HIP/ROCm) and PyTorch are opened at run
time when present; none of them is needed to install it.")
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bash-completion")
set(CPACK_STRIP_FILES ON)
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
include(CPack)
