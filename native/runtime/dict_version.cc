// _vis.dict_version(d): a number that changes whenever the dict is modified, so the guest
// runtime can tell "nobody touched the builtins since the last block" in O(1) instead of
// comparing ~200 entries twice per block (vis_guest/state.py, Runtime.restore).
//
// 3.11 keeps such a tag in every dict (ma_version_tag, bumped by every insert, update and
// delete). 3.12 deprecates it and 3.13 reuses bits of it, so there a dict watcher counts the
// modifications of the dicts it watches instead. Without a free watcher id it answers None
// and the caller compares the dicts itself.
#include "runtime.h"

namespace vis {

namespace {

#if PY_VERSION_HEX >= 0x030C0000
int g_watcher = -2;  // -2: not registered yet; -1: no free watcher id
uint64_t g_mutations = 0;

int OnDictEvent(PyDict_WatchEvent, PyObject*, PyObject*, PyObject*) {
  ++g_mutations;  // on the interpreter thread, under the GIL
  return 0;
}
#endif

}  // namespace

PyObject* VisDictVersion(PyObject*, PyObject* d) {
  if (!PyDict_Check(d)) {
    PyErr_SetString(PyExc_TypeError, "dict_version() takes a dict");
    return nullptr;
  }
#if PY_VERSION_HEX >= 0x030C0000
  if (g_watcher == -2) {
    g_watcher = PyDict_AddWatcher(OnDictEvent);
    if (g_watcher < 0) {
      PyErr_Clear();
      g_watcher = -1;
    }
  }
  if (g_watcher < 0) Py_RETURN_NONE;
  // Watching is idempotent; the count covers every watched dict, which only makes an
  // unrelated change look like a change (a full compare), never the other way round.
  if (PyDict_Watch(g_watcher, d) < 0) return nullptr;
  return PyLong_FromUnsignedLongLong(g_mutations);
#else
  return PyLong_FromUnsignedLongLong(reinterpret_cast<PyDictObject*>(d)->ma_version_tag);
#endif
}

}  // namespace vis
