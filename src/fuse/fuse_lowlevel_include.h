// The one place that picks the libfuse API version: 3.12 is the first with
// the fuse_loop_cfg_* multi-threaded loop configuration we use.
#pragma once

#ifndef FUSE_USE_VERSION
#define FUSE_USE_VERSION 312
#endif
#include <fuse_lowlevel.h>
