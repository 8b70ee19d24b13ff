// An owned reference to a Python object. Every C API call that returns a new reference is
// wrapped at once, so each early return and error path releases what it took: the manual
// Py_DECREF bookkeeping this replaces leaked on the paths nobody tested. Only touched with the
// GIL held: a PyRef must never be destroyed on a thread that has released it.
#pragma once
#define PY_SSIZE_T_CLEAN
#include <Python.h>

namespace vis {

class PyRef {
 public:
  PyRef() = default;
  // Takes over a new reference (or nullptr, when the call that made it failed).
  explicit PyRef(PyObject* owned) : obj_(owned) {}
  // A reference of our own to a borrowed object.
  static PyRef Borrow(PyObject* borrowed) {
    Py_XINCREF(borrowed);
    return PyRef(borrowed);
  }
  PyRef(const PyRef&) = delete;
  PyRef& operator=(const PyRef&) = delete;
  PyRef(PyRef&& other) noexcept : obj_(other.Release()) {}
  PyRef& operator=(PyRef&& other) noexcept {
    Reset(other.Release());
    return *this;
  }
  ~PyRef() { Py_XDECREF(obj_); }

  PyObject* get() const { return obj_; }
  explicit operator bool() const { return obj_ != nullptr; }
  // Hands the reference to the caller (a function returning a new reference).
  PyObject* Release() {
    PyObject* o = obj_;
    obj_ = nullptr;
    return o;
  }
  // Drops the current reference (after the new one is stored: its destructor may run code).
  void Reset(PyObject* owned = nullptr) {
    PyObject* old = obj_;
    obj_ = owned;
    Py_XDECREF(old);
  }

 private:
  PyObject* obj_ = nullptr;
};

}  // namespace vis
