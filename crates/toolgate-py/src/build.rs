//! The Python objects of a document made while it is read: a builder the
//! strict reader ([`toolgate_json::Reader`]), the one-pass check
//! ([`toolgate_schema::Checker::load`]) or a [`toolgate_json::Tape`] tells
//! what it reads, with no [`toolgate_json::Value`] tree between. The
//! objects are those [`crate::convert::to_py`] makes of the parsed value.

use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyList, PyString};
use toolgate_json::{Name, Value, Visitor};
use toolgate_schema::Build;

use crate::convert::{key, number_to_py, KeySlot, Numbers};

/// Makes the Python value of the document it is told.
pub(crate) struct PyBuild<'py, 'a> {
    py: Python<'py>,
    numbers: &'a Numbers<'py>,
    keys: &'a mut Vec<KeySlot>,
    stacks: &'a mut Stacks,
    /// The document's value, once it is complete.
    root: Option<Bound<'py, PyAny>>,
    /// Why the builder stopped.
    error: Option<PyErr>,
}

/// The containers a builder has open, kept (empty) from one document to
/// the next so that a warm builder allocates nothing for them.
#[derive(Default)]
pub(crate) struct Stacks {
    /// The open containers, innermost last.
    open: Vec<Open>,
    /// The items of the open arrays, one array's after another's.
    items: Vec<Py<PyAny>>,
}

impl Stacks {
    /// Drops whatever is left (with the GIL held, as every use of a
    /// builder is).
    fn clear(&mut self) {
        self.open.clear();
        self.items.clear();
    }
}

/// An open container.
enum Open {
    Object {
        dict: Py<PyDict>,
        /// The name of the member whose value comes next.
        name: Option<Py<PyString>>,
    },
    Array {
        /// Where its items begin in `Stacks::items`.
        start: usize,
    },
}

impl<'py, 'a> PyBuild<'py, 'a> {
    /// A builder making numbers as `numbers` says, member names from the
    /// key cache `keys`, on the (empty) `stacks`.
    pub(crate) fn new(
        py: Python<'py>,
        numbers: &'a Numbers<'py>,
        keys: &'a mut Vec<KeySlot>,
        stacks: &'a mut Stacks,
    ) -> Self {
        stacks.clear();
        Self {
            py,
            numbers,
            keys,
            stacks,
            root: None,
            error: None,
        }
    }

    /// The value made, or why none was: the error that stopped the
    /// builder, or (should the events have ended early) a `ValueError`.
    pub(crate) fn finish(self) -> PyResult<Bound<'py, PyAny>> {
        let whole = self.stacks.open.is_empty();
        self.stacks.clear();
        if let Some(e) = self.error {
            return Err(e);
        }
        match self.root {
            Some(root) if whole => Ok(root),
            _ => Err(pyo3::exceptions::PyValueError::new_err(
                "internal_error: the document was not told whole",
            )),
        }
    }

    /// Keeps the error of a failed step; `false` stops the read.
    #[inline]
    fn ok(&mut self, done: PyResult<()>) -> bool {
        match done {
            Ok(()) => true,
            Err(e) => {
                self.error = Some(e);
                false
            }
        }
    }

    /// Puts a complete value in its place: the open object's next member,
    /// the open array's next item, or the document.
    #[inline]
    fn put(&mut self, value: Bound<'py, PyAny>) -> bool {
        let py = self.py;
        match self.stacks.open.last_mut() {
            Some(Open::Object { dict, name }) => {
                let done = match name.take() {
                    Some(name) => dict.bind(py).set_item(name.into_bound(py), value),
                    None => Err(pyo3::exceptions::PyValueError::new_err(
                        "internal_error: a member's value came without its name",
                    )),
                };
                self.ok(done)
            }
            Some(Open::Array { .. }) => {
                self.stacks.items.push(value.unbind());
                true
            }
            None => {
                self.root = Some(value);
                true
            }
        }
    }
}

impl Visitor for PyBuild<'_, '_> {
    #[inline]
    fn begin_object(&mut self) -> bool {
        self.stacks.open.push(Open::Object {
            dict: PyDict::new(self.py).unbind(),
            name: None,
        });
        true
    }

    #[inline]
    fn member(&mut self, name: &str) -> bool {
        let s = key(self.py, self.keys, name);
        if let Some(Open::Object { name, .. }) = self.stacks.open.last_mut() {
            *name = Some(s.unbind());
        }
        true
    }

    #[inline]
    fn member_name(&mut self, name: &str) -> Name {
        if self.member(name) {
            Name::Go
        } else {
            Name::Stop
        }
    }

    #[inline]
    fn end_object(&mut self) -> bool {
        match self.stacks.open.pop() {
            Some(Open::Object { dict, .. }) => self.put(dict.into_bound(self.py).into_any()),
            _ => false,
        }
    }

    #[inline]
    fn begin_array(&mut self) -> bool {
        self.stacks.open.push(Open::Array {
            start: self.stacks.items.len(),
        });
        true
    }

    #[inline]
    fn end_array(&mut self) -> bool {
        let Some(Open::Array { start }) = self.stacks.open.pop() else {
            return false;
        };
        let py = self.py;
        let items = &mut self.stacks.items;
        let start = start.min(items.len());
        match PyList::new(py, items.drain(start..).map(|item| item.into_bound(py))) {
            Ok(list) => self.put(list.into_any()),
            Err(e) => self.ok(Err(e)),
        }
    }

    #[inline]
    fn scalar(&mut self, value: &Value<'_>) -> bool {
        let py = self.py;
        let made = match value {
            Value::Null => py.None().into_bound(py),
            Value::Bool(b) => PyBool::new(py, *b).to_owned().into_any(),
            Value::Number(n) => match number_to_py(py, n, self.numbers) {
                Ok(v) => v,
                Err(e) => return self.ok(Err(e)),
            },
            Value::String(s) => PyString::new(py, s).into_any(),
            // Never told as a scalar: made whole.
            Value::Array(_) | Value::Object(_) => {
                match crate::convert::to_py_with(py, value, self.numbers, self.keys) {
                    Ok(v) => v,
                    Err(e) => return self.ok(Err(e)),
                }
            }
        };
        self.put(made)
    }

    #[inline]
    fn string(&mut self, s: &str) -> bool {
        let made = PyString::new(self.py, s).into_any();
        self.put(made)
    }
}

impl Build for PyBuild<'_, '_> {
    fn restart(&mut self) {
        self.stacks.clear();
        self.root = None;
        self.error = None;
    }
}
