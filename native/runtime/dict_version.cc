// _vis.dict_version(d): a number that changes whenever the dict is modified, so the guest
// runtime can tell "nobody touched this dict since I last looked" in O(1): the builtins
// (Runtime.restore would otherwise compare ~200 entries twice per block) and the session
// globals (the defs snapshot need not be recomputed). vis_guest/state.py, block.py.
//
// 3.11 keeps such a tag in every dict (ma_version_tag: globally unique, new on every change
// of a value). 3.12 deprecates it and 3.13 reuses bits of it, so there one dict watcher
// stamps each watched dict with a global clock on every change instead. Storing the very
// object a key already holds is no change on either. Without a free watcher id, or past
// kMaxWatched dicts, it answers None and the caller does the full comparison.
#include "runtime.h"

namespace vis {

namespace {

#if PY_VERSION_HEX >= 0x030C0000
constexpr int kMaxWatched = 8;
struct Watched {
  PyObject* dict = nullptr;  // borrowed: cleared when the dict is deallocated
  uint64_t version = 0;
};
Watched g_watched[kMaxWatched];
uint64_t g_clock = 0;  // only touched on the interpreter thread, under the GIL
int g_watcher = -2;    // -2: not registered yet; -1: no free watcher id

Watched* Find(PyObject* d) {
  for (auto& w : g_watched)
    if (w.dict == d) return &w;
  return nullptr;
}

int OnDictEvent(PyDict_WatchEvent event, PyObject* d, PyObject*, PyObject*) {
  Watched* w = Find(d);
  if (w == nullptr) return 0;
  if (event == PyDict_EVENT_DEALLOCATED) {
    w->dict = nullptr;  // a new dict at this address starts with a fresh stamp
  } else {
    w->version = ++g_clock;
  }
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
  Watched* w = Find(d);
  if (w == nullptr) {
    w = Find(nullptr);
    if (w == nullptr) Py_RETURN_NONE;
    if (PyDict_Watch(g_watcher, d) < 0) return nullptr;
    w->dict = d;
    w->version = ++g_clock;
  }
  return PyLong_FromUnsignedLongLong(w->version);
#else
  return PyLong_FromUnsignedLongLong(reinterpret_cast<PyDictObject*>(d)->ma_version_tag);
#endif
}

}  // namespace vis
