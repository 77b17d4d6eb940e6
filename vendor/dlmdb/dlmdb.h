/*
 * dlmdb.h - the newest DLMDB names its public header dlmdb.h; it is the same
 * interface as lmdb.h.
 */
#ifndef DLMDB_DLMDB_H
#define DLMDB_DLMDB_H
#include "lmdb.h"
#endif
