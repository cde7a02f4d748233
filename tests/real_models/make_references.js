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
const path = require('path');
const ort = require('onnxruntime-node');

const { TYPED, readTensor } = require('./ort_tensors');

(async () => {
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
    for (const inp of s.inputs) feeds[inp.name] = readTensor(ort, inp);
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
