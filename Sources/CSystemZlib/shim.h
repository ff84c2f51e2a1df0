#ifndef MLKIT_CZLIB_SHIM_H
#define MLKIT_CZLIB_SHIM_H
// The system zlib, for its CRC-32 (the model file's checksum).
#include <zlib.h>
#endif
