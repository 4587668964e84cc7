// A documentation page as a message cites it: the path it has on an
// installed system (make install, the Debian package put Documentation/'s
// pages there, HTML renderings in html/ beside them), so that the operator
// who reads "see .../vms.rst" finds the file. HWSIG_DOC_DIR comes from the
// build's HWSIG_DOC_DIR (userspace/CMakeLists.txt).
#pragma once

#include "hwsig/doc_dir.h"

// HWSIG_DOC("vms.rst"): a string literal, "/usr/share/doc/hwsig/vms.rst".
#define HWSIG_DOC(page) HWSIG_DOC_DIR "/" page
