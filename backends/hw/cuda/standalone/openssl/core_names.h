#pragma once
// Standalone GPU build only: see railcheck_libcrypto_subset.h.
#include "railcheck_libcrypto_subset.h"
