/* xpsim_ipc_event.h: the state of interprocess events, in memory shared between the processes that hold one (a slot of a per-process memory file). */
#ifndef XPSIM_IPC_EVENT_H
#define XPSIM_IPC_EVENT_H

#include <cuda.h>
#include <stdbool.h>
#include <stdint.h>

/* What names a slot across processes: the file of the process that created
 * the event (/proc/PID/fd/FD, which must still be inode INO), the slot's
 * index in it, and the serial the slot was given for this event (a slot
 * freed and taken by another event has another). */
typedef struct xpsim_ipc_slot_name {
    int32_t pid;
    int32_t fd;
    uint64_t ino;
    uint32_t index;
    uint32_t serial;
} xpsim_ipc_slot_name;

/* One process's reference to a slot: the creating process's own, or a
 * mapping of the creator's page in a process that opened its handle.  The
 * event holds one reference, and so does each queued record or wait of it,
 * so that the slot outlives a destroy that comes before the stream gets
 * there. */
typedef struct xpsim_ipc_ref xpsim_ipc_ref;

/* A slot of this process's file for a new interprocess event; NULL when
 * there is none to be had (no memfd, file size limit, all slots taken): the
 * event then works in this process and cannot be exported. */
xpsim_ipc_ref *xpsim_ipc_ref_new(void);

/* Maps the slot a handle names.  CUDA_ERROR_INVALID_HANDLE when the process,
 * its file or the event is gone or the name is none, CUDA_ERROR_MAP_FAILED
 * or CUDA_ERROR_OUT_OF_MEMORY when this process cannot map it. */
CUresult xpsim_ipc_ref_open(const xpsim_ipc_slot_name *name, xpsim_ipc_ref **out);

void xpsim_ipc_ref_take(xpsim_ipc_ref *ref);
void xpsim_ipc_ref_drop(xpsim_ipc_ref *ref);

/* The creating process destroyed the event: its handle opens nothing from
 * now on, though the records and waits still queued on it (which hold
 * references) finish, and processes that opened it keep what they have. */
void xpsim_ipc_ref_retire(xpsim_ipc_ref *ref);

/* The name to hand out.  CUDA_ERROR_MAP_FAILED when this process's file is
 * no longer at its descriptor (a program that closed it). */
CUresult xpsim_ipc_ref_name(const xpsim_ipc_ref *ref, xpsim_ipc_slot_name *out);

/* A record, by any process: returns its generation, which the stream that
 * reaches it publishes with xpsim_ipc_publish. */
uint32_t xpsim_ipc_issue(xpsim_ipc_ref *ref);
void xpsim_ipc_publish(xpsim_ipc_ref *ref, uint32_t gen);

/* The generation of the latest record so far (0: never recorded). */
uint32_t xpsim_ipc_latest(const xpsim_ipc_ref *ref);

/* Whether record GEN (or a later one) has completed; waiting blocks the
 * calling thread until it has. */
bool xpsim_ipc_done(const xpsim_ipc_ref *ref, uint32_t gen);
void xpsim_ipc_wait(xpsim_ipc_ref *ref, uint32_t gen);

#endif
