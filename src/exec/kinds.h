/* The executor kinds, one line each (X-macro; no include guard on purpose): a new kind is its
 * own file defining `const takt__exec_ops_t takt__exec_NAME`, one line here with its enumerator,
 * and one in takt__exec_kind_ops (takt/exec.h). */
TAKT__EXEC_KIND(tide, TAKT_EXEC_TIDE)
TAKT__EXEC_KIND(batch, TAKT_EXEC_BATCH)
TAKT__EXEC_KIND(preempt, TAKT_EXEC_PREEMPT)
TAKT__EXEC_KIND(waitset, TAKT_EXEC_WAITSET)
TAKT__EXEC_KIND(swi, TAKT_EXEC_SWI)
