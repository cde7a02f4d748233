#!/usr/bin/env node
// Runs one model with onnxruntime-node on the samples of a job file and writes
// the outputs as raw little-endian binaries plus a JSON index. Driven by
// make_references.py, which writes the inputs the same way and packs the npz.
//
// usage: NODE_PATH=<cache>/ort/node_modules node make_references.js JOB.json
//   JOB.json: {"model": PATH, "out_dir": DIR,
//              "graph_optimization_level": "disabled", "intra_op_num_threads": 1,
//              "samples": [{"name": S, "inputs": [{"name", "dtype", "shape", "file"}]}]}
//   writes DIR/result.json: {"ort_version", "output_names",
//              "samples": [{"name": S, "outputs": [{"name", "dtype", "shape", "file"}]}]}
//
// Graph optimizations are DISABLED (not even "basic"): basic already folds
// BatchNormalization into Conv and fuses other nodes, which changes rounding;
// with none, ORT evaluates the model's own nodes one by one. One intra-op and
// one inter-op thread, sequential execution, CPU provider only.
'use strict';
const fs = require('fs');
const os = require('os');
const path = require('path');
const ort = require('onnxruntime-node');

const TYPED = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

function readTensor(inp) {
  const Ctor = TYPED[inp.dtype];
  if (!Ctor) throw new Error(`input ${inp.name}: unsupported dtype ${inp.dtype}`);
  const buf = fs.readFileSync(inp.file);
  const n = inp.shape.reduce((a, b) => a * b, 1);
  if (buf.length !== n * Ctor.BYTES_PER_ELEMENT) {
    throw new Error(`input ${inp.name}: ${inp.file} has ${buf.length} bytes, expected ${n * Ctor.BYTES_PER_ELEMENT}`);
  }
  const data = new Ctor(n);  // an aligned copy
  new Uint8Array(data.buffer).set(buf);
  return new ort.Tensor(inp.dtype, data, inp.shape);
}

(async () => {
  if (os.endianness() !== 'LE') throw new Error('a little-endian host is needed');
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const sess = await ort.InferenceSession.create(job.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: job.graph_optimization_level || 'disabled',
    intraOpNumThreads: job.intra_op_num_threads || 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    logSeverityLevel: 3,
  });
  const result = { ort_version: ort.env.versions, output_names: sess.outputNames, samples: [] };
  for (const s of job.samples) {
    const feeds = {};
    for (const inp of s.inputs) feeds[inp.name] = readTensor(inp);
    const out = await sess.run(feeds);
    const outputs = [];
    sess.outputNames.forEach((name, i) => {
      const t = out[name];
      if (!TYPED[t.type]) throw new Error(`output ${name}: unsupported dtype ${t.type}`);
      const file = path.join(job.out_dir, `${s.name}.out${i}.bin`);
      fs.writeFileSync(file, Buffer.from(t.data.buffer, t.data.byteOffset, t.data.byteLength));
      outputs.push({ name, dtype: t.type, shape: Array.from(t.dims), file });
    });
    result.samples.push({ name: s.name, outputs });
  }
  fs.writeFileSync(path.join(job.out_dir, 'result.json'), JSON.stringify(result, null, 1));
})().catch((e) => {
  console.error(`make_references.js: ${e && e.stack ? e.stack : e}`);
  process.exit(1);
});
