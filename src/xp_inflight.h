/* xp_inflight.h: counting recorded calls in flight, so that exit can wait for
 * them or cut them off instead of tearing the journal down under them. */
#ifndef XP_INFLIGHT_H
#define XP_INFLIGHT_H

#include <stdbool.h>
#include <stdint.h>

/* Hook side (xp_scope_*).  A recorded call is counted from its entry
 * (xp_inflight_enter: false when exit has closed the gate; the call is then
 * not recorded and counted as lost) through the real call, to its writing
 * (xp_inflight_returned: false when exit cut it off while the real call ran;
 * it must then write nothing: it was counted as lost), to its end
 * (xp_inflight_leave, after its records are committed). */
bool xp_inflight_enter(void);
bool xp_inflight_returned(void);
void xp_inflight_leave(void);

/* The calling thread's own counted call's phase, for a call from a signal
 * handler that interrupts one: saved before it is counted, and set back
 * after, so that the interrupted call is still known as the thread's own. */
uint8_t xp_inflight_phase(void);
void xp_inflight_set_phase(uint8_t phase);

/* A call not recorded because the session is stopping: counted as lost
 * (until xp_inflight_cut_off has taken its count). */
void xp_inflight_refused(void);

/* Exit side, from the destructor, in this order.  Closes the gate: no call
 * entering from now on is recorded. */
void xp_inflight_close(void);

/* Waits up to wait_ns for the calls in flight to finish (the calling thread's
 * own call, when exit is called from inside one, never will and is not
 * waited for).  Then cuts off the calls still inside the real call and waits
 * (bounded as well) for those already writing their records.  Returns the
 * calls cut off plus the calls refused so far: lost, in flight at exit. */
uint64_t xp_inflight_cut_off(uint64_t wait_ns);

/* In a fork child: only the calling thread exists; its own call, if any,
 * is all that is in flight. */
void xp_inflight_after_fork(void);

#endif
