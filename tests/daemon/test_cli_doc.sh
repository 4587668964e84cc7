#!/bin/bash
# Documentation/hwsigctl.rst shows each command's --help as the built
# hwsigctl prints it (scripts/update-cli-doc rewrites it).
source "$(dirname "$0")/lib.sh"
check "hwsigctl.rst shows every command's current --help" "$top/scripts/update-cli-doc" --check "$build"
finish
