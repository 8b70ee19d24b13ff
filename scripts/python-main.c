/*
 * bin/python3.X of a tree staged from Debian's packages for another architecture
 * (src/distribution/stage-debian.ts). Debian's own executable carries a static copy of
 * libpython (6 MB); this one is CPython's Programs/python.c against the tree's shared
 * libpython, as a tree staged from a --enable-shared build has.
 */
#include <Python.h>

int main(int argc, char **argv) { return Py_BytesMain(argc, argv); }
