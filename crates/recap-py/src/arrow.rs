//! Tables leave Rust as Arrow record batches through the Arrow PyCapsule interface
//! (`__arrow_c_stream__`): pyarrow, polars and pandas read the columns in place, and no
//! value passes through a Python object on the way.

use arrow_array::builder::{ListBuilder, StringBuilder};
use arrow_array::ffi_stream::FFI_ArrowArrayStream;
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, ListArray, NullArray, RecordBatch,
    RecordBatchIterator, StringArray, UInt64Array,
};
use arrow_schema::{ArrowError, Field, Schema};
use pyo3::prelude::*;
use pyo3::types::PyCapsule;
use serde::de::{Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::Value;
use std::sync::Arc;

/// One Arrow table, exported as a C stream on request (as many times as asked).
#[pyclass(module = "recap_replay._native", name = "ArrowTable", frozen)]
#[derive(Clone)]
pub struct ArrowTable {
    batch: RecordBatch,
}

impl ArrowTable {
    pub fn new(columns: Vec<(String, ArrayRef)>) -> Result<Self, ArrowError> {
        let fields: Vec<Field> = columns
            .iter()
            .map(|(name, a)| Field::new(name, a.data_type().clone(), true))
            .collect();
        let arrays = columns.into_iter().map(|(_, a)| a).collect();
        let batch = RecordBatch::try_new(Arc::new(Schema::new(fields)), arrays)?;
        Ok(ArrowTable { batch })
    }
}

#[pymethods]
impl ArrowTable {
    /// The Arrow PyCapsule stream protocol; `requested_schema` is not honoured (the
    /// protocol lets a producer hand over its own schema).
    #[pyo3(signature = (requested_schema = None))]
    fn __arrow_c_stream__<'py>(
        &self,
        py: Python<'py>,
        requested_schema: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = requested_schema;
        let batches = vec![Ok(self.batch.clone())];
        let reader = RecordBatchIterator::new(batches, self.batch.schema());
        let stream = FFI_ArrowArrayStream::new(Box::new(reader));
        // The consumer moves the stream out of the capsule (and marks it released);
        // one never consumed is released when the capsule is dropped.
        PyCapsule::new_with_value(py, stream, c"arrow_array_stream")
    }

    fn __len__(&self) -> usize {
        self.batch.num_rows()
    }

    /// Column names, in order.
    #[getter]
    fn columns(&self) -> Vec<String> {
        self.batch
            .schema()
            .fields()
            .iter()
            .map(|f| f.name().clone())
            .collect()
    }
}

/// A column being filled row by row.
pub enum Col {
    Str(Vec<Option<String>>),
    U64(Vec<Option<u64>>),
    F64(Vec<Option<f64>>),
    Bool(Vec<Option<bool>>),
}

impl Col {
    pub fn finish(self) -> ArrayRef {
        match self {
            Col::Str(v) => Arc::new(StringArray::from(v)),
            Col::U64(v) => Arc::new(UInt64Array::from(v)),
            Col::F64(v) => Arc::new(Float64Array::from(v)),
            Col::Bool(v) => Arc::new(BooleanArray::from(v)),
        }
    }
}

/// A JSON value whose objects keep their keys in document order (serde_json's `Value`
/// sorts them), so that columns come in the order the report writes its fields.
pub enum Ordered {
    Leaf(Value),
    Object(Vec<(String, Ordered)>),
}

impl<'de> Deserialize<'de> for Ordered {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(OrderedVisitor)
    }
}

struct OrderedVisitor;

impl<'de> Visitor<'de> for OrderedVisitor {
    type Value = Ordered;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Ordered, A::Error> {
        let mut fields = Vec::new();
        while let Some((k, v)) = map.next_entry::<String, Ordered>()? {
            fields.push((k, v));
        }
        Ok(Ordered::Object(fields))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Ordered, A::Error> {
        let v = Value::deserialize(serde::de::value::SeqAccessDeserializer::new(seq))?;
        Ok(Ordered::Leaf(v))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(Value::Bool(v)))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(Value::from(v)))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(Value::from(v)))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(Value::from(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(Value::String(v.to_string())))
    }
    fn visit_unit<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(Value::Null))
    }
    fn visit_none<E>(self) -> Result<Ordered, E> {
        Ok(Ordered::Leaf(Value::Null))
    }
}

/// Flattens JSON objects into columns named as `pandas.json_normalize` names them
/// (dotted paths, in first-seen order; a row without a key has a null there):
/// scalars and non-empty lists of scalars become columns, other lists are left out.
pub fn flatten_rows(rows: &[Ordered]) -> Vec<(String, ArrayRef)> {
    let mut names: Vec<String> = Vec::new();
    let mut cells: Vec<Vec<(usize, &Value)>> = Vec::new();
    for (i, row) in rows.iter().enumerate() {
        let mut flat = Vec::new();
        flatten_into(row, String::new(), &mut flat);
        for (name, value) in flat {
            let at = match names.iter().position(|n| *n == name) {
                Some(at) => at,
                None => {
                    names.push(name);
                    cells.push(Vec::new());
                    names.len() - 1
                }
            };
            cells[at].push((i, value));
        }
    }
    names
        .into_iter()
        .zip(cells)
        .map(|(name, cells)| (name, json_column(rows.len(), &cells)))
        .collect()
}

fn flatten_into<'v>(value: &'v Ordered, prefix: String, out: &mut Vec<(String, &'v Value)>) {
    match value {
        Ordered::Object(fields) => {
            // As pandas: a level's plain values first, then its objects flattened.
            let (objects, plain): (Vec<_>, Vec<_>) = fields
                .iter()
                .partition(|(_, v)| matches!(v, Ordered::Object(_)));
            for (k, v) in plain.into_iter().chain(objects) {
                let name = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                flatten_into(v, name, out);
            }
        }
        Ordered::Leaf(Value::Array(items))
            if items.is_empty() || items.iter().any(|v| v.is_object() || v.is_array()) => {}
        Ordered::Leaf(v) => out.push((prefix, v)),
    }
}

/// The narrowest Arrow type holding every value of a column (nulls aside).
fn json_column(rows: usize, cells: &[(usize, &Value)]) -> ArrayRef {
    let present: Vec<&Value> = cells
        .iter()
        .map(|(_, v)| *v)
        .filter(|v| !v.is_null())
        .collect();
    let mut column: Vec<Option<&Value>> = vec![None; rows];
    for (i, v) in cells {
        if !v.is_null() {
            column[*i] = Some(v);
        }
    }
    let all = |f: fn(&Value) -> bool| !present.is_empty() && present.iter().all(|v| f(v));
    if present.is_empty() {
        Arc::new(NullArray::new(rows))
    } else if all(Value::is_boolean) {
        Arc::new(BooleanArray::from(
            column
                .iter()
                .map(|v| v.and_then(Value::as_bool))
                .collect::<Vec<_>>(),
        ))
    } else if all(Value::is_u64) {
        Arc::new(UInt64Array::from(
            column
                .iter()
                .map(|v| v.and_then(Value::as_u64))
                .collect::<Vec<_>>(),
        ))
    } else if all(|v| v.is_i64() || v.is_u64()) && all(|v| v.as_i64().is_some()) {
        Arc::new(Int64Array::from(
            column
                .iter()
                .map(|v| v.and_then(Value::as_i64))
                .collect::<Vec<_>>(),
        ))
    } else if all(Value::is_number) {
        Arc::new(Float64Array::from(
            column
                .iter()
                .map(|v| v.and_then(Value::as_f64))
                .collect::<Vec<_>>(),
        ))
    } else if all(Value::is_string) {
        Arc::new(StringArray::from(
            column
                .iter()
                .map(|v| v.and_then(Value::as_str))
                .collect::<Vec<_>>(),
        ))
    } else if all(|v| v.as_array().is_some_and(|a| a.iter().all(Value::is_string))) {
        let lists = column.iter().map(|v| {
            v.and_then(Value::as_array).map(|a| {
                a.iter()
                    .map(|s| s.as_str().map(str::to_string))
                    .collect::<Vec<_>>()
            })
        });
        Arc::new(string_lists(lists))
    } else {
        // Mixed kinds: each value as its JSON text.
        Arc::new(StringArray::from(
            column
                .iter()
                .map(|v| v.map(Value::to_string))
                .collect::<Vec<_>>(),
        ))
    }
}

/// A list-of-strings column from per-row lists.
fn string_lists(rows: impl Iterator<Item = Option<Vec<Option<String>>>>) -> ListArray {
    let mut builder = ListBuilder::new(StringBuilder::new());
    for row in rows {
        match row {
            Some(items) => {
                for s in items {
                    builder.values().append_option(s);
                }
                builder.append(true);
            }
            None => builder.append(false),
        }
    }
    builder.finish()
}
