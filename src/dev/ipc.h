/* Byte streams between gpuvet and its worker processes (the GPU backends'
 * worker, worker.c, and the PyTorch worker, torch.c): whole writes and reads
 * over a socket, and reads that give up after a time limit. */
#ifndef GV_DEV_IPC_H
#define GV_DEV_IPC_H

#include <stddef.h>
#include <sys/types.h>

/* Sends all n bytes (no SIGPIPE). 0, or -1 when the peer is gone. */
int gv_ipc_send_all(int fd, const void *p, size_t n);
/* Receives exactly n bytes. timeout_ms < 0 waits forever; otherwise the
 * limit is for the whole read. 0, -1 (closed or error), -2 (timeout). */
int gv_ipc_recv_all(int fd, void *p, size_t n, int timeout_ms);

/* Kills a worker process (SIGKILL) and waits for it; nothing when pid <= 0. */
void gv_ipc_reap(pid_t pid);

#endif
