/* The executor kinds, one line each (X-macro; no include guard on purpose): a new kind is its
 * own file defining `const takt__exec_ops_t takt__exec_NAME` and one line here. */
TAKT__EXEC_KIND(tide)
TAKT__EXEC_KIND(batch)
TAKT__EXEC_KIND(preempt)
TAKT__EXEC_KIND(waitset)
TAKT__EXEC_KIND(swi)
