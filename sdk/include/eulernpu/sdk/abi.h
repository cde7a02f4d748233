/*
 * eulernpu plugin SDK — the C ABI between the host and its plugins.
 *
 * Versioning. ENP_ABI_MAJOR changes when any existing struct or function
 * changes shape; the host refuses a plugin of another major and says why.
 * ENP_ABI_MINOR grows when members are appended to the end of a struct;
 * every extensible struct starts with `struct_size` so either side can tell
 * which members the other one knows.
 *
 * Ownership, once for the whole ABI:
 *  - Pointers passed *into* a function are borrowed: valid only for the
 *    duration of that call. Copy what you keep.
 *  - Everything a plugin hands back goes through a host "sink" function
 *    (enp_host_api_t) that copies it, so the plugin keeps ownership of its
 *    memory and the host of its own: whoever allocates frees. The one
 *    exception (ABI 1.8): tensor_list_add_lasting, whose data the host may
 *    read in place until the session runs again or closes.
 *  - Status objects are created by the host (enp_host_api_t.status_new) and
 *    freed by the host once a plugin function has returned them. NULL means
 *    success.
 *  - Descriptors returned by enp_plugin_entry() are static: they must stay
 *    valid for as long as the library is loaded (the host never unloads).
 *
 * Threading: the host calls a plugin from one thread at a time. A plugin may
 * use threads internally; host API functions are thread-safe unless noted.
 *
 * No C++ type, exception or protobuf object ever crosses this boundary.
 */
#ifndef EULERNPU_SDK_ABI_H_
#define EULERNPU_SDK_ABI_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define ENP_ABI_MAJOR 1
#define ENP_ABI_MINOR 9

/* The one symbol a plugin library exports. */
#define ENP_PLUGIN_ENTRY_SYMBOL "enp_plugin_entry"

#if defined(_WIN32)
#define ENP_EXPORT __declspec(dllexport)
#else
#define ENP_EXPORT __attribute__((visibility("default")))
#endif

/* ------------------------------------------------------------------------ */
/* Status                                                                    */
/* ------------------------------------------------------------------------ */

/* A small set of codes; the message says the rest. */
typedef enum enp_status_code_t {
  ENP_OK = 0,
  /* The user's input is wrong (file contents, option value, model). Fixing
   * the input fixes the error; retrying does not. */
  ENP_INVALID_ARGUMENT = 1,
  /* A named thing (file, tensor key, device, plugin) does not exist. */
  ENP_NOT_FOUND = 2,
  /* The request is well-formed but this plugin cannot do it (an op without
   * lowering, a dtype without kernel). Another backend or version may. */
  ENP_UNIMPLEMENTED = 3,
  /* The input is valid but does not fit the current state, e.g. an artifact
   * compiled for another core mode. Change the state (recompile) first. */
  ENP_FAILED_PRECONDITION = 4,
  /* A limit was hit: memory, a size bound, a device resource. */
  ENP_RESOURCE_EXHAUSTED = 5,
  /* A bug in the plugin or host. Report it. */
  ENP_INTERNAL = 6
} enp_status_code_t;

/* Opaque, host-owned. */
typedef struct enp_status_t enp_status_t;

/* ------------------------------------------------------------------------ */
/* Tensors and graphs (read-only views; numbering follows ONNX)              */
/* ------------------------------------------------------------------------ */

/* Element types, numbered as ONNX TensorProto.DataType. */
typedef enum enp_dtype_t {
  ENP_DTYPE_UNDEFINED = 0,
  ENP_DTYPE_FLOAT32 = 1,
  ENP_DTYPE_UINT8 = 2,
  ENP_DTYPE_INT8 = 3,
  ENP_DTYPE_UINT16 = 4,
  ENP_DTYPE_INT16 = 5,
  ENP_DTYPE_INT32 = 6,
  ENP_DTYPE_INT64 = 7,
  ENP_DTYPE_STRING = 8,
  ENP_DTYPE_BOOL = 9,
  ENP_DTYPE_FLOAT16 = 10,
  ENP_DTYPE_FLOAT64 = 11,
  ENP_DTYPE_UINT32 = 12,
  ENP_DTYPE_UINT64 = 13,
  /* 14, 15 are ONNX's complex types, which no tensor here carries.
   * Values from 16 on are ABI 1.1: a 1.0 plugin never sees them in a graph
   * it declared no support for. */
  /* Brain float: the upper 16 bits of a float32 (8-bit exponent, 7-bit
   * mantissa), stored as its bit pattern in a uint16. */
  ENP_DTYPE_BFLOAT16 = 16,
  /* Low-precision types. In memory every element takes ONE byte, unpacked, whatever ONNX packs:
   * float8 and float4 elements hold their bit pattern (float4 in the low nibble), int4/int2 the
   * value sign-extended to int8, uint4/uint2 the value as uint8. Only TensorProtos
   * (.mblt files) pack 4-bit and 2-bit types, low bits first. */
  ENP_DTYPE_FLOAT8E4M3FN = 17,   /* 1-4-3, bias 7, no inf, NaN S.1111.111 */
  ENP_DTYPE_FLOAT8E4M3FNUZ = 18, /* 1-4-3, bias 8, no inf, no -0, NaN 0x80 */
  ENP_DTYPE_FLOAT8E5M2 = 19,     /* 1-5-2, bias 15, IEEE-like inf and NaN */
  ENP_DTYPE_FLOAT8E5M2FNUZ = 20, /* 1-5-2, bias 16, no inf, no -0, NaN 0x80 */
  ENP_DTYPE_UINT4 = 21,
  ENP_DTYPE_INT4 = 22,
  ENP_DTYPE_FLOAT4E2M1 = 23, /* 1-2-1, bias 1, no inf, no NaN */
  ENP_DTYPE_FLOAT8E8M0 = 24, /* unsigned 2^(e-127), 0xFF NaN, no zero */
  ENP_DTYPE_UINT2 = 25,
  ENP_DTYPE_INT2 = 26
} enp_dtype_t;

#define ENP_DTYPE_BIT(d) (1u << (unsigned)(d))

/* A dense, little-endian, row-major tensor or (data == NULL) a value's type
 * and shape. Tensor data the host hands to a plugin is aligned to at least
 * 16 bytes; data a plugin hands to the host may have any alignment. A dimension of -1 is unknown;
 * for a type-only value, dims == NULL with rank 0 means the whole shape is unknown (a scalar has
 * rank 0 and a non-NULL dims). */
typedef struct enp_tensor_t {
  const char* name;
  int32_t dtype; /* enp_dtype_t */
  uint32_t rank;
  const int64_t* dims; /* rank entries */
  const void* data;    /* NULL for type-only values */
  uint64_t size_bytes; /* bytes at data */
} enp_tensor_t;

typedef enum enp_attr_type_t {
  ENP_ATTR_UNDEFINED = 0,
  ENP_ATTR_FLOAT = 1,
  ENP_ATTR_INT = 2,
  ENP_ATTR_STRING = 3,
  ENP_ATTR_TENSOR = 4,
  /* ABI 1.3. A subgraph (If's branches, a Loop's body): s/s_size hold the
   * subgraph as a serialized onnx.GraphProto, ONNX's own wire format, so
   * no protobuf object crosses the boundary. The host inlines an If whose
   * condition is constant once shapes are known; it lowers nothing else. */
  ENP_ATTR_GRAPH = 5,
  ENP_ATTR_FLOATS = 6,
  ENP_ATTR_INTS = 7,
  ENP_ATTR_STRINGS = 8
} enp_attr_type_t;

/* One node attribute; only the members of its type are meaningful. */
typedef struct enp_attribute_t {
  const char* name;
  int32_t type; /* enp_attr_type_t */
  int64_t i;
  double f;
  const char* s;
  uint64_t s_size;
  const int64_t* ints;        /* count entries */
  const double* floats;       /* count entries */
  const char* const* strings; /* count entries */
  uint64_t count;
  const enp_tensor_t* t;
} enp_attribute_t;

typedef struct enp_node_t {
  const char* name;
  const char* op_type;
  const char* domain;        /* "" is the ONNX default domain */
  const char* const* inputs; /* "" marks an omitted optional input */
  uint32_t n_inputs;
  const char* const* outputs;
  uint32_t n_outputs;
  const enp_attribute_t* attributes;
  uint32_t n_attributes;
} enp_node_t;

typedef struct enp_opset_t {
  const char* domain;
  int64_t version;
} enp_opset_t;

typedef struct enp_kv_t {
  const char* key;
  const char* value;
} enp_kv_t;

/* A whole graph, topologically sorted, shapes inferred by the host.
 * Host-owned; valid for the duration of the call it is passed to. */
typedef struct enp_graph_t {
  uint64_t struct_size;
  const char* name;
  const enp_node_t* nodes;
  uint64_t n_nodes;
  const enp_tensor_t* inputs; /* type-only */
  uint64_t n_inputs;
  const enp_tensor_t* outputs; /* type-only */
  uint64_t n_outputs;
  const enp_tensor_t* initializers; /* with data */
  uint64_t n_initializers;
  const enp_tensor_t* value_infos; /* type-only, every intermediate */
  uint64_t n_value_infos;
  const enp_opset_t* opsets;
  uint64_t n_opsets;
  const enp_kv_t* metadata;
  uint64_t n_metadata;
} enp_graph_t;

/* ------------------------------------------------------------------------ */
/* Host services (sinks copy; see "Ownership" above)                         */
/* ------------------------------------------------------------------------ */

typedef enum enp_log_level_t {
  ENP_LOG_TRACE = 0,
  ENP_LOG_DEBUG = 1,
  ENP_LOG_INFO = 2,
  ENP_LOG_WARN = 3,
  ENP_LOG_ERROR = 4
} enp_log_level_t;

/* Opaque, host-owned handles, valid for the duration of one plugin call. */
typedef struct enp_graph_builder_t enp_graph_builder_t;
typedef struct enp_artifact_writer_t enp_artifact_writer_t;
typedef struct enp_artifact_reader_t enp_artifact_reader_t;
typedef struct enp_tensor_list_t enp_tensor_list_t;
typedef struct enp_support_report_t enp_support_report_t;
typedef struct enp_device_list_t enp_device_list_t;
typedef struct enp_byte_buffer_t enp_byte_buffer_t;

/* A target device of a backend and the core modes it can be compiled for. */
typedef struct enp_device_info_t {
  uint64_t struct_size;
  const char* name;
  const char* description;
  const char* const* core_modes;
  uint32_t n_core_modes;
  const char* default_core_mode;
  const char* source; /* where it was defined (builtin or a file path) */
} enp_device_info_t;

typedef struct enp_host_api_t {
  uint64_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;

  /* Creates a status for the user-facing three-line error:
   *   error: <title>        (a stable phrase; docs/errors.md has an anchor)
   *     where: <where>      (file, node, tensor: what is wrong where)
   *     fix: <fix>          (what the user should do)
   * `see` overrides the "See:" link; NULL derives it from the title.
   * Returns NULL only for ENP_OK. The host frees it. */
  enp_status_t* (*status_new)(enp_status_code_t code, const char* title, const char* where,
                              const char* fix, const char* see);

  /* Logs through the host's logger, tagged with the plugin's name. */
  void (*log)(enp_log_level_t level, const char* plugin_name, const char* message);

  /* Graph builder (frontends, quantizers). Every call copies its
   * arguments. Nodes may be added in any order; the host sorts and checks
   * them when the import returns. */
  enp_status_t* (*graph_set_name)(enp_graph_builder_t* b, const char* name);
  enp_status_t* (*graph_add_input)(enp_graph_builder_t* b, const enp_tensor_t* value);
  enp_status_t* (*graph_add_output)(enp_graph_builder_t* b, const enp_tensor_t* value);
  enp_status_t* (*graph_add_initializer)(enp_graph_builder_t* b, const enp_tensor_t* tensor);
  enp_status_t* (*graph_add_value_info)(enp_graph_builder_t* b, const enp_tensor_t* value);
  enp_status_t* (*graph_add_node)(enp_graph_builder_t* b, const enp_node_t* node);
  enp_status_t* (*graph_set_opset)(enp_graph_builder_t* b, const char* domain, int64_t version);
  enp_status_t* (*graph_set_metadata)(enp_graph_builder_t* b, const char* key, const char* value);

  /* Artifact writer (backend lower): `path` is relative to the artifact
   * root, uses '/' and must not contain ".." or start with '/'.
   * write_tensors stores the tensors as one numpy .npz file. */
  enp_status_t* (*artifact_write_file)(enp_artifact_writer_t* w, const char* path, const void* data,
                                       uint64_t size);
  enp_status_t* (*artifact_write_tensors)(enp_artifact_writer_t* w, const char* path,
                                          const enp_tensor_t* tensors, uint64_t count);

  /* Artifact reader (backend run). Returned memory is host-owned and
   * valid until the plugin call that received the reader returns. */
  enp_status_t* (*artifact_read_file)(enp_artifact_reader_t* r, const char* path, const void** data,
                                      uint64_t* size);
  enp_status_t* (*artifact_read_tensors)(enp_artifact_reader_t* r, const char* path,
                                         const enp_tensor_t** tensors, uint64_t* count);

  /* Output sink (backend run): copies one tensor, data included. */
  enp_status_t* (*tensor_list_add)(enp_tensor_list_t* list, const enp_tensor_t* tensor);

  /* Capability report sink (backend query): one call per node index. */
  enp_status_t* (*support_report_node)(enp_support_report_t* report, uint64_t node_index,
                                       int32_t supported, const char* reason);

  /* Device list sink (backend list_devices). */
  enp_status_t* (*device_list_add)(enp_device_list_t* list, const enp_device_info_t* device);

  /* ABI 1.1. Names the dynamic dimensions of a graph input or output
   * already added (ONNX dim_param: "batch", "seq"), so errors, `inspect`
   * and the IR file show them. names[i] NULL or "" leaves dimension i
   * unnamed; names of fixed dimensions are ignored. */
  enp_status_t* (*graph_set_dim_names)(enp_graph_builder_t* b, const char* value,
                                       const char* const* names, uint32_t rank);

  /* ABI 1.2. The plugin search path: ':'-separated directories in search
   * order (--plugin-dir, EULERNPU_PLUGIN_PATH, the installed directory),
   * where a backend looks for its data files (device descriptors). Valid
   * for as long as the process runs. */
  const char* (*plugin_search_path)(void);

  /* ABI 1.2. Attaches a report to a run (backend run): a JSON object, UTF-8,
   * `size` bytes. The host writes it for `run --report FILE` and prints its
   * "summary" member (a string) on the terminal. One per run; a second call
   * replaces the first. */
  enp_status_t* (*run_report)(enp_tensor_list_t* list, const char* json, uint64_t size);

  /* ABI 1.5. Describes what a lower call built (backend lower): a JSON
   * object, UTF-8, `size` bytes, e.g. {"arena_bytes": 4096}. The host
   * stores it in the artifact's manifest.json as "lowered", and `eulernpu
   * inspect ARTIFACT` shows its members. One per lower call; a second call
   * replaces the first. */
  enp_status_t* (*artifact_set_summary)(enp_artifact_writer_t* w, const char* json, uint64_t size);

  /* ABI 1.6. Attaches the backend's own plan to a capability report
   * (backend query): a JSON object, UTF-8, `size` bytes, such as how it
   * would split the graph between its units. `eulernpu inspect MODEL
   * --backend B` prints its "summary" member (a string) and `--json`
   * includes it whole as "backend_plan". The host asks for it with the
   * option query_plan = "1" (a plan may cost as much as lowering, which
   * other queries do not need). One per query; a second call replaces the
   * first. */
  enp_status_t* (*support_report_plan)(enp_support_report_t* report, const char* json,
                                       uint64_t size);

  /* ABI 1.8. Output sink for a session run (backend session_run), the one
   * exception to "the host copies": the tensor's data stays valid and
   * unchanged until the session's next session_run or session_close (a
   * buffer of the session's own arena), and the host may read it there
   * instead of copying it (calibration reads every value a model computes,
   * and a copy of them cost more than the run). Name and dims are copied.
   * Otherwise the same as tensor_list_add. */
  enp_status_t* (*tensor_list_add_lasting)(enp_tensor_list_t* list, const enp_tensor_t* tensor);

  /* ABI 1.9. Appends `size` bytes to a byte buffer (quantizer
   * session_export); the host copies them. */
  enp_status_t* (*byte_buffer_append)(enp_byte_buffer_t* buffer, const void* data, uint64_t size);
} enp_host_api_t;

/* ------------------------------------------------------------------------ */
/* Plugin descriptors                                                        */
/* ------------------------------------------------------------------------ */

typedef enum enp_plugin_kind_t {
  ENP_PLUGIN_FRONTEND = 1,
  ENP_PLUGIN_QUANTIZER = 2,
  ENP_PLUGIN_BACKEND = 3
} enp_plugin_kind_t;

/* The first member of every plugin descriptor, of every ABI major: this
 * layout never changes, so a host can always read a plugin's name and ABI
 * version and explain why it refuses it. */
typedef struct enp_plugin_header_t {
  uint32_t abi_major;
  uint32_t abi_minor;
  uint32_t kind; /* enp_plugin_kind_t */
  uint32_t reserved;
  const char* name;    /* unique among loaded plugins, [a-z0-9_]+ */
  const char* version; /* the plugin's own version, e.g. "1.2.0" */
  const char* description;
} enp_plugin_header_t;

/* Options passed to a frontend import. */
typedef struct enp_frontend_request_t {
  uint64_t struct_size;
  const char* model_path;
  const enp_tensor_t* weights; /* tensors of --weights, if given */
  uint64_t n_weights;
  const char* weights_path; /* NULL if no --weights */
  const enp_kv_t* options;  /* e.g. "input_shape.NAME" = "1,3,224,224" */
  uint64_t n_options;
} enp_frontend_request_t;

typedef struct enp_frontend_v1_t {
  uint64_t struct_size;
  const char* format;            /* short name shown to users, e.g. "onnx" */
  const char* const* extensions; /* file name endings, e.g. ".onnx" */
  uint32_t n_extensions;
  /* Reads the model and describes it into `out`. Errors name the file and
   * the offending element. */
  enp_status_t* (*import_model)(const enp_frontend_request_t* request, enp_graph_builder_t* out);
} enp_frontend_v1_t;

/* A quantizer's state for one quantization (plugin-owned, opaque). */
typedef struct enp_quant_session_t enp_quant_session_t;

/* A quantizer turns a float graph into an int8 graph from the values the
 * float graph takes on calibration samples. The host drives it:
 *
 *   session_begin(graph, options)          -> session, number of passes P
 *   for pass in 0..P-1:
 *     for every calibration sample, in a fixed order:
 *       session_observe(session, pass, values of that sample)
 *   session_finish(session, builder)       -> the quantized graph
 *   session_end(session)                   (always, also after an error)
 *
 * `values` holds every float32 value of the graph for one sample: the graph
 * inputs, then every node output in node order, each named as in the graph
 * and with data. The quantized graph is written through the same builder
 * functions a frontend uses; the host sorts, shape-checks and saves it.
 * Options are the quantization config as key/value pairs (docs/config.md).
 * Members from session_begin on are ABI 1.2.
 *
 * Sharded calibration (ABI 1.9): a session may instead be fed statistics
 * that other sessions of the same graph and options gathered on their share
 * of the samples. session_export writes what pass `pass` observed so far as
 * bytes; session_import merges such bytes into a session as if it had
 * observed those samples itself, and must give exactly the state (and so
 * the graph) one session observing every sample reaches. Pass p's
 * statistics may depend on passes < p: a session imports every shard's
 * pass 0 before it observes or imports pass 1. Either may be NULL, and a
 * quantizer refuses (ENP_UNIMPLEMENTED) options whose statistics it cannot
 * merge exactly. */
typedef struct enp_quantizer_v1_t {
  uint64_t struct_size;
  const char* const* methods; /* calibration methods */
  uint32_t n_methods;
  enp_status_t* (*session_begin)(const enp_graph_t* graph, const enp_kv_t* options,
                                 uint64_t n_options, enp_quant_session_t** session,
                                 uint32_t* n_passes);
  enp_status_t* (*session_observe)(enp_quant_session_t* session, uint32_t pass,
                                   const enp_tensor_t* values, uint64_t n_values);
  enp_status_t* (*session_finish)(enp_quant_session_t* session, enp_graph_builder_t* out);
  void (*session_end)(enp_quant_session_t* session);
  /* ABI 1.9 (see above). */
  enp_status_t* (*session_export)(enp_quant_session_t* session, uint32_t pass,
                                  enp_byte_buffer_t* out);
  enp_status_t* (*session_import)(enp_quant_session_t* session, uint32_t pass, const void* data,
                                  uint64_t size);
} enp_quantizer_v1_t;

/* A backend's loaded artifact (plugin-owned, opaque; ABI 1.7). */
typedef struct enp_session_t enp_session_t;

/* One op a backend implements. */
typedef struct enp_op_support_t {
  const char* domain; /* "" for ONNX */
  const char* op_type;
  int32_t since_version;   /* first opset it handles */
  int32_t until_version;   /* last opset it handles, 0 = no upper bound */
  uint32_t dtypes;         /* ENP_DTYPE_BIT mask of supported element types */
  const char* constraints; /* human-readable, "" if none */
} enp_op_support_t;

typedef struct enp_backend_v1_t {
  uint64_t struct_size;
  const enp_op_support_t* ops;
  uint64_t n_ops;
  /* Lists target devices into `out`. */
  enp_status_t* (*list_devices)(enp_device_list_t* out);
  /* Reports, for every node of `graph`, whether this backend can lower it
   * and, if not, why. */
  enp_status_t* (*query)(const enp_graph_t* graph, const enp_kv_t* options, uint64_t n_options,
                         enp_support_report_t* out);
  /* Lowers `graph` into artifact files. The host writes the manifest. */
  enp_status_t* (*lower)(const enp_graph_t* graph, const enp_kv_t* options, uint64_t n_options,
                         enp_artifact_writer_t* out);
  /* Runs an artifact this backend lowered on `inputs`; every graph output
   * goes to `outputs`. */
  enp_status_t* (*run)(enp_artifact_reader_t* artifact, const enp_kv_t* options, uint64_t n_options,
                       const enp_tensor_t* inputs, uint64_t n_inputs, enp_tensor_list_t* outputs);
  /* ABI 1.4, may be NULL. Writes a self-contained bundle for the target
   * (sources, plan, weights, build files) from an artifact this backend
   * lowered, one file per write_file call; the host puts the files in
   * place only when the call succeeds. */
  enp_status_t* (*export_bundle)(enp_artifact_reader_t* artifact, const enp_kv_t* options,
                                 uint64_t n_options, enp_artifact_writer_t* out);
  /* ABI 1.7, may be NULL (the host then calls run for every run). An
   * artifact loaded once and run many times (`eulernpu benchmark`):
   * session_open prepares what every run shares (the plan, the weights in
   * the layout the kernels read) under the run options `options`;
   * session_run runs it on `inputs` exactly as run would, report included;
   * session_close frees it (always, also after an error). A backend that
   * keeps no session sets *session to NULL, and the host calls run for
   * every run. The host keeps
   * `artifact` valid until session_close, so a session may keep pointers
   * into the files it read. The option "profile" = "1" asks for per-node
   * times in each run's report: {"nodes": [{"name", "op", "seconds"}]}. */
  enp_status_t* (*session_open)(enp_artifact_reader_t* artifact, const enp_kv_t* options,
                                uint64_t n_options, enp_session_t** session);
  enp_status_t* (*session_run)(enp_session_t* session, const enp_tensor_t* inputs,
                               uint64_t n_inputs, enp_tensor_list_t* outputs);
  void (*session_close)(enp_session_t* session);
} enp_backend_v1_t;

/* The size of ABI 1.0's backend table: the smallest a host accepts. */
#define ENP_BACKEND_V1_0_SIZE (offsetof(enp_backend_v1_t, run) + sizeof(void (*)(void)))

typedef struct enp_plugin_v1_t {
  enp_plugin_header_t header; /* abi_major == 1 */
  uint64_t struct_size;
  /* Called once, right after loading, before anything else. `host` stays
   * valid for as long as the process runs. May be NULL. */
  enp_status_t* (*initialize)(const enp_host_api_t* host);
  /* Exactly one is non-NULL, matching header.kind. */
  const enp_frontend_v1_t* frontend;
  const enp_quantizer_v1_t* quantizer;
  const enp_backend_v1_t* backend;
} enp_plugin_v1_t;

/* The exported entry point: returns a descriptor, alive until the process
 * exits, whose first member is an enp_plugin_header_t. Must not fail and must
 * not touch the host: it runs before the host has checked the ABI major. */
typedef const enp_plugin_header_t* (*enp_plugin_entry_fn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* EULERNPU_SDK_ABI_H_ */
