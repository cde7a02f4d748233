#!/usr/bin/env node
// Times one model in onnxruntime-node as `eulernpu benchmark` times an
// artifact: session creation (load), a first run, warm-up runs, then the
// measured runs; prints one JSON object. Driven by ort_side_by_side.py.
//
// usage: NODE_PATH=<cache>/ort/node_modules node ort_bench.js JOB.json
//   JOB.json: {"model": PATH, "threads": T, "iterations": N, "warmup": K,
//              "inputs": [{"name", "dtype", "shape", "file"}]}
//   prints:   {"ort_version", "load_ms", "first_run_ms", "median_ms",
//              "min_ms", "max_ms", "iterations", "peak_memory_bytes"}
//
// ONNX Runtime as its users run it: all graph optimizations (fusions,
// constant folding, layout), T intra-op threads, one inter-op thread,
// sequential execution, the CPU provider.
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

// The same reading as the suite's references (tests/real_models).
const { readTensor } = require(path.join(__dirname, '..', 'tests', 'real_models', 'ort_tensors.js'));

// The process's peak resident set (VmHWM): resourceUsage().maxRSS carries
// the parent's peak across fork and exec on Linux.
function peakMemoryBytes() {
  const m = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync('/proc/self/status', 'utf8'));
  return m ? Number(m[1]) * 1024 : process.resourceUsage().maxRSS * 1024;
}

function msSince(start) {
  return Number(process.hrtime.bigint() - start) / 1e6;
}

(async () => {
  const job = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const feeds = {};
  for (const inp of job.inputs) feeds[inp.name] = readTensor(ort, inp);
  let start = process.hrtime.bigint();
  const sess = await ort.InferenceSession.create(job.model, {
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: job.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    logSeverityLevel: 3,
  });
  const loadMs = msSince(start);
  start = process.hrtime.bigint();
  await sess.run(feeds);
  const firstMs = msSince(start);
  for (let i = 0; i < job.warmup; i++) await sess.run(feeds);
  const times = [];
  for (let i = 0; i < job.iterations; i++) {
    start = process.hrtime.bigint();
    await sess.run(feeds);
    times.push(msSince(start));
  }
  times.sort((a, b) => a - b);
  const rank = (q) => times[Math.min(times.length, Math.max(1, Math.ceil(q * times.length))) - 1];
  process.stdout.write(JSON.stringify({
    ort_version: ort.env.versions,
    load_ms: loadMs,
    first_run_ms: firstMs,
    median_ms: rank(0.5),
    min_ms: times[0],
    max_ms: times[times.length - 1],
    iterations: times.length,
    peak_memory_bytes: peakMemoryBytes(),
  }) + '\n');
})().catch((e) => {
  process.stderr.write(`ort_bench: ${e.stack || e}\n`);
  process.exit(1);
});
