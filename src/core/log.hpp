// The library's logger (public API in gnio/log.hpp).
#pragma once

#include "gnio/log.hpp"
