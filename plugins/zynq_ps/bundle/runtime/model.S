/* The model's files, linked into eulernpu_run: no file to copy beside it
 * and nothing to look up at run time. CMakeLists.txt puts model/ on the
 * assembler's search path (-Wa,-I), where .incbin finds the files. */
#define EMBED(sym, file)            \
  .section .rodata;                 \
  .balign 64;                       \
  .global sym;                      \
  .type sym, %object;               \
  sym:                              \
  .incbin file;                     \
  .global sym##_end;                \
  .type sym##_end, %object;         \
  sym##_end:                        \
  .byte 0

EMBED(eulernpu_graph_json, "graph.json")
EMBED(eulernpu_plan_json, "plan.json")
EMBED(eulernpu_weights_npz, "weights.npz")

/* No executable stack. */
.section .note.GNU-stack, "", %progbits
