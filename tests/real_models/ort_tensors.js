// Inputs for onnxruntime-node from the raw little-endian files the Python
// side writes (make_references.js, benchmarks/ort_bench.js).
'use strict';
const fs = require('fs');
const os = require('os');

const TYPED = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

// inp: {name, dtype, shape, file} -> an ort.Tensor over an aligned copy.
function readTensor(ort, inp) {
  if (os.endianness() !== 'LE') throw new Error('a little-endian host is needed');
  const Ctor = TYPED[inp.dtype];
  if (!Ctor) throw new Error(`input ${inp.name}: unsupported dtype ${inp.dtype}`);
  const buf = fs.readFileSync(inp.file);
  const n = inp.shape.reduce((a, b) => a * b, 1);
  if (buf.length !== n * Ctor.BYTES_PER_ELEMENT) {
    throw new Error(`input ${inp.name}: ${inp.file} has ${buf.length} bytes, expected ${n * Ctor.BYTES_PER_ELEMENT}`);
  }
  const data = new Ctor(n);
  new Uint8Array(data.buffer).set(buf);
  return new ort.Tensor(inp.dtype, data, inp.shape);
}

module.exports = { TYPED, readTensor };
